//! The guest protocol: what the host sends (case scripts) and how results
//! come back over the results serial port.
//!
//! Everything on the port is a line; lines may end in "\r\n" (a tty's
//! output processing) and are read as such. Frames, in order:
//!
//! ```text
//! BLKLAB-HELLO v1                          /init opened the port
//! BLKLAB-SETUP-ERROR <text>                a setup step failed (repeatable)
//! BLKLAB-READY uptime_ms=<n>               about to run the first case
//! BLKLAB-CASE-BEGIN <index> <name>         a case started
//! BLKLAB-FILE <index> <kind> <name> <bytes>   kind: stdout | stderr | file
//! <base64 lines>
//! BLKLAB-FILE-END <index> <name>
//! BLKLAB-CASE-END <index> <name> status=<n> timed_out=<0|1> elapsed_ms=<n>
//! BLKLAB-DONE <count>                      every case ran
//! ```
//!
//! Base64 keeps binary output intact; the announced size catches a frame cut
//! short. A case whose END never arrives is reported as unfinished, a case
//! that never began as not run: nothing is dropped silently.

use std::collections::BTreeMap;

use base64::Engine as _;

/// One case for the guest: a busybox sh script run as `sh <script>` in its
/// own working directory, with a time limit in guest (virtual) seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseSpec {
    /// `[A-Za-z0-9._-]`, unique within a boot.
    pub name: String,
    pub script: String,
    pub time_limit_secs: u32,
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseOutcome {
    /// The script exited (status as the shell reports it: 128+N for signal N).
    Exited { status: i32 },
    /// The time limit expired; the script was killed.
    TimedOut,
    /// The case began but its end never arrived (the guest died or was stopped).
    Unfinished { reason: String },
    /// The case never began.
    NotRun { reason: String },
}

/// Everything one case produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub outcome: CaseOutcome,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Files the case left in `$BLKLAB_OUT`, by name.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Guest (virtual) time from start to end of the script.
    pub virtual_elapsed_ms: Option<u64>,
    /// Host wall time from the case's BEGIN to its END frame (approximate:
    /// the results file is polled).
    pub wall_secs: Option<f64>,
    /// Frames that were damaged (sizes that do not match, bad base64).
    pub problems: Vec<String>,
}

impl CaseResult {
    fn new(name: &str, outcome: CaseOutcome) -> Self {
        CaseResult {
            name: name.to_string(),
            outcome,
            stdout: Vec::new(),
            stderr: Vec::new(),
            files: BTreeMap::new(),
            virtual_elapsed_ms: None,
            wall_secs: None,
            problems: Vec::new(),
        }
    }

    /// Exited with status 0 and every frame intact.
    pub fn succeeded(&self) -> bool {
        self.outcome == CaseOutcome::Exited { status: 0 } && self.problems.is_empty()
    }

    /// stdout as text (lossy).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// What the results port held.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// /init opened the port.
    pub hello: bool,
    /// Guest uptime when the first case was about to run.
    pub ready_uptime_ms: Option<u64>,
    pub setup_errors: Vec<String>,
    /// One per expected name, in the expected order.
    pub cases: Vec<CaseResult>,
    /// Every case ran.
    pub done: bool,
    /// Frames that fit no expected case, or lines out of place.
    pub problems: Vec<String>,
}

/// A frame line that marks progress (for timing on the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Ready,
    CaseBegin(usize),
    CaseEnd(usize),
    Done,
}

/// The progress a line marks, if any.
pub fn progress(line: &str) -> Option<Progress> {
    let line = line.trim_end();
    let idx = |rest: &str| rest.split_whitespace().next()?.parse().ok();
    if line.starts_with("BLKLAB-READY") {
        Some(Progress::Ready)
    } else if let Some(r) = line.strip_prefix("BLKLAB-CASE-BEGIN ") {
        idx(r).map(Progress::CaseBegin)
    } else if let Some(r) = line.strip_prefix("BLKLAB-CASE-END ") {
        idx(r).map(Progress::CaseEnd)
    } else if line.starts_with("BLKLAB-DONE") {
        Some(Progress::Done)
    } else {
        None
    }
}

struct OpenFile {
    kind: String,
    name: String,
    size_bytes: usize,
    b64: String,
}

fn decode(f: &OpenFile, complete: bool, problems: &mut Vec<String>) -> Vec<u8> {
    let mut text = f.b64.clone();
    if !complete {
        // Keep the whole 4-character groups that arrived.
        text.truncate(text.len() / 4 * 4);
    }
    let bytes = match base64::engine::general_purpose::STANDARD.decode(&text) {
        Ok(b) => b,
        Err(e) => {
            problems.push(format!("{} '{}': bad base64 ({e})", f.kind, f.name));
            Vec::new()
        }
    };
    if !complete {
        problems.push(format!(
            "{} '{}': cut short after {} of {} bytes",
            f.kind,
            f.name,
            bytes.len(),
            f.size_bytes
        ));
    } else if bytes.len() != f.size_bytes {
        problems.push(format!(
            "{} '{}': {} bytes arrived, {} were announced",
            f.kind,
            f.name,
            bytes.len(),
            f.size_bytes
        ));
    }
    bytes
}

fn store(r: &mut CaseResult, f: &OpenFile, bytes: Vec<u8>) {
    match f.kind.as_str() {
        "stdout" => r.stdout = bytes,
        "stderr" => r.stderr = bytes,
        _ => {
            r.files.insert(f.name.clone(), bytes);
        }
    }
}

fn kv(rest: &str, key: &str) -> Option<i64> {
    rest.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// Parse the results port's bytes against the names of the cases sent.
pub fn parse(bytes: &[u8], expected: &[String]) -> Parsed {
    let text = String::from_utf8_lossy(bytes);
    let mut p = Parsed::default();
    let mut got: BTreeMap<usize, CaseResult> = BTreeMap::new();
    let mut open: Option<usize> = None;
    let mut file: Option<OpenFile> = None;
    let name_ok = |i: usize, n: &str| expected.get(i).is_some_and(|e| e == n);

    // A last line without its newline may be cut anywhere ("status=1" of
    // "status=137"): only base64 is taken from it.
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    for (n, raw) in lines.into_iter().enumerate() {
        let line = raw.trim_end_matches('\r');
        if n == last {
            if let Some(f) = file.as_mut().filter(|_| !line.starts_with("BLKLAB-")) {
                f.b64.push_str(line.trim());
            }
            break;
        }
        if let Some(f) = file.as_mut() {
            if let Some(rest) = line.strip_prefix("BLKLAB-FILE-END ") {
                let f = file.take().expect("open file");
                let mut probs = Vec::new();
                let bytes = decode(&f, true, &mut probs);
                match open.and_then(|i| got.get_mut(&i)) {
                    Some(r) => {
                        r.problems.extend(probs);
                        store(r, &f, bytes);
                    }
                    None => p.problems.push(format!("file end outside a case: {rest}")),
                }
                continue;
            }
            if !line.starts_with("BLKLAB-") {
                f.b64.push_str(line.trim());
                continue;
            }
            // Another frame inside a file: the file was cut short.
            let f = file.take().expect("open file");
            let mut probs = Vec::new();
            let bytes = decode(&f, false, &mut probs);
            if let Some(r) = open.and_then(|i| got.get_mut(&i)) {
                r.problems.extend(probs);
                store(r, &f, bytes);
            }
        }
        if line == "BLKLAB-HELLO v1" {
            p.hello = true;
        } else if let Some(rest) = line.strip_prefix("BLKLAB-SETUP-ERROR ") {
            p.setup_errors.push(rest.to_string());
        } else if let Some(rest) = line.strip_prefix("BLKLAB-READY") {
            p.ready_uptime_ms = kv(rest, "uptime_ms").map(|v| v.max(0) as u64).or(Some(0));
        } else if let Some(rest) = line.strip_prefix("BLKLAB-CASE-BEGIN ") {
            let mut w = rest.split_whitespace();
            match (w.next().and_then(|i| i.parse::<usize>().ok()), w.next()) {
                (Some(i), Some(n)) if name_ok(i, n) => {
                    got.insert(
                        i,
                        CaseResult::new(
                            n,
                            CaseOutcome::Unfinished {
                                reason: "the results stop inside this case".into(),
                            },
                        ),
                    );
                    open = Some(i);
                }
                _ => p.problems.push(format!("unexpected case begin: {rest}")),
            }
        } else if let Some(rest) = line.strip_prefix("BLKLAB-FILE ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            match (w.as_slice(), open) {
                ([i, kind, name, size], Some(o)) if i.parse::<usize>().ok() == Some(o) => {
                    file = Some(OpenFile {
                        kind: kind.to_string(),
                        name: name.to_string(),
                        size_bytes: size.parse().unwrap_or(0),
                        b64: String::new(),
                    });
                }
                _ => p.problems.push(format!("unexpected file frame: {rest}")),
            }
        } else if let Some(rest) = line.strip_prefix("BLKLAB-CASE-END ") {
            let mut w = rest.split_whitespace();
            let i = w.next().and_then(|i| i.parse::<usize>().ok());
            match (i, open, i.and_then(|i| got.get_mut(&i))) {
                (Some(i), Some(o), Some(r)) if i == o => {
                    let status = kv(rest, "status").unwrap_or(-1) as i32;
                    r.outcome = if kv(rest, "timed_out") == Some(1) {
                        CaseOutcome::TimedOut
                    } else {
                        CaseOutcome::Exited { status }
                    };
                    r.virtual_elapsed_ms = kv(rest, "elapsed_ms").map(|v| v.max(0) as u64);
                    open = None;
                }
                _ => p.problems.push(format!("unexpected case end: {rest}")),
            }
        } else if line.starts_with("BLKLAB-DONE") {
            p.done = true;
        }
        // Anything else (noise before HELLO, a blank line) is ignored.
    }
    if let Some(f) = file.take() {
        let mut probs = Vec::new();
        let bytes = decode(&f, false, &mut probs);
        if let Some(r) = open.and_then(|i| got.get_mut(&i)) {
            r.problems.extend(probs);
            store(r, &f, bytes);
        }
    }
    p.cases = expected
        .iter()
        .enumerate()
        .map(|(i, n)| {
            got.remove(&i).unwrap_or_else(|| {
                CaseResult::new(
                    n,
                    CaseOutcome::NotRun {
                        reason: "the guest never started it".into(),
                    },
                )
            })
        })
        .collect();
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(b: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(b)
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn complete() -> String {
        let json = br#"{"jobs":[{"read":{"iops":200.0}}]}"#;
        let trace = b"\x00\x01binary\xfftrace\n";
        format!(
            "noise before hello\r\nBLKLAB-HELLO v1\r\nBLKLAB-SETUP-ERROR insmod bfq: x\r\n\
             BLKLAB-READY uptime_ms=2250\r\n\
             BLKLAB-CASE-BEGIN 0 iomax\r\n\
             BLKLAB-FILE 0 stdout stdout {}\r\n{}\r\nBLKLAB-FILE-END 0 stdout\r\n\
             BLKLAB-FILE 0 stderr stderr 0\r\nBLKLAB-FILE-END 0 stderr\r\n\
             BLKLAB-FILE 0 file trace.txt {}\r\n{}\r\n{}\r\nBLKLAB-FILE-END 0 trace.txt\r\n\
             BLKLAB-CASE-END 0 iomax status=0 timed_out=0 elapsed_ms=5123\r\n\
             BLKLAB-CASE-BEGIN 1 slow\n\
             BLKLAB-FILE 1 stdout stdout 0\nBLKLAB-FILE-END 1 stdout\n\
             BLKLAB-CASE-END 1 slow status=137 timed_out=1 elapsed_ms=1000\n\
             BLKLAB-DONE 2\n",
            json.len(),
            b64(json),
            trace.len(),
            &b64(trace)[..8],
            &b64(trace)[8..],
        )
    }

    #[test]
    fn complete_run() {
        let p = parse(complete().as_bytes(), &names(&["iomax", "slow"]));
        assert!(p.hello && p.done);
        assert_eq!(p.ready_uptime_ms, Some(2250));
        assert_eq!(p.setup_errors, ["insmod bfq: x"]);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let a = &p.cases[0];
        assert!(a.succeeded(), "{a:?}");
        assert_eq!(a.stdout_text(), r#"{"jobs":[{"read":{"iops":200.0}}]}"#);
        assert_eq!(a.files["trace.txt"], b"\x00\x01binary\xfftrace\n");
        assert_eq!(a.virtual_elapsed_ms, Some(5123));
        assert_eq!(p.cases[1].outcome, CaseOutcome::TimedOut);
        assert!(!p.cases[1].succeeded());
    }

    /// Cut the stream anywhere: never a success that did not happen, never
    /// a dropped case.
    #[test]
    fn truncated_anywhere() {
        let full = complete();
        let end0 = full.find("BLKLAB-CASE-END 0").unwrap();
        let end0_line_end = end0 + full[end0..].find('\n').unwrap() + 1;
        for cut in 0..=full.len() {
            let p = parse(&full.as_bytes()[..cut], &names(&["iomax", "slow"]));
            assert_eq!(p.cases.len(), 2);
            let finished0 = cut >= end0_line_end;
            assert_eq!(p.cases[0].succeeded(), finished0, "cut {cut}");
            if !finished0 {
                assert!(matches!(
                    p.cases[0].outcome,
                    CaseOutcome::Unfinished { .. } | CaseOutcome::NotRun { .. }
                ));
            }
            assert_eq!(p.done, cut == full.len(), "cut {cut}");
        }
    }

    #[test]
    fn file_cut_inside_is_flagged_with_what_arrived() {
        let full = complete();
        let at = full.find("BLKLAB-FILE 0 file").unwrap();
        let cut = at + full[at..].find("\r\n").unwrap() + 2 + 8; // first 8 base64 chars
        let p = parse(&full.as_bytes()[..cut], &names(&["iomax", "slow"]));
        let a = &p.cases[0];
        assert!(matches!(a.outcome, CaseOutcome::Unfinished { .. }));
        assert_eq!(a.files["trace.txt"], b"\x00\x01binary\xff"[..6].to_vec());
        assert!(
            a.problems.iter().any(|x| x.contains("cut short")),
            "{:?}",
            a.problems
        );
        assert!(matches!(p.cases[1].outcome, CaseOutcome::NotRun { .. }));
    }

    #[test]
    fn size_mismatch_and_bad_base64_are_problems() {
        let s = "BLKLAB-CASE-BEGIN 0 a\nBLKLAB-FILE 0 stdout stdout 9\naGk=\nBLKLAB-FILE-END 0 stdout\n\
                 BLKLAB-FILE 0 file x 1\n!!!!\nBLKLAB-FILE-END 0 x\n\
                 BLKLAB-CASE-END 0 a status=0 timed_out=0 elapsed_ms=1\n";
        let p = parse(s.as_bytes(), &names(&["a"]));
        let a = &p.cases[0];
        assert_eq!(a.stdout, b"hi");
        assert_eq!(a.problems.len(), 3, "{:?}", a.problems);
        assert!(!a.succeeded());
    }

    #[test]
    fn frames_for_unknown_cases_are_reported_not_trusted() {
        let s = "BLKLAB-CASE-BEGIN 0 other\nBLKLAB-CASE-END 0 other status=0 timed_out=0 elapsed_ms=1\nBLKLAB-CASE-BEGIN 7 a\n";
        let p = parse(s.as_bytes(), &names(&["a"]));
        assert_eq!(p.problems.len(), 3, "{:?}", p.problems);
        assert!(matches!(p.cases[0].outcome, CaseOutcome::NotRun { .. }));
    }

    #[test]
    fn progress_lines() {
        assert_eq!(
            progress("BLKLAB-READY uptime_ms=1\r"),
            Some(Progress::Ready)
        );
        assert_eq!(
            progress("BLKLAB-CASE-BEGIN 3 x"),
            Some(Progress::CaseBegin(3))
        );
        assert_eq!(
            progress("BLKLAB-CASE-END 3 x status=0"),
            Some(Progress::CaseEnd(3))
        );
        assert_eq!(progress("BLKLAB-DONE 4"), Some(Progress::Done));
        assert_eq!(progress("aGk="), None);
    }
}
