//! Errors for writes of kernel syntax (io.max, io.cost.*, io.weight, …): the
//! errno the kernel's write handler would return, and a human explanation.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    Einval,
    Erange,
    Enodev,
    Eopnotsupp,
    /// The file does not exist there (an open fails before any write).
    Enoent,
}

impl Errno {
    pub fn name(self) -> &'static str {
        match self {
            Errno::Einval => "EINVAL",
            Errno::Erange => "ERANGE",
            Errno::Enodev => "ENODEV",
            Errno::Eopnotsupp => "EOPNOTSUPP",
            Errno::Enoent => "ENOENT",
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

/// `msg` without a leading "`file`: ", for a caller that names the file
/// itself (the parsers start their messages with the file name; a message
/// that says "io.max: io.max: ..." helps nobody).
pub fn without_file_prefix<'a>(file: &str, msg: &'a str) -> &'a str {
    msg.strip_prefix(file)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(msg)
}

impl KernelError {
    /// The error as the caller that already named `file` shows it.
    pub fn for_file(&self, file: &str) -> String {
        format!(
            "{} ({})",
            without_file_prefix(file, &self.msg),
            self.errno.name()
        )
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
    #[test]
    fn file_prefix_is_said_once() {
        let e = KernelError::einval("io.max: 'x' is not key=value");
        assert_eq!(e.for_file("io.max"), "'x' is not key=value (EINVAL)");
        assert_eq!(
            e.for_file("io.weight"),
            "io.max: 'x' is not key=value (EINVAL)"
        );
    }
}

/// `kstrtoint(s, 0, &v)`: optional sign, base from the prefix (0x hex, 0
/// octal, else decimal), one trailing newline allowed; -EINVAL for anything
/// else, -ERANGE when the value does not fit an int.
pub fn kstrtoint(s: &str) -> Result<i32, KernelError> {
    let bad = || KernelError::einval(format!("'{}' is not an integer", s.escape_debug()));
    let b = s.as_bytes();
    let (neg, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let radix: u32 = if b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x') | Some(b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            i += 2;
            16
        } else {
            8
        }
    } else {
        10
    };
    let mut val: u64 = 0;
    let mut digits = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i) {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        match val
            .checked_mul(radix as u64)
            .and_then(|x| x.checked_add(d as u64))
        {
            Some(x) => val = x,
            None => overflow = true,
        }
        digits += 1;
        i += 1;
    }
    if digits == 0 {
        return Err(bad());
    }
    if b.get(i) == Some(&b'\n') {
        i += 1;
    }
    if i != b.len() {
        return Err(bad());
    }
    let range = || KernelError::erange(format!("'{}' does not fit in an int", s.trim_end()));
    if overflow {
        return Err(range());
    }
    let v: i64 = if neg {
        if val > i64::MAX as u64 + 1 {
            return Err(range());
        }
        (val as i64).wrapping_neg()
    } else {
        if val > i64::MAX as u64 {
            return Err(range());
        }
        val as i64
    };
    i32::try_from(v).map_err(|_| range())
}
