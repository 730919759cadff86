//! Errors of blklab-vm.
//!
//! Two classes matter to callers: the "host unsuitable" class (a tool or a
//! kernel package is missing; `blklab conformance` maps it to exit status 4,
//! like its host-side "not runnable here"), and everything else.

use std::path::PathBuf;

/// Everything that can go wrong while fetching a kernel, building an
/// initramfs or booting a guest.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A kernel name that is not in the registry.
    #[error("unknown kernel '{name}'; known kernels: {}, or local:DIR (a kernel you built)", known.join(", "))]
    UnknownKernel {
        name: String,
        known: Vec<&'static str>,
    },

    /// A host tool is missing (exit-4 class).
    #[error(
        "{tool} is not available on this host ({detail}); on Debian: apt-get install -y {package}"
    )]
    ToolMissing {
        /// The program or file looked for, e.g. `qemu-system-x86_64`.
        tool: String,
        /// The Debian package that provides it, e.g. `qemu-system-x86`.
        package: String,
        /// Where it was looked for, or why what was found does not do.
        detail: String,
    },

    /// The pinned kernel package is not cached and cannot be fetched: no
    /// network, a mirror that no longer offers the pinned version, or host apt
    /// sources from which no Debian mirror can be derived (exit-4 class).
    #[error("kernel {name} ({package}={version}) is not cached and cannot be fetched: {reason}\nto fetch it: {fetch_command}")]
    KernelUnavailable {
        name: String,
        package: String,
        version: String,
        reason: String,
        /// The command line(s) that would fetch it (the private apt
        /// configuration the harness uses).
        fetch_command: String,
    },

    /// A cached file no longer has the sha256 recorded when it was fetched.
    #[error("cache entry {} was modified: {} has sha256 {actual}, expected {expected}; remove {} to fetch it again", dir.display(), path.display(), dir.display())]
    CacheTampered {
        dir: PathBuf,
        path: PathBuf,
        expected: String,
        actual: String,
    },

    /// A cache entry whose manifest is unreadable, incomplete or not for this pin.
    #[error("cache entry {} is not usable: {reason}; remove it to fetch it again", dir.display())]
    CacheInvalid { dir: PathBuf, reason: String },

    /// The downloaded .deb is not the pinned one.
    #[error("downloaded {} has sha256 {actual}, but the pin says {expected}", path.display())]
    DownloadMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },

    /// The kernel package does not contain what a guest needs.
    #[error("kernel package {package}: {reason}")]
    BadPackage { package: String, reason: String },

    /// A kernel built from source could not be configured as blklab needs
    /// (a symbol of the fragment did not keep its value, a bad HZ).
    #[error("kernel build: {0}")]
    BadBuild(String),

    /// A `local:DIR` kernel that cannot be booted as it is.
    #[error("local kernel {}: {reason}", dir.display())]
    BadLocal { dir: PathBuf, reason: String },

    /// A helper program ran and failed.
    #[error("{command} failed: {detail}")]
    Command { command: String, detail: String },

    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    /// A case specification the guest protocol cannot carry.
    #[error("bad case: {0}")]
    BadCase(String),

    /// Output of the guest larger than the cap.
    #[error("{what} exceeded {limit_bytes} bytes; the guest was stopped")]
    TooLarge { what: String, limit_bytes: u64 },

    /// The guest's probe output could not be understood.
    #[error("guest_info: {0}")]
    Probe(String),
}

impl VmError {
    /// Whether this error means "this host cannot run VM cases" (a missing
    /// tool or kernel package), which `blklab conformance` reports with exit
    /// status 4 rather than as a harness failure.
    pub fn is_host_unsuitable(&self) -> bool {
        matches!(
            self,
            VmError::ToolMissing { .. } | VmError::KernelUnavailable { .. }
        )
    }

    /// Wrap an io::Error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        VmError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Shorthand used across the crate.
pub type Result<T, E = VmError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsuitable_class_is_tools_and_kernels_only() {
        let t = VmError::ToolMissing {
            tool: "qemu-system-x86_64".into(),
            package: "qemu-system-x86".into(),
            detail: "not in PATH".into(),
        };
        assert!(t.is_host_unsuitable());
        assert!(t.to_string().contains("apt-get install -y qemu-system-x86"));
        let k = VmError::KernelUnavailable {
            name: "debian-6.12".into(),
            package: "p".into(),
            version: "1".into(),
            reason: "no network".into(),
            fetch_command: "apt-get download p=1".into(),
        };
        assert!(k.is_host_unsuitable());
        assert!(k.to_string().contains("apt-get download p=1"));
        let u = VmError::UnknownKernel {
            name: "x".into(),
            known: vec!["debian-6.1", "debian-6.12"],
        };
        assert!(!u.is_host_unsuitable());
        assert!(u.to_string().contains("debian-6.1, debian-6.12"));
    }
}
