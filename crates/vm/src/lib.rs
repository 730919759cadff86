//! blklab-vm: boot stock Debian kernels under QEMU and run cgroup-v2 I/O
//! cases in them (work in progress: the pieces land one commit at a time).

pub mod apt;
pub mod cpio;
pub mod error;
pub mod init_script;
pub mod initramfs;
pub mod kernels;
pub mod kmod;
pub mod protocol;
pub mod tools;

pub use error::VmError;
