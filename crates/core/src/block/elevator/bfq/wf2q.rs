//! B-WF2Q+ (block/bfq-wf2q.c): the hierarchical service trees of BFQ.
//!
//! Every group has a `bfq_sched_data` with one service tree per I/O-priority
//! class (RT, BE, IDLE). A service tree holds the *active* entities (queues
//! or child groups with pending work) ordered by virtual finish time, and the
//! *idle* entities, which were deactivated before the tree's virtual time
//! reached their finish time and still count in the tree's weight sum. An
//! entity is *eligible* when its virtual start time is not after the tree's
//! virtual time; the next entity to serve is the eligible one with the
//! smallest finish time. Virtual time advances by `service / wsum`
//! (`bfq_bfqq_served`), and jumps to the smallest start time when no active
//! entity is eligible (`bfq_calc_vtime_jump`).
//!
//! Times are the kernel's fixed point: `delta = (service << 22) / weight`
//! (`WFQ_SERVICE_SHIFT`, `bfq_delta`). Service is in sectors.
//!
//! Simplifications (docs/fidelity/bfq.md): the kernel keeps `next_in_service`
//! of every level up to date incrementally and an augmented rb-tree with the
//! minimum start time of every subtree; here the eligible entity is found by
//! walking the active tree in finish order when a queue is to be selected
//! (the trees hold a handful of entities), and a group's budget is the
//! budget of its best child at the time the group is (re)queued.

use std::collections::BTreeMap;

use crate::sim::time::time_before;

/// `WFQ_SERVICE_SHIFT`
pub const WFQ_SERVICE_SHIFT: u32 = 22;
/// RT, BE, IDLE: `BFQ_IOPRIO_CLASSES`.
pub const CLASSES: usize = 3;
/// The class index of groups (group entities are always best effort).
pub const CLASS_BE: usize = 1;
pub const CLASS_IDLE: usize = 2;

/// Index of a group's scheduling data (0 = the root group).
pub type GId = u32;
/// Index of an entity.
pub type EntId = u32;

/// What an entity schedules: a leaf queue (by the owner's queue index) or a
/// child group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Queue(u32),
    Group(GId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tree {
    None,
    Active,
    Idle,
}

/// `struct bfq_entity`
#[derive(Clone, Debug)]
pub struct Entity {
    pub owner: Owner,
    /// The group whose service trees hold this entity (`entity->sched_data`).
    pub parent: GId,
    pub weight: u32,
    /// Weight to apply at the next (re)activation (`new_weight` +
    /// `prio_changed`).
    pub new_weight: u32,
    pub class: usize,
    pub new_class: usize,
    /// Sectors the entity may receive in this service slot.
    pub budget: u64,
    /// Sectors received since it was last (re)queued.
    pub service: u64,
    pub start: u64,
    pub finish: u64,
    pub tree: Tree,
    /// Counted in its tree's `wsum` (`on_st_or_in_serv`).
    pub on_st: bool,
    pub in_service: bool,
    /// Requests of this queue, or of the queues below this group, inserted
    /// and not yet finished (`entity->allocated`; [`super::limit`]).
    pub allocated: u32,
    /// Insertion order among equal finish times (equal keys go right in
    /// the kernel's rb-tree).
    seq: u64,
    /// The key the entity is filed under in its tree (finish, seq).
    key: (u64, u64),
}

/// `struct bfq_service_tree`
#[derive(Clone, Debug, Default)]
pub struct ServiceTree {
    active: BTreeMap<(u64, u64), EntId>,
    idle: BTreeMap<(u64, u64), EntId>,
    pub vtime: u64,
    pub wsum: u64,
}

/// `struct bfq_sched_data`
#[derive(Clone, Debug)]
pub struct SchedData {
    pub st: [ServiceTree; CLASSES],
    pub in_service: Option<EntId>,
    /// The entity of the group this scheduling data belongs to (None for
    /// the root group).
    pub my_entity: Option<EntId>,
    /// `bfq_class_idle_last_service`, jiffies.
    pub class_idle_last_service: u64,
}

/// `bfq_delta`: virtual time for `service` at `weight`.
pub fn delta(service: u64, weight: u64) -> u64 {
    (service << WFQ_SERVICE_SHIFT) / weight.max(1)
}

/// The entities and the service trees of one device.
#[derive(Clone, Debug)]
pub struct Wf2q {
    pub ents: Vec<Entity>,
    pub sds: Vec<SchedData>,
    seq: u64,
    /// `BFQ_CL_IDLE_TIMEOUT` in jiffies (HZ/5).
    pub idle_class_timeout: u64,
    /// `bfqd->active_list`, the queues (by index) on an active tree, the
    /// one filed last first: `bfq_active_insert` puts a queue at the head
    /// (`list_add`) each time it enters an active tree, at its activation
    /// and at every requeue (the end of its slot with requests left, a
    /// budget changed by `bfq_updated_next_req`); `bfq_active_extract`
    /// takes it off (deactivation, and the selection for service, so the
    /// queue in service is not on it). `bfq_choose_bfqq_for_injection`
    /// scans it from the head (docs/fidelity/bfq-lowmode.md).
    active_list: Vec<u32>,
}

impl Wf2q {
    /// A root group and nothing else.
    pub fn new(idle_class_timeout: u64) -> Wf2q {
        let mut w = Wf2q {
            ents: Vec::new(),
            sds: Vec::new(),
            seq: 0,
            idle_class_timeout,
            active_list: Vec::new(),
        };
        w.new_sched(None);
        w
    }

    fn new_sched(&mut self, my_entity: Option<EntId>) -> GId {
        self.sds.push(SchedData {
            st: Default::default(),
            in_service: None,
            my_entity,
            class_idle_last_service: 0,
        });
        (self.sds.len() - 1) as GId
    }

    fn new_entity(&mut self, owner: Owner, parent: GId, weight: u32, class: usize) -> EntId {
        self.ents.push(Entity {
            owner,
            parent,
            weight,
            new_weight: weight,
            class,
            new_class: class,
            budget: 0,
            service: 0,
            start: 0,
            finish: 0,
            tree: Tree::None,
            on_st: false,
            in_service: false,
            allocated: 0,
            seq: 0,
            key: (0, 0),
        });
        (self.ents.len() - 1) as EntId
    }

    /// A child group of `parent` with `weight` (`bfq_pd_init` +
    /// `bfq_group_set_parent`): its entity and its scheduling data.
    pub fn add_group(&mut self, parent: GId, weight: u32) -> GId {
        let g = self.sds.len() as GId;
        let e = self.new_entity(Owner::Group(g), parent, weight, CLASS_BE);
        let gid = self.new_sched(Some(e));
        debug_assert_eq!(gid, g);
        g
    }

    /// A queue's entity in group `parent` (`bfq_init_entity`).
    pub fn add_queue(&mut self, q: u32, parent: GId, weight: u32, class: usize) -> EntId {
        self.new_entity(Owner::Queue(q), parent, weight, class)
    }

    /// The entity of group `g` (None for the root).
    pub fn group_entity(&self, g: GId) -> Option<EntId> {
        self.sds[g as usize].my_entity
    }

    fn tree_of(&mut self, e: EntId) -> &mut ServiceTree {
        let en = &self.ents[e as usize];
        let (p, c) = (en.parent, en.class);
        &mut self.sds[p as usize].st[c]
    }

    /// File the entity under its finish time in its tree's active or idle
    /// part (`bfq_active_insert`, `bfq_idle_insert`).
    fn file_under(&mut self, e: EntId, tree: Tree) {
        self.seq += 1;
        let seq = self.seq;
        let en = &mut self.ents[e as usize];
        en.seq = seq;
        en.tree = tree;
        let key = (en.finish, seq);
        en.key = key;
        let st = self.tree_of(e);
        match tree {
            Tree::Active => st.active.insert(key, e),
            Tree::Idle => st.idle.insert(key, e),
            Tree::None => None,
        };
    }

    /// `bfq_active_insert`: into the active tree, and a queue to the head
    /// of the active list.
    fn active_insert(&mut self, e: EntId) {
        self.file_under(e, Tree::Active);
        if let Owner::Queue(q) = self.ents[e as usize].owner {
            self.active_list.insert(0, q);
        }
    }

    /// The queues on an active tree, the one filed last first
    /// (`bfqd->active_list`, in the order injection scans it).
    pub fn active_list(&self) -> &[u32] {
        &self.active_list
    }

    /// Off its tree (`bfq_active_extract`, which also takes a queue off
    /// the active list, or `bfq_idle_extract`).
    fn extract(&mut self, e: EntId) {
        let en = &self.ents[e as usize];
        let key = en.key;
        let tree = en.tree;
        if let (Tree::Active, Owner::Queue(q)) = (tree, en.owner) {
            self.active_list.retain(|&x| x != q);
        }
        let st = self.tree_of(e);
        match tree {
            Tree::Active => {
                st.active.remove(&key);
            }
            Tree::Idle => {
                st.idle.remove(&key);
            }
            Tree::None => {}
        }
        self.ents[e as usize].tree = Tree::None;
    }

    fn idle_insert(&mut self, e: EntId) {
        self.file_under(e, Tree::Idle);
    }

    /// `bfq_forget_entity`: off the tree's weight sum.
    fn forget(&mut self, e: EntId) {
        let w = self.ents[e as usize].weight as u64;
        self.ents[e as usize].on_st = false;
        let st = self.tree_of(e);
        st.wsum -= w;
    }

    /// `bfq_forget_idle`: drop idle entities the virtual time has passed;
    /// with no active entity, the whole idle tree.
    fn forget_idle(&mut self, g: GId, c: usize) {
        let st = &mut self.sds[g as usize].st[c];
        if st.active.is_empty() {
            if let Some((&(f, _), _)) = st.idle.iter().next_back() {
                if f <= st.vtime {
                    st.vtime = f;
                }
            }
        }
        let first = st
            .idle
            .iter()
            .next()
            .filter(|(&(f, _), _)| f <= st.vtime)
            .map(|(_, &e)| e);
        if let Some(e) = first {
            self.extract(e);
            self.forget(e);
        }
    }

    /// `__bfq_entity_update_weight_prio`: apply a pending weight or class
    /// change as the entity is (re)queued.
    fn update_weight_prio(&mut self, e: EntId) {
        let en = &self.ents[e as usize];
        if en.new_weight == en.weight && en.new_class == en.class {
            return;
        }
        let (ow, nw, nc, on_st) = (en.weight as u64, en.new_weight, en.new_class, en.on_st);
        if on_st {
            self.tree_of(e).wsum -= ow;
        }
        let en = &mut self.ents[e as usize];
        en.weight = nw;
        en.class = nc;
        if on_st {
            let w = nw as u64;
            self.tree_of(e).wsum += w;
        }
    }

    /// `bfq_update_fin_time_enqueue`: finish = start + budget/weight, then
    /// into the active tree.
    fn fin_time_enqueue(&mut self, e: EntId) {
        self.update_weight_prio(e);
        let en = &mut self.ents[e as usize];
        en.finish = en.start + delta(en.budget, en.weight as u64);
        self.active_insert(e);
    }

    /// `__bfq_activate_entity` for an entity that is neither active nor in
    /// service.
    fn activate_one(&mut self, e: EntId) {
        let vtime = self.tree_of(e).vtime;
        let en = &self.ents[e as usize];
        if en.tree == Tree::Idle {
            let finish = en.finish;
            self.extract(e);
            self.ents[e as usize].start = vtime.max(finish);
        } else if !en.on_st {
            let w = en.weight as u64;
            self.ents[e as usize].start = vtime;
            self.ents[e as usize].on_st = true;
            self.tree_of(e).wsum += w;
        }
        self.ents[e as usize].service = 0;
        self.fin_time_enqueue(e);
    }

    /// `__bfq_requeue_entity` for an active entity that is not in service
    /// and whose budget changed: same start, new finish.
    fn reposition(&mut self, e: EntId) {
        self.extract(e);
        self.fin_time_enqueue(e);
    }

    /// `bfq_activate_bfqq` -> `bfq_activate_requeue_entity`: a queue got
    /// work; it and every inactive ancestor become active. An active
    /// ancestor whose best child changed budget is repositioned.
    pub fn activate(&mut self, e: EntId, budget: u64) {
        self.ents[e as usize].budget = budget;
        let mut cur = e;
        loop {
            let en = &self.ents[cur as usize];
            if en.in_service {
                return;
            }
            if en.tree == Tree::Active {
                if cur != e {
                    let g = match en.owner {
                        Owner::Group(g) => g,
                        Owner::Queue(_) => unreachable!(),
                    };
                    let b = self.peek_budget(g);
                    if b != self.ents[cur as usize].budget {
                        self.ents[cur as usize].budget = b;
                        self.reposition(cur);
                    }
                } else {
                    self.reposition(cur);
                }
                return;
            }
            if cur != e {
                let g = match en.owner {
                    Owner::Group(g) => g,
                    Owner::Queue(_) => unreachable!(),
                };
                let b = self.peek_budget(g);
                self.ents[cur as usize].budget = b;
            }
            self.activate_one(cur);
            let parent = self.ents[cur as usize].parent;
            match self.sds[parent as usize].my_entity {
                Some(pe) => cur = pe,
                None => return,
            }
        }
    }

    /// The budget of the entity group `g` would serve next (what the
    /// kernel copies into the group's entity, `bfq_update_parent_budget`).
    fn peek_budget(&self, g: GId) -> u64 {
        for c in 0..CLASSES {
            if let Some(e) = self.first_eligible(g, c) {
                return self.ents[e as usize].budget;
            }
        }
        0
    }

    /// `bfq_first_active_entity` after `bfq_calc_vtime_jump`: the eligible
    /// entity with the smallest finish time, at the virtual time the tree
    /// would jump to.
    fn first_eligible(&self, g: GId, c: usize) -> Option<EntId> {
        let st = &self.sds[g as usize].st[c];
        let min_start = st
            .active
            .values()
            .map(|&e| self.ents[e as usize].start)
            .min()?;
        let vt = st.vtime.max(min_start);
        st.active
            .values()
            .copied()
            .find(|&e| self.ents[e as usize].start <= vt)
    }

    /// `bfq_lookup_next_entity` for one level: RT before BE before IDLE,
    /// except that an IDLE-class entity is served if the class has waited
    /// `BFQ_CL_IDLE_TIMEOUT`. Commits the virtual-time jump.
    fn lookup_next(&mut self, g: GId, jiffies: u64) -> Option<EntId> {
        let mut first_class = 0;
        let sd = &mut self.sds[g as usize];
        if time_before(
            sd.class_idle_last_service
                .wrapping_add(self.idle_class_timeout),
            jiffies,
        ) {
            if !sd.st[CLASS_IDLE].active.is_empty() {
                first_class = CLASS_IDLE;
            }
            sd.class_idle_last_service = jiffies;
        }
        for c in (first_class..CLASSES).chain(0..first_class) {
            if let Some(e) = self.first_eligible(g, c) {
                let start = self.ents[e as usize].start;
                let st = &mut self.sds[g as usize].st[c];
                if start > st.vtime {
                    st.vtime = start;
                    self.forget_idle(g, c);
                }
                if c == CLASS_IDLE {
                    self.sds[g as usize].class_idle_last_service = jiffies;
                }
                return Some(e);
            }
        }
        None
    }

    /// Whether any entity is active at the root level (the kernel's
    /// `next_in_service` of the root being set).
    pub fn root_has_next(&self) -> bool {
        self.sds[0].st.iter().any(|st| !st.active.is_empty())
    }

    /// `bfq_get_next_queue`: walk down from the root choosing the next
    /// entity at each level; the chosen entities are put in service and
    /// taken off their active trees. Returns the leaf queue's entity.
    pub fn select(&mut self, jiffies: u64) -> Option<EntId> {
        let mut g: GId = 0;
        loop {
            let e = self.lookup_next(g, jiffies)?;
            self.extract(e);
            let en = &mut self.ents[e as usize];
            en.in_service = true;
            self.sds[g as usize].in_service = Some(e);
            match self.ents[e as usize].owner {
                Owner::Queue(_) => return Some(e),
                Owner::Group(child) => g = child,
            }
        }
    }

    /// `bfq_bfqq_served`: charge `served` sectors to the entity and its
    /// ancestors, advancing each tree's virtual time by served/wsum.
    pub fn served(&mut self, e: EntId, served: u64) {
        let mut cur = Some(e);
        while let Some(x) = cur {
            self.ents[x as usize].service += served;
            let (p, c) = {
                let en = &self.ents[x as usize];
                (en.parent, en.class)
            };
            let st = &mut self.sds[p as usize].st[c];
            st.vtime += delta(served, st.wsum);
            self.forget_idle(p, c);
            cur = self.sds[p as usize].my_entity;
        }
    }

    /// End of the in-service slot of leaf `e` (`__bfq_bfqq_expire`): with
    /// `new_budget` Some, the queue still has work and is requeued with it
    /// (`bfq_requeue_bfqq`); with None it is deactivated
    /// (`bfq_deactivate_bfqq`, into the idle tree if its finish time is
    /// still ahead of the virtual time). Ancestors follow: a group with
    /// other active children is requeued with the budget of the next one,
    /// an empty group is deactivated.
    pub fn expire(&mut self, e: EntId, new_budget: Option<u64>) {
        let mut cur = e;
        let mut busy = new_budget.is_some();
        loop {
            let (p, svc) = {
                let en = &self.ents[cur as usize];
                (en.parent, en.service)
            };
            let was_in_service = self.ents[cur as usize].in_service;
            self.ents[cur as usize].in_service = false;
            if self.sds[p as usize].in_service == Some(cur) {
                self.sds[p as usize].in_service = None;
            }
            // bfq_calc_finish(entity, entity->service)
            {
                let en = &mut self.ents[cur as usize];
                en.finish = en.start + delta(svc, en.weight as u64);
            }
            if busy {
                let b = if cur == e {
                    new_budget.unwrap_or(0)
                } else {
                    match self.ents[cur as usize].owner {
                        Owner::Group(g) => self.peek_budget(g),
                        Owner::Queue(_) => unreachable!(),
                    }
                };
                if was_in_service {
                    let en = &mut self.ents[cur as usize];
                    en.start = en.finish;
                    en.service = 0;
                    en.budget = b;
                    self.extract(cur);
                    self.fin_time_enqueue(cur);
                } else {
                    self.ents[cur as usize].budget = b;
                    self.reposition(cur);
                }
            } else {
                self.deactivate_one(cur);
            }
            let Some(pe) = self.sds[p as usize].my_entity else {
                return;
            };
            // The parent stays busy if it still has active children.
            busy = self.sds[p as usize]
                .st
                .iter()
                .any(|st| !st.active.is_empty());
            if !busy
                && !self.ents[pe as usize].in_service
                && self.ents[pe as usize].tree != Tree::Active
            {
                return;
            }
            if busy && !self.ents[pe as usize].in_service {
                // An active, not-in-service parent: only its budget may change.
                let g = match self.ents[pe as usize].owner {
                    Owner::Group(g) => g,
                    Owner::Queue(_) => unreachable!(),
                };
                let b = self.peek_budget(g);
                if b != self.ents[pe as usize].budget {
                    self.ents[pe as usize].budget = b;
                    self.reposition(pe);
                }
                return;
            }
            cur = pe;
        }
    }

    /// `__bfq_deactivate_entity(entity, ins_into_idle_tree = true)`.
    fn deactivate_one(&mut self, e: EntId) {
        self.extract(e);
        let (finish, vtime) = {
            let en = &self.ents[e as usize];
            let st = &self.sds[en.parent as usize].st[en.class];
            (en.finish, st.vtime)
        };
        self.ents[e as usize].service = 0;
        if finish > vtime {
            self.idle_insert(e);
        } else if self.ents[e as usize].on_st {
            self.forget(e);
        }
    }

    /// A queue that is not in service ran out of requests
    /// (`bfq_del_bfqq_busy` without expiration, e.g. after injection):
    /// deactivate it and every ancestor left without active children.
    pub fn deactivate(&mut self, e: EntId) {
        debug_assert!(!self.ents[e as usize].in_service);
        let mut cur = e;
        loop {
            {
                let en = &mut self.ents[cur as usize];
                en.finish = en.start + delta(en.service, en.weight as u64);
            }
            self.deactivate_one(cur);
            let p = self.ents[cur as usize].parent;
            let Some(pe) = self.sds[p as usize].my_entity else {
                return;
            };
            let busy = self.sds[p as usize]
                .st
                .iter()
                .any(|st| !st.active.is_empty());
            if busy || self.ents[pe as usize].in_service {
                return;
            }
            cur = pe;
        }
    }

    /// `bfq_requeue_bfqq` for a queue that is active but not in service
    /// and whose budget changed (`bfq_updated_next_req`).
    pub fn set_budget(&mut self, e: EntId, budget: u64) {
        let en = &self.ents[e as usize];
        if en.in_service || en.tree != Tree::Active || en.budget == budget {
            return;
        }
        self.ents[e as usize].budget = budget;
        self.reposition(e);
    }

    /// The budget left to the entity (`bfq_bfqq_budget_left`).
    pub fn budget_left(&self, e: EntId) -> u64 {
        let en = &self.ents[e as usize];
        en.budget.saturating_sub(en.service)
    }

    /// Ancestor groups of a queue's entity, nearest first, root excluded.
    pub fn parent_groups(&self, e: EntId) -> impl Iterator<Item = GId> + '_ {
        let mut g = Some(self.ents[e as usize].parent);
        std::iter::from_fn(move || {
            let cur = g?;
            if cur == 0 {
                return None;
            }
            g = self.sds[cur as usize]
                .my_entity
                .map(|pe| self.ents[pe as usize].parent);
            Some(cur)
        })
    }
}
