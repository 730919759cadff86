//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log` and the options that shape them), as fio 3.33 names and
//! writes them: the options (`LogOptions`), the file names
//! (`gen_log_name`), the writers (`writer`) and a reader (`reader`).

pub mod reader;
pub mod writer;

pub use crate::options::LogOptions;

/// What a log file holds (the `logtype` part of its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogKind {
    Bw,
    Iops,
    Clat,
    Slat,
    Lat,
    ClatHist,
}

impl LogKind {
    pub fn name(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
            LogKind::Lat => "lat",
            LogKind::ClatHist => "clat_hist",
        }
    }
}

/// fio's `make_log_name`: the prefix given, or the job's name when none.
pub fn make_log_name<'a>(prefix: &'a str, job_name: &'a str) -> &'a str {
    if prefix.is_empty() {
        job_name
    } else {
        prefix
    }
}

/// fio's `gen_log_name`: `PREFIX_TYPE.N.log` per job (N = the job's
/// `thread_number`, 1-based in the fio invocation), `PREFIX_TYPE.log` with
/// `per_job_logs=0` (then every job appends to the same file).
pub fn gen_log_name(prefix: &str, kind: LogKind, thread_number: u32, per_job: bool) -> String {
    if per_job {
        format!("{prefix}_{}.{thread_number}.log", kind.name())
    } else {
        format!("{prefix}_{}.log", kind.name())
    }
}

/// The log files a job writes, in fio's `add_job` order (lat, slat, clat,
/// clat_hist, bw, iops), with the `avg_msec` each is averaged over.
pub fn job_logs(o: &LogOptions, job_name: &str, thread_number: u32) -> Vec<(LogKind, String)> {
    let mut v = Vec::new();
    let mut add = |p: &Option<String>, kinds: &[LogKind]| {
        if let Some(p) = p {
            let pre = make_log_name(p, job_name);
            for &k in kinds {
                v.push((k, gen_log_name(pre, k, thread_number, o.per_job_logs)));
            }
        }
    };
    add(&o.lat, &[LogKind::Lat, LogKind::Slat, LogKind::Clat]);
    add(&o.hist, &[LogKind::ClatHist]);
    add(&o.bw, &[LogKind::Bw]);
    add(&o.iops, &[LogKind::Iops]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_fio_3_33_writes_them() {
        assert_eq!(gen_log_name("a", LogKind::Bw, 1, true), "a_bw.1.log");
        assert_eq!(
            gen_log_name("a", LogKind::ClatHist, 2, true),
            "a_clat_hist.2.log"
        );
        assert_eq!(gen_log_name("c", LogKind::Bw, 2, false), "c_bw.log");
        let o = LogOptions {
            lat: Some(String::new()),
            iops: Some("d".into()),
            ..Default::default()
        };
        let names: Vec<String> = job_logs(&o, "j1", 3).into_iter().map(|x| x.1).collect();
        assert_eq!(
            names,
            [
                "j1_lat.3.log",
                "j1_slat.3.log",
                "j1_clat.3.log",
                "d_iops.3.log"
            ]
        );
    }
}
