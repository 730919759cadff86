//! blklab's laboratory as a library: load and check scenario files, run and
//! compare simulations, and format their results (fio JSON/text, the summary
//! table, the iotrack report). The `blklab` binary is argument parsing and
//! printing around this crate; bindings use it the same way.

pub mod compare;
pub mod fio_logs;
pub mod iotrack_run;
pub mod kfiles;
pub mod limits;
pub mod observe;
pub mod output;
pub mod overrides;
pub mod par;
pub mod phase_report;
pub mod phases;
pub mod replay_input;
pub mod report;
pub mod report_html;
pub mod runner;
pub mod scenario;
pub mod set_doc;
pub mod span;
pub mod sweep;
pub mod timed_writes;
pub mod timeseries;
pub mod trace_file;
pub mod tune;
