//! Replaying a recorded I/O stream as a job's workload: the counterpart of
//! fio's iolog replay (`read_iolog=` with `replay_no_stall=`, iolog.c
//! `read_iolog_chunked` / `iolog_delay`), fed with one cgroup's stream from a
//! `blklab record` file instead of an fio iolog or a blktrace.
//!
//! The job keeps fio's loop (io_u pool of `iodepth`, submit, reap, clat/slat
//! statistics); only two choices change: *what* the next I/O is (direction,
//! offset and length come from the recording, in order) and *when* it may be
//! issued:
//! - [`ReplayTiming::Original`]: each I/O at its recorded instant (relative to
//!   the recording's first event and to the job's start), or as soon after as
//!   the job can (all io_us busy, submit call blocked in the kernel). fio
//!   sleeps the recorded gap minus the time already spent since the previous
//!   issue (`iolog_delay`, µs, carrying an overshoot in `time_offset`), which
//!   aims at the same schedule; the model aims at the recorded instants
//!   directly, in ns. While it waits it reaps completions as they come
//!   (fio polls them in `iolog_delay`), so clat is the I/O's own latency.
//!   See docs/fidelity/cli-iotrack-host.md.
//! - [`ReplayTiming::AsFast`]: no waiting (`replay_no_stall=1`): the queue
//!   depth alone paces the stream; as in fio, completions are reaped only
//!   when the queue is full, so choose `iodepth` with care (a deep queue
//!   gives long clat figures that are fio's reaping, not the device).
//!
//! Memory: the stream is held in full (it is input, like a job file); nothing
//! grows with the I/Os completed.

use crate::sim::time::Ns;

/// One recorded I/O: its submission (Q) time relative to the recording's
/// first event, direction, byte offset on the device and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayIo {
    pub time_ns: Ns,
    pub write: bool,
    pub offset: u64,
    pub bytes: u32,
}

/// How the recorded times are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayTiming {
    Original,
    AsFast,
}

impl std::str::FromStr for ReplayTiming {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "original" => Ok(ReplayTiming::Original),
            "asfast" => Ok(ReplayTiming::AsFast),
            _ => Err(format!("timing '{s}': expected \"original\" or \"asfast\"")),
        }
    }
}

/// A job's replay source: the recorded I/Os and a cursor.
#[derive(Clone, Debug)]
pub struct Replay {
    ios: Vec<ReplayIo>,
    next: usize,
    timing: ReplayTiming,
}

impl Replay {
    /// Check the stream: I/Os in time order, each a non-empty multiple of 512
    /// bytes at a 512-byte aligned offset (direct I/O, what a bio carries).
    pub fn new(ios: Vec<ReplayIo>, timing: ReplayTiming) -> Result<Replay, String> {
        for (i, io) in ios.iter().enumerate() {
            if io.bytes == 0 || io.bytes % 512 != 0 || io.offset % 512 != 0 {
                return Err(format!(
                    "I/O #{i}: {} bytes at offset {}: expected a non-empty multiple of 512 bytes at a 512-byte boundary",
                    io.bytes, io.offset
                ));
            }
            if i > 0 && io.time_ns < ios[i - 1].time_ns {
                return Err(format!("I/O #{i}: earlier than the one before it"));
            }
        }
        Ok(Replay {
            ios,
            next: 0,
            timing,
        })
    }

    pub fn len(&self) -> usize {
        self.ios.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ios.is_empty()
    }
    pub fn timing(&self) -> ReplayTiming {
        self.timing
    }

    /// The next I/O's direction (0 read, 1 write) and the instant it is due,
    /// for a job whose clock starts at `epoch`; None when the stream is done.
    pub(crate) fn due(&self, epoch: Ns) -> Option<(u8, Ns)> {
        let io = self.ios.get(self.next)?;
        let t = match self.timing {
            ReplayTiming::Original => epoch + io.time_ns,
            ReplayTiming::AsFast => 0,
        };
        Some((io.write as u8, t))
    }

    /// Consume the next I/O: (bytes, byte offset).
    pub(crate) fn take(&mut self) -> (u32, u64) {
        let io = self.ios[self.next];
        self.next += 1;
        (io.bytes, io.offset)
    }
}

impl Replay {
    /// Every I/O must fit on a device of `cap` bytes.
    pub(crate) fn check_fits(&self, cap: u64) -> Result<(), String> {
        match self
            .ios
            .iter()
            .enumerate()
            .find(|(_, io)| io.offset + io.bytes as u64 > cap)
        {
            Some((i, io)) => Err(format!(
                "I/O #{i} ({} bytes at offset {}) ends beyond the device's {cap} bytes",
                io.bytes, io.offset
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t: Ns, off: u64, bytes: u32) -> ReplayIo {
        ReplayIo {
            time_ns: t,
            write: false,
            offset: off,
            bytes,
        }
    }

    #[test]
    fn rejects_unaligned_and_unordered() {
        assert!(Replay::new(
            vec![io(0, 0, 4096), io(5, 4096, 4096)],
            ReplayTiming::Original
        )
        .is_ok());
        let e = Replay::new(vec![io(0, 100, 4096)], ReplayTiming::Original).unwrap_err();
        assert!(e.contains("I/O #0"), "{e}");
        let e = Replay::new(vec![io(0, 0, 1000)], ReplayTiming::Original).unwrap_err();
        assert!(e.contains("multiple of 512"), "{e}");
        let e = Replay::new(vec![io(9, 0, 512), io(3, 0, 512)], ReplayTiming::AsFast).unwrap_err();
        assert!(e.contains("I/O #1"), "{e}");
    }

    #[test]
    fn due_times_follow_the_timing() {
        let mut r = Replay::new(
            vec![io(1000, 0, 512), io(3000, 512, 1024)],
            ReplayTiming::Original,
        )
        .unwrap();
        assert_eq!(r.due(500), Some((0, 1500)));
        assert_eq!(r.take(), (512, 0));
        assert_eq!(r.due(500), Some((0, 3500)));
        assert_eq!(r.take(), (1024, 512));
        assert_eq!(r.due(500), None);
        let r = Replay::new(vec![io(1000, 0, 512)], ReplayTiming::AsFast).unwrap();
        assert_eq!(r.due(500), Some((0, 0)));
    }
}
