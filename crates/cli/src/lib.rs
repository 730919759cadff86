//! The `blklab` command: scenario files, running and comparing simulations,
//! and formatting their results.

pub mod bench;
pub mod conformance;
pub mod hostcmd;
pub mod iotrack_run;
pub mod kfiles;
pub mod output;
pub mod replay_input;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod span;
