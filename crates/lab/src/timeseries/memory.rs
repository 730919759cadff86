//! The in-memory copy of the time series: what the HTML report plots and
//! what the library hands to its users. Bounded: each table keeps at most
//! [`MAX_TICKS`] instants; past that it keeps every other one (the stride
//! doubles), so a long run costs the same memory as a short one.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::Result;

use super::{Cell, RowSink, TABLES};

/// Instants (intervals or periods) a table keeps before thinning.
pub const MAX_TICKS: u64 = 2048;

/// One table: its columns (see [`super::TABLES`]) and rows.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    ticks: Vec<u64>,
    stride: u64,
    distinct: u64,
    last_tick: Option<u64>,
}

impl Table {
    /// The index of column `name`.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
    /// Keep one instant in `stride` (1: all of them).
    pub fn stride(&self) -> u64 {
        self.stride.max(1)
    }

    fn push(&mut self, tick: u64, cells: &[Cell]) {
        let stride = self.stride();
        if tick % stride != 0 {
            return;
        }
        if self.last_tick != Some(tick) {
            self.last_tick = Some(tick);
            self.distinct += 1;
        }
        self.rows.push(cells.to_vec());
        self.ticks.push(tick);
        if self.distinct > MAX_TICKS {
            let s = stride * 2;
            let mut keep = self.ticks.iter().map(|t| t % s == 0);
            self.rows.retain(|_| keep.next().unwrap_or(false));
            self.ticks.retain(|t| t % s == 0);
            self.stride = s;
            let mut d = self.ticks.clone();
            d.dedup();
            self.distinct = d.len() as u64;
        }
    }
}

/// Every table of a run, in [`TABLES`] order.
#[derive(Clone, Debug)]
pub struct Series {
    pub tables: Vec<Table>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            tables: TABLES
                .iter()
                .map(|t| Table {
                    name: t.name.to_string(),
                    columns: t.columns.iter().map(|c| c.name.to_string()).collect(),
                    stride: 1,
                    ..Default::default()
                })
                .collect(),
        }
    }
}

impl Series {
    /// The table called `name`.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// A [`Series`] the recorder fills while the caller keeps a handle.
pub(super) struct Shared(pub Rc<RefCell<Series>>);

impl RowSink for Shared {
    fn row(&mut self, table: usize, tick: u64, cells: &[Cell]) {
        self.0.borrow_mut().tables[table].push(tick, cells);
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
