//! /proc/stat's aggregate `cpu` line (fs/proc/stat.c `show_stat`): the
//! ticks (USER_HZ) every CPU together spent in each kind of time since
//! boot. Two readings give how the CPUs spent the time between them: in a
//! QEMU guest (vm/guest_cpu.rs) and on this host around a real run
//! (host_load.rs).

/// The fields after the `cpu` label: user, nice, system, idle, iowait, irq,
/// softirq, steal, guest, guest_nice (older kernels print fewer).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTicks(pub Vec<u64>);

impl CpuTicks {
    /// The line's fields after `cpu`; the error names the field that is
    /// not a count of ticks.
    pub fn parse_fields<'a>(fields: impl Iterator<Item = &'a str>) -> Result<CpuTicks, String> {
        fields
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| format!("\"{v}\": expected ticks"))
            })
            .collect::<Result<_, _>>()
            .map(CpuTicks)
    }

    /// From /proc/stat's text: its `cpu` line, and the number of CPUs (its
    /// `cpuN` lines).
    pub fn from_proc_stat(text: &str) -> Result<(CpuTicks, usize), String> {
        let mut total = None;
        let mut cpus = 0;
        for l in text.lines() {
            let mut w = l.split_whitespace();
            match w.next() {
                Some("cpu") => total = Some(CpuTicks::parse_fields(w)?),
                Some(c) if c.starts_with("cpu") => cpus += 1,
                _ => {}
            }
        }
        let t = total.ok_or("no \"cpu\" line")?;
        if t.0.len() < 7 {
            return Err(format!(
                "the \"cpu\" line has {} fields, expected at least 7",
                t.0.len()
            ));
        }
        Ok((t, cpus))
    }

    /// How the time from `self` to `later` was spent, in percent: user
    /// (+nice), system, irq, softirq, idle (+iowait); steal counts in the
    /// total. None when a reading lacks a field or no tick passed.
    pub fn pct_until(&self, later: &CpuTicks) -> Option<[f64; 5]> {
        let d = |i: usize| -> Option<u64> { Some(later.0.get(i)?.saturating_sub(*self.0.get(i)?)) };
        let (u, ni, sy, id, io, irq, sirq) = (d(0)?, d(1)?, d(2)?, d(3)?, d(4)?, d(5)?, d(6)?);
        let steal = d(7).unwrap_or(0);
        let total = (u + ni + sy + id + io + irq + sirq + steal) as f64;
        if total == 0.0 {
            return None;
        }
        let p = |x: u64| 100.0 * x as f64 / total;
        Some([p(u + ni), p(sy), p(irq), p(sirq), p(id + io)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_readings_give_the_shares_of_the_time_between_them() {
        let a = "cpu  100 0 200 700 0 0 0 0 0 0\ncpu0 50 0 100 350 0 0 0 0 0 0\ncpu1 50 0 100 350 0 0 0 0 0 0\nintr 5\n";
        let b = "cpu  150 0 600 750 0 0 100 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\n";
        let (a, n) = CpuTicks::from_proc_stat(a).unwrap();
        let (b, _) = CpuTicks::from_proc_stat(b).unwrap();
        assert_eq!(n, 2);
        let pct = a.pct_until(&b).unwrap().map(|p| (p * 10.0).round() / 10.0);
        assert_eq!(pct, [8.3, 66.7, 0.0, 16.7, 8.3]);
        assert_eq!(a.pct_until(&a), None, "no tick passed");
        for (bad, want) in [
            ("cpu 1 2 x 4 5 6 7\n", "\"x\": expected ticks"),
            ("cpu0 1 2 3 4 5 6 7\n", "no \"cpu\" line"),
            ("cpu 1 2 3\n", "3 fields, expected at least 7"),
        ] {
            let e = CpuTicks::from_proc_stat(bad).unwrap_err();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }
}
