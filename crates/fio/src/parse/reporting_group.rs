//! fio's reporting groups (`group_reporting`, `stonewall`, `new_group`).

use crate::options::JobSpec;

/// fio's reporting group of each job (`add_job`): a job with `stonewall` or
/// `new_group` starts a new group unless the current one is still empty. All
/// `numjobs` clones of a job share its group.
pub fn assign_groupids(jobs: &[JobSpec]) -> Vec<u32> {
    let mut gid = 0u32;
    let mut members = 0u32;
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        if (j.stonewall || j.new_group) && members > 0 {
            members = 0;
            gid += 1;
        }
        out.push(gid);
        members += j.numjobs.max(1);
    }
    out
}
