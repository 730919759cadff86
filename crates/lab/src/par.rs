//! Independent runs on every core, results in the order of their inputs,
//! so that what is printed does not depend on the thread count (`sweep`'s
//! runs, `compare`'s variants).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Result;

/// The thread count for `jobs` (0 = every core).
pub fn threads(jobs: usize) -> usize {
    if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    }
}

/// `f` on each item on `jobs` threads (0 = every core), each item once;
/// `progress(done, total)` after each. Slot i holds item i's result. After a
/// failure no new item starts, so the slots after it may be None (the
/// caller reports the first failure in item order).
pub fn map_ordered<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: &(dyn Fn(&T) -> Result<R> + Sync),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Option<Result<R>>> {
    let total = items.len();
    let slots: Mutex<Vec<Option<Result<R>>>> = Mutex::new((0..total).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= total || failed.load(Ordering::Relaxed) {
            break;
        }
        let r = f(&items[i]);
        if r.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        slots.lock().expect("no worker panics holding the lock")[i] = Some(r);
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
    };
    std::thread::scope(|s| {
        for _ in 0..threads(jobs).min(total.max(1)) {
            s.spawn(work);
        }
    });
    slots.into_inner().expect("workers joined")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in item order whatever the thread count, and a
    /// failure stops new items from starting.
    #[test]
    fn ordered_and_stops_after_a_failure() {
        let items: Vec<u64> = (0..50).collect();
        for jobs in [1, 2, 7] {
            let out = map_ordered(&items, jobs, &|&x| Ok(x * x), &|_, _| {});
            let got: Vec<u64> = out.into_iter().map(|r| r.unwrap().unwrap()).collect();
            assert_eq!(got, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        let out = map_ordered(
            &items,
            1,
            &|&x| {
                if x == 3 {
                    anyhow::bail!("three")
                } else {
                    Ok(x)
                }
            },
            &|_, _| {},
        );
        assert!(out[3].as_ref().unwrap().is_err());
        assert!(out[4..].iter().all(|s| s.is_none()));
    }
}
