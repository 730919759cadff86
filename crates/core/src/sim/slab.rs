//! A free-list arena: objects in flight (bios, requests) live here and their
//! slots are reused on completion, so memory follows the number in flight, not
//! the number ever issued. Slot reuse order is deterministic (LIFO).

#[derive(Debug)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Inlined: a bio and a request are built and inserted on every
    /// I/O, and the copy into the slot is then the only one.
    #[inline]
    pub fn insert(&mut self, v: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.items[i as usize];
            debug_assert!(slot.is_none(), "slab: a free slot is taken");
            // a free slot holds None, which needs no drop: write over it
            // without the drop glue's test of what was there
            std::mem::forget(std::mem::replace(slot, Some(v)));
            i
        } else {
            self.items.push(Some(v));
            (self.items.len() - 1) as u32
        }
    }
    pub fn remove(&mut self, i: u32) -> T {
        let v = self.items[i as usize]
            .take()
            .expect("slab: removing a free slot");
        self.free.push(i);
        self.live -= 1;
        v
    }
    /// `remove` for a caller that does not want the object: it is dropped
    /// where it lies, not moved out first.
    pub fn free(&mut self, i: u32) {
        let slot = &mut self.items[i as usize];
        assert!(slot.is_some(), "slab: freeing a free slot");
        *slot = None;
        self.free.push(i);
        self.live -= 1;
    }
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        self.items[i as usize].as_ref().expect("slab: stale id")
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        self.items[i as usize].as_mut().expect("slab: stale id")
    }
    pub fn try_get(&self, i: u32) -> Option<&T> {
        self.items.get(i as usize).and_then(|x| x.as_ref())
    }
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// Slots ever allocated (the high-water mark of objects in flight).
    pub fn capacity_used(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn reuses_slots() {
        let mut s = Slab::default();
        let a = s.insert(1);
        let b = s.insert(2);
        assert_eq!(s.remove(a), 1);
        let c = s.insert(3);
        assert_eq!(c, a);
        assert_eq!(*s.get(b), 2);
        assert_eq!(s.capacity_used(), 2);
        assert_eq!(s.len(), 2);
        s.free(b);
        assert_eq!(s.len(), 1);
        assert_eq!(s.try_get(b), None);
        assert_eq!(s.insert(4), b);
    }
}
