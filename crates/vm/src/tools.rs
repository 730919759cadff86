//! Host programs blklab-vm uses, and the Debian packages that provide them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Result, VmError};

/// A host program and the Debian package that provides it.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub name: &'static str,
    pub package: &'static str,
}

pub const QEMU: Tool = Tool {
    name: "qemu-system-x86_64",
    package: "qemu-system-x86",
};
pub const FIO: Tool = Tool {
    name: "fio",
    package: "fio",
};
pub const LOSETUP: Tool = Tool {
    name: "losetup",
    package: "util-linux",
};
pub const BUSYBOX: Tool = Tool {
    name: "busybox",
    package: "busybox-static",
};
pub const LDD: Tool = Tool {
    name: "ldd",
    package: "libc-bin",
};
pub const APT_GET: Tool = Tool {
    name: "apt-get",
    package: "apt",
};
pub const DPKG_DEB: Tool = Tool {
    name: "dpkg-deb",
    package: "dpkg",
};

const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// Look `name` up in PATH, then in the system directories (losetup lives in
/// /usr/sbin, which a non-root PATH may lack).
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SYSTEM_DIRS.map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `which`, or the exit-4 class error naming the package.
pub fn require(tool: Tool) -> Result<PathBuf> {
    which(tool.name).ok_or_else(|| VmError::ToolMissing {
        tool: tool.name.into(),
        package: tool.package.into(),
        detail: "not found in PATH, /usr/sbin, /sbin, /usr/bin or /bin".into(),
    })
}

/// busybox: Debian's busybox-static installs /bin/busybox.
pub fn busybox() -> Result<PathBuf> {
    ["/bin/busybox", "/usr/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| VmError::ToolMissing {
            tool: "/bin/busybox".into(),
            package: BUSYBOX.package.into(),
            detail: "neither /bin/busybox nor /usr/bin/busybox exists".into(),
        })
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Run a command, returning stdout; a failure carries stderr's last lines.
pub fn run(cmd: &mut Command) -> Result<String> {
    let text = format!("{cmd:?}");
    let o = cmd.output().map_err(|e| VmError::Command {
        command: text.clone(),
        detail: format!("cannot start: {e}"),
    })?;
    if !o.status.success() {
        return Err(VmError::Command {
            command: text,
            detail: format!("{}: {}", o.status, last_lines(&o.stderr, 8)),
        });
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The last `n` non-empty lines of some output, joined with " | ".
pub fn last_lines(bytes: &[u8], n: usize) -> String {
    let t = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Parse ldd(1) output: the absolute paths of the shared objects a program
/// loads, the dynamic loader included (`linux-vdso.so.1` has no file).
pub fn parse_ldd(text: &str) -> std::result::Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() || l.contains("not a dynamic executable") || l.contains("statically linked")
        {
            continue;
        }
        if l.contains("=> not found") {
            return Err(format!("a library is missing: {l}"));
        }
        let path = match l.split_once("=>") {
            Some((_, rhs)) => rhs.split_whitespace().next(),
            None => l.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            out.push(PathBuf::from(p));
        }
    }
    Ok(out)
}

/// The shared objects `program` needs, from ldd.
pub fn libraries(program: &Path) -> Result<Vec<PathBuf>> {
    let ldd = require(LDD)?;
    let o = Command::new(ldd)
        .arg(program)
        .output()
        .map_err(|e| VmError::io(format!("running ldd {}", program.display()), e))?;
    // ldd exits 1 for static programs ("not a dynamic executable").
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    parse_ldd(&text).map_err(|e| VmError::Command {
        command: format!("ldd {}", program.display()),
        detail: e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_forms() {
        let t = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                 \tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f)\n\
                 \tlibceph-common.so.2 => /usr/lib/x86_64-linux-gnu/ceph/libceph-common.so.2 (0x1)\n\
                 \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            parse_ldd(t).unwrap(),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libz.so.1"),
                PathBuf::from("/usr/lib/x86_64-linux-gnu/ceph/libceph-common.so.2"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2"),
            ]
        );
        assert!(parse_ldd("\tnot a dynamic executable\n")
            .unwrap()
            .is_empty());
        assert!(parse_ldd("\tlibx.so.1 => not found\n").is_err());
    }

    #[test]
    fn last_lines_skips_blanks() {
        assert_eq!(last_lines(b"a\n\nb\nc\n\n", 2), "b | c");
        assert_eq!(last_lines(b"", 3), "");
    }
}
