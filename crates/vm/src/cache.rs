//! The kernel cache's entry point: a registry kernel, fetched (stock) or
//! built (from source) into the cache the first time, and verified; or a
//! `local:DIR` kernel, read where it is (no cache).

use std::path::Path;

use crate::error::{Result, VmError};
use crate::kbuild;
use crate::kernels::{self, Kernel};
use crate::local;

/// The kernel `name`, fetched into `cache_dir` if it is not there yet, and
/// verified (a `local:DIR` name: that kernel, checked). Concurrent callers
/// are serialised by a lock file in the cache.
pub fn ensure(name: &str, cache_dir: &Path) -> Result<Kernel> {
    if let Some(dir) = local::dir_of(name) {
        return local::load(dir);
    }
    let pin = kernels::pin(name)?;
    let dir = cache_dir.join(pin.name);
    if dir.join(kernels::MANIFEST).is_file() {
        return kernels::load_verified(pin, &dir);
    }
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| VmError::io(format!("creating {}", cache_dir.display()), e))?;
    let lock_path = cache_dir.join(".lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| VmError::io(format!("creating {}", lock_path.display()), e))?;
    lock.lock()
        .map_err(|e| VmError::io(format!("locking {}", lock_path.display()), e))?;
    // Someone else may have fetched it while we waited.
    if dir.join(kernels::MANIFEST).is_file() {
        return kernels::load_verified(pin, &dir);
    }
    if dir.exists() {
        return Err(VmError::CacheInvalid {
            dir: dir.clone(),
            reason: "it exists but has no manifest".into(),
        });
    }
    match &pin.build {
        Some(spec) => kbuild::build(pin, spec, cache_dir, &dir)?,
        None => kernels::fetch(pin, cache_dir, &dir)?,
    }
    kernels::load_verified(pin, &dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_name_fails_before_touching_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("never-created");
        assert!(matches!(
            ensure("nope", &cache),
            Err(VmError::UnknownKernel { .. })
        ));
        assert!(!cache.exists());
    }
}
