//! `bfq_limit_depth`'s per-cgroup request limit (`bfqq_request_over_limit`,
//! 76f1df88bbc2, v5.19) and the word depths of async requests.

use super::*;
use crate::block::elevator::Alloc;

fn alloc(op: Op, job: u32, cg: CgId) -> Alloc {
    Alloc {
        op,
        sync: op == Op::Read,
        cg,
        submitter: Submitter::Job(job),
        ioprio: BE4,
    }
}

/// Seed 004's groups, 800:100, on 256 scheduler tags (the loop device's
/// 2 × 128): /test2 alone may take all of them; once /test1 is active its
/// share is round(256 × 100 / 900) = 28 requests, and at 28 its job's next
/// allocation is limited to one bit per bitmap word. Fails before the
/// limit was modelled (`limit_depth` gave None).
#[test]
fn a_group_over_its_weight_share_of_the_tags_gets_depth_one() {
    let (mut h, a, b) = H::seed004_groups();
    const NR: u32 = 256;
    for _ in 0..28 {
        h.read(4, b);
    }
    assert_eq!(
        h.bfq.limit_depth(&alloc(Op::Read, 4, b), NR),
        None,
        "the only active group: its share is every tag"
    );
    h.read(0, a);
    assert_eq!(h.bfq.limit_depth(&alloc(Op::Read, 4, b), NR), Some(1));
    assert_eq!(
        h.bfq.limit_depth(&alloc(Op::Read, 0, a), NR),
        None,
        "/test1 holds 1 of its 228"
    );
    // a process of /test2 without a queue yet is never limited: its first
    // request must reach bfq
    assert_eq!(h.bfq.limit_depth(&alloc(Op::Read, 5, b), NR), None);
    // one request fewer: under the share again
    let r = h.disp().expect("a request to dispatch");
    let was_b = h.cg_of(r) == b;
    h.done(r);
    let expect = if was_b { None } else { Some(1) };
    assert_eq!(h.bfq.limit_depth(&alloc(Op::Read, 4, b), NR), expect);
}

/// Async requests get `word_depths[0][0]`, half a bitmap word (64 bits on
/// 256 tags: 32), and are limited to 1 over their share of that half.
#[test]
fn async_writes_get_half_a_word() {
    let (mut h, a, _b) = H::seed004_groups();
    assert_eq!(h.bfq.limit_depth(&alloc(Op::Write, 0, a), 256), Some(32));
    h.read(0, a);
    assert_eq!(
        h.bfq.limit_depth(&alloc(Op::Write, 0, a), 256),
        Some(32),
        "its async queue does not exist yet"
    );
}
