//! Seeded randomness. Every random choice in a run comes from a stream derived
//! from the scenario seed and a fixed label, so adding a job or a device does
//! not perturb the draws of the others, and the same seed gives the same run.

use rand::{Rng as _, RngCore};
use rand_pcg::Pcg64Mcg;

#[derive(Clone, Debug)]
pub struct Rng(Pcg64Mcg);

impl Rng {
    /// A stream for `label` under `seed` (labels are e.g. "job/3", "dev/sda").
    pub fn stream(seed: u64, label: &str) -> Rng {
        // FNV-1a over the label, mixed with the seed by splitmix64.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in label.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        let mut z = seed ^ h.rotate_left(17);
        let mut next = || {
            z = z.wrapping_add(0x9e3779b97f4a7c15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
            x ^ (x >> 31)
        };
        let s = ((next() as u128) << 64) | next() as u128;
        Rng(Pcg64Mcg::new(s | 1))
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            self.0.gen_range(0..n)
        }
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Exponential with the given mean (for Poisson processes).
    pub fn exp(&mut self, mean: f64) -> f64 {
        let u = 1.0 - self.unit();
        -mean * u.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn streams_are_deterministic_and_distinct() {
        let mut a = Rng::stream(1, "job/0");
        let mut b = Rng::stream(1, "job/0");
        let mut c = Rng::stream(1, "job/1");
        let va: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        for _ in 0..1000 {
            assert!(a.below(7) < 7);
            let u = a.unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
