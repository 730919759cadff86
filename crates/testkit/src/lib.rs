//! Support shared by the workspace's real-host tests (crates/host/tests,
//! crates/cli/tests, crates/lab/tests): what the host must offer, and a lab
//! of a loop device on a tmpfs file with cgroups for fio, removed on drop.
//! It depends on no blklab crate, so every crate can take it as a
//! dev-dependency.

pub mod fio_json;
pub mod host_lab;
pub mod needs;
pub mod shell;

pub use host_lab::{lab_or_skip, HostLab, LabSpec, Layout};
pub use needs::{missing_basics, missing_v1_blkio};
pub use shell::sh;
