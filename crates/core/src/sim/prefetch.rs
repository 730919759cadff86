//! Cache hints. Not in the kernel: the simulator's own speed. A hint asks
//! the CPU to start loading a cache line that the simulation will read
//! soon, without waiting for it; it reads nothing architecturally, so no
//! hint can change a result, whatever address it is given.

/// A prefetch hint for the cache line at `p` (no load, no fault: the
/// instruction is a hint even for an address that is not mapped).
#[inline]
pub fn read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 reads nothing architecturally and cannot fault;
    // SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
