//! Errors for writes of kernel syntax (io.max, io.cost.*, io.weight, …): the
//! errno the kernel's write handler would return, and a human explanation.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    Einval,
    Erange,
    Enodev,
    Eopnotsupp,
}

impl Errno {
    pub fn name(self) -> &'static str {
        match self {
            Errno::Einval => "EINVAL",
            Errno::Erange => "ERANGE",
            Errno::Enodev => "ENODEV",
            Errno::Eopnotsupp => "EOPNOTSUPP",
        }
    }
}

/// A rejected write to a cgroup or sysfs file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError {
    pub errno: Errno,
    pub msg: String,
}

impl KernelError {
    pub fn einval(msg: impl Into<String>) -> KernelError {
        KernelError {
            errno: Errno::Einval,
            msg: msg.into(),
        }
    }
    pub fn erange(msg: impl Into<String>) -> KernelError {
        KernelError {
            errno: Errno::Erange,
            msg: msg.into(),
        }
    }
    pub fn enodev(msg: impl Into<String>) -> KernelError {
        KernelError {
            errno: Errno::Enodev,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.msg, self.errno.name())
    }
}

impl std::error::Error for KernelError {}

/// Split a cgroup file write into its `MAJ:MIN` prefix and the rest, the way
/// `blkg_conf_open_bdev` does: the device must be `MAJ:MIN` (decimal), else EINVAL.
pub fn split_devno(line: &str) -> Result<((u32, u32), &str), KernelError> {
    let t = line.trim_start();
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    let (dev, rest) = t.split_at(end);
    let (maj, min) = dev
        .split_once(':')
        .ok_or_else(|| KernelError::einval(format!("'{dev}' is not a MAJ:MIN device number")))?;
    let maj: u32 = maj
        .parse()
        .map_err(|_| KernelError::einval(format!("'{dev}' is not a MAJ:MIN device number")))?;
    let min: u32 = min
        .parse()
        .map_err(|_| KernelError::einval(format!("'{dev}' is not a MAJ:MIN device number")))?;
    Ok(((maj, min), rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn devno() {
        assert_eq!(split_devno("8:0 riops=100").unwrap(), ((8, 0), "riops=100"));
        assert_eq!(split_devno("  259:3").unwrap(), ((259, 3), ""));
        assert_eq!(split_devno("sda riops=1").unwrap_err().errno, Errno::Einval);
        assert_eq!(split_devno("8:x").unwrap_err().errno, Errno::Einval);
    }
}
