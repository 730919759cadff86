//! Simulated time: integer nanoseconds since the start of the run, and the
//! kernel's jiffies at a configurable HZ.

/// Nanoseconds of simulated time (CLOCK_MONOTONIC in the model).
pub type Ns = u64;

pub const NSEC_PER_USEC: u64 = 1_000;
pub const NSEC_PER_MSEC: u64 = 1_000_000;
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// The kernel tick rate. jiffies advance by one every 1/HZ s; the model keeps
/// jiffies derived from ns so that every controller sees the same clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hz(pub u32);

impl Hz {
    pub fn ns_per_jiffy(self) -> u64 {
        NSEC_PER_SEC / self.0 as u64
    }
    /// `jiffies` at time `t`. The model starts jiffies at 0 (the kernel starts at
    /// INITIAL_JIFFIES; only differences matter to the controllers).
    pub fn jiffies(self, t: Ns) -> u64 {
        t / self.ns_per_jiffy()
    }
    /// The ns instant at which jiffy `j` begins (when a timer armed for `j` fires).
    pub fn jiffy_start(self, j: u64) -> Ns {
        j * self.ns_per_jiffy()
    }
    /// `msecs_to_jiffies` (rounds up).
    pub fn msecs_to_jiffies(self, ms: u64) -> u64 {
        (ms * self.0 as u64).div_ceil(1000)
    }
    /// `nsecs_to_jiffies` (rounds down, as the kernel's helper does).
    pub fn nsecs_to_jiffies(self, ns: u64) -> u64 {
        ns / self.ns_per_jiffy()
    }
    pub fn jiffies_to_ns(self, j: u64) -> Ns {
        j * self.ns_per_jiffy()
    }
}

/// `jiffies` for a caller whose instants mostly fall in the jiffy it asked
/// about last: the divisions only when the jiffy changes.
#[derive(Clone, Copy, Debug)]
pub struct JiffyCache {
    j: u64,
    /// The last jiffy's instants, `[start, end)`; empty before the first.
    start: Ns,
    end: Ns,
}

impl Default for JiffyCache {
    fn default() -> JiffyCache {
        JiffyCache {
            j: 0,
            start: 1,
            end: 0,
        }
    }
}

impl JiffyCache {
    /// `hz.jiffies(t)`.
    #[inline]
    pub fn jiffies(&mut self, hz: Hz, t: Ns) -> u64 {
        if self.start <= t && t < self.end {
            return self.j;
        }
        let j = hz.jiffies(t);
        self.j = j;
        self.start = hz.jiffy_start(j);
        self.end = self.start + hz.ns_per_jiffy();
        j
    }
}

/// Parse a duration like `10s`, `250ms`, `20us`, `1m`, `5000` (with a default unit).
pub fn parse_duration(s: &str, default_unit_ns: u64) -> Result<Ns, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if let Some(rest) = t.strip_prefix('-') {
        if rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(format!(
                "'{}' is negative: a duration is 0 or more",
                s.escape_debug()
            ));
        }
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let mult: u64 = match unit.as_str() {
        "" => default_unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => NSEC_PER_USEC,
        "ms" | "msec" => NSEC_PER_MSEC,
        "s" | "sec" => NSEC_PER_SEC,
        "m" | "min" => 60 * NSEC_PER_SEC,
        "h" => 3600 * NSEC_PER_SEC,
        "d" => 86400 * NSEC_PER_SEC,
        _ => {
            return Err(format!(
                "unknown time unit '{}' in '{}' (expected ns, us, ms, s, m, h or d)",
                unit.escape_debug(),
                s.escape_debug()
            ))
        }
    };
    if num.is_empty() {
        return Err(format!("'{s}' is not a duration"));
    }
    if num.contains('.') {
        let v: f64 = num
            .parse()
            .map_err(|_| format!("'{s}' is not a duration"))?;
        let ns = (v * mult as f64).round();
        // `as u64` would saturate silently
        if !(ns < u64::MAX as f64) {
            return Err(format!("duration '{}' is too large", s.escape_debug()));
        }
        Ok(ns as u64)
    } else {
        let v: u64 = num
            .parse()
            .map_err(|_| format!("'{s}' is not a duration"))?;
        v.checked_mul(mult)
            .ok_or_else(|| format!("duration '{s}' is too large"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn jiffy_cache_agrees() {
        for hz in [Hz(100), Hz(250), Hz(300), Hz(1000)] {
            let mut c = JiffyCache::default();
            for t in [
                0, 1, 3_333_332, 3_333_333, 3_333_334, 9_999_999, 10_000_000, 7, 0,
            ]
            .into_iter()
            .chain((0..2000).map(|i| i * 1_234_567 % 50_000_000))
            {
                assert_eq!(c.jiffies(hz, t), hz.jiffies(t), "{hz:?} {t}");
            }
        }
    }

    #[test]
    fn jiffies() {
        let hz = Hz(250);
        assert_eq!(hz.ns_per_jiffy(), 4_000_000);
        assert_eq!(hz.jiffies(3_999_999), 0);
        assert_eq!(hz.jiffies(4_000_000), 1);
        assert_eq!(hz.msecs_to_jiffies(100), 25);
        assert_eq!(Hz(1000).msecs_to_jiffies(20), 20);
        assert_eq!(hz.msecs_to_jiffies(1), 1);
    }
    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s", 1).unwrap(), 10 * NSEC_PER_SEC);
        assert_eq!(parse_duration("4ms", 1).unwrap(), 4 * NSEC_PER_MSEC);
        assert_eq!(parse_duration("4", NSEC_PER_USEC).unwrap(), 4000);
        assert_eq!(parse_duration("1.5s", 1).unwrap(), 1_500_000_000);
        assert!(parse_duration("10 parsecs", 1).is_err());
        assert!(parse_duration("", 1).is_err());
    }
    #[test]
    fn negative_and_huge_durations_say_so() {
        let e = parse_duration("-5s", 1).unwrap_err();
        assert!(e.contains("negative"), "{e}");
        let e = parse_duration("-0.5", 1).unwrap_err();
        assert!(e.contains("negative"), "{e}");
        let e = parse_duration("99999999999999999999.5s", 1).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = parse_duration("5\u{1b}s", 1).unwrap_err();
        assert!(e.contains("\\u{1b}"), "{e}");
    }
}

/// `time_after(a, b)` / `time_after64`: `a` is later than `b` on a clock
/// (jiffies, vtime) that may wrap.
#[inline]
pub fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

/// `time_before(a, b)` / `time_before64`.
#[inline]
pub fn time_before(a: u64, b: u64) -> bool {
    time_after(b, a)
}
