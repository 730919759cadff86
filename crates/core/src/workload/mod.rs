//! User space: the fio job loop and recorded-I/O replay. A workload reaches
//! the kernel only through the system calls it makes.

pub(crate) mod fio_job;
pub mod replay;
