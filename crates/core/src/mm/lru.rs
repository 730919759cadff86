//! Intrusive doubly linked lists over the page array: the inactive and active
//! file LRU lists (`lruvec->lists[LRU_INACTIVE_FILE]`, `[LRU_ACTIVE_FILE]`).
//! New and rotated pages go to the head, reclaim and deactivation take from
//! the tail, as `lruvec_add_folio` / `lruvec_add_folio_tail` do.

use super::{Page, PageId, NO_PAGE};

/// Which list a page is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lru {
    None,
    Inactive,
    Active,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct List {
    pub head: PageId,
    pub tail: PageId,
    pub len: u64,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NO_PAGE,
            tail: NO_PAGE,
            len: 0,
        }
    }
}

impl List {
    pub fn push_head(&mut self, pages: &mut [Page], p: PageId) {
        let old = self.head;
        {
            let pg = &mut pages[p as usize];
            pg.prev = NO_PAGE;
            pg.next = old;
        }
        if old != NO_PAGE {
            pages[old as usize].prev = p;
        } else {
            self.tail = p;
        }
        self.head = p;
        self.len += 1;
    }

    pub fn push_tail(&mut self, pages: &mut [Page], p: PageId) {
        let old = self.tail;
        {
            let pg = &mut pages[p as usize];
            pg.next = NO_PAGE;
            pg.prev = old;
        }
        if old != NO_PAGE {
            pages[old as usize].next = p;
        } else {
            self.head = p;
        }
        self.tail = p;
        self.len += 1;
    }

    pub fn unlink(&mut self, pages: &mut [Page], p: PageId) {
        let (prev, next) = {
            let pg = &pages[p as usize];
            (pg.prev, pg.next)
        };
        if prev != NO_PAGE {
            pages[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NO_PAGE {
            pages[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        let pg = &mut pages[p as usize];
        pg.prev = NO_PAGE;
        pg.next = NO_PAGE;
        self.len -= 1;
    }
}
