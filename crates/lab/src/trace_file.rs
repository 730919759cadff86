//! `--trace FILE`: controller trace events written to a file, one line each
//! in the kernel's tracepoint text format.

use std::io::Write;

use blklab_core::sim::trace::{format_line, format_task_line, TraceSink};

/// A trace sink that appends each event to a buffered file.
pub struct FileSink(pub std::io::BufWriter<std::fs::File>);

impl FileSink {
    /// Create (or truncate) the trace file.
    pub fn create(path: &std::path::Path) -> std::io::Result<FileSink> {
        Ok(FileSink(std::io::BufWriter::new(std::fs::File::create(
            path,
        )?)))
    }
}

impl TraceSink for FileSink {
    fn event(&mut self, t: u64, name: &str, payload: &str) {
        // A failed write loses trace lines, not the run: the trace is a
        // by-product, and the sink interface has no error path.
        let _ = writeln!(self.0, "{}", format_line(t, name, payload));
    }
    fn event_in(&mut self, t: u64, task: (&str, u32), cpu: u32, name: &str, payload: &str) {
        let _ = writeln!(self.0, "{}", format_task_line(t, task, cpu, name, payload));
    }
}
