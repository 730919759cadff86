//! A job's free io_us (fio's `io_u_freelist`, taken last-in first-out) and
//! its completed ones waiting for a reap (in completion order), threaded
//! through the io_us themselves. Not fio's layout (its lists are arrays of
//! pointers): the simulator's own speed. With a thousand jobs each list's
//! own buffer was a cache miss on every issue, completion and reap; the io_u
//! a list hands over or takes back is read or written at that moment anyway.
//! An io_u is on at most one list, so one link field serves both.

use super::IoU;

/// Last in, first out: `pop` returns the io_u `push`ed last.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IoUStack {
    head: u32,
    len: u32,
}

impl IoUStack {
    pub fn push(&mut self, io_us: &mut [IoU], n: u32) {
        io_us[n as usize].link = link(self.head);
        self.head = n;
        self.len += 1;
    }

    pub fn pop(&mut self, io_us: &[IoU]) -> Option<u32> {
        take_head(&mut self.head, &mut self.len, io_us)
    }
}

/// First in, first out.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IoUQueue {
    head: u32,
    tail: u32,
    len: u32,
}

impl IoUQueue {
    pub fn push_back(&mut self, io_us: &mut [IoU], n: u32) {
        if self.len == 0 {
            self.head = n;
        } else {
            io_us[self.tail as usize].link = link(n);
        }
        self.tail = n;
        self.len += 1;
    }

    pub fn pop_front(&mut self, io_us: &[IoU]) -> Option<u32> {
        take_head(&mut self.head, &mut self.len, io_us)
    }

    pub fn front(&self) -> Option<u32> {
        (self.len > 0).then_some(self.head)
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Both lists give out their head: the io_u it names, whose link names
/// the next (meaningless once the list is empty, as `len` then says).
fn take_head(head: &mut u32, len: &mut u32, io_us: &[IoU]) -> Option<u32> {
    if *len == 0 {
        return None;
    }
    let n = *head;
    *len -= 1;
    *head = io_us[n as usize].link as u32;
    Some(n)
}

/// An io_u index as a link: `Job::new` refuses more io_us than fio's
/// maximum iodepth (65536), so every index fits.
fn link(n: u32) -> u16 {
    debug_assert!(n <= u16::MAX as u32, "io_u index {n} beyond a link");
    n as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The threaded lists hand io_us out in the order a `Vec` stack and a
    /// `VecDeque` would, through any mix of moves between them.
    #[test]
    fn same_order_as_vec_and_vecdeque() {
        let depth = 37u32;
        let mut io_us = vec![IoU::default(); depth as usize];
        let (mut free, mut done) = (IoUStack::default(), IoUQueue::default());
        let mut free_ref: Vec<u32> = (0..depth).rev().collect();
        let mut done_ref: VecDeque<u32> = VecDeque::new();
        for n in (0..depth).rev() {
            free.push(&mut io_us, n);
        }
        let mut in_flight: Vec<u32> = Vec::new();
        let mut x: u64 = 99;
        for step in 0..50_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (x >> 33) % 3 {
                0 => {
                    let got = free.pop(&io_us);
                    assert_eq!(got, free_ref.pop(), "step {step}");
                    in_flight.extend(got);
                }
                1 if !in_flight.is_empty() => {
                    let i = (x >> 40) as usize % in_flight.len();
                    let n = in_flight.swap_remove(i);
                    done.push_back(&mut io_us, n);
                    done_ref.push_back(n);
                }
                _ => {
                    assert_eq!(done.front(), done_ref.front().copied());
                    let got = done.pop_front(&io_us);
                    assert_eq!(got, done_ref.pop_front(), "step {step}");
                    if let Some(n) = got {
                        free.push(&mut io_us, n);
                        free_ref.push(n);
                    }
                }
            }
            assert_eq!(done.len(), done_ref.len());
        }
    }
}
