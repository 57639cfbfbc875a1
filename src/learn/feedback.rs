//! What Q-routing and Q-adaptive share: per-router Q-tables, the (hysteretic) update, and the
//! feedback in flight from a downstream router back to the router that chose the port.
//!
//! Feedback travels over the reverse link with that link's latency and takes no bandwidth
//! (docs/sources.md §2), so it is an event at a later cycle, not an instant update: a router keeps
//! routing on its old values until the news arrives, as it would in hardware.

/// Q-values of every router: `rows` rows (destinations) of `cols` columns (output ports) per
/// router, in one flat array. Values are estimated cycles to the destination; columns of
/// ports a router lacks hold `f32::INFINITY`, so that no minimum ever picks them.
#[derive(Clone, Debug, PartialEq)]
pub struct QTable {
    values: Vec<f32>,
    rows: usize,
    cols: usize,
}

impl QTable {
    /// A table of `routers` x `rows` x `cols` entries, `init(router, row, col)` each.
    pub fn new(
        routers: usize,
        rows: usize,
        cols: usize,
        mut init: impl FnMut(usize, usize, usize) -> f32,
    ) -> Self {
        let mut values = Vec::with_capacity(routers * rows * cols);
        for r in 0..routers {
            for row in 0..rows {
                values.extend((0..cols).map(|c| init(r, row, c)));
            }
        }
        QTable { values, rows, cols }
    }

    /// The router whose entry `index` is.
    #[inline]
    pub fn router_of(&self, index: usize) -> usize {
        index / (self.rows * self.cols)
    }

    /// Position of an entry in the flat array (what feedback events carry).
    #[inline]
    pub fn index(&self, router: usize, row: usize, col: usize) -> usize {
        (router * self.rows + row) * self.cols + col
    }

    #[inline]
    pub fn row(&self, router: usize, row: usize) -> &[f32] {
        let start = self.index(router, row, 0);
        &self.values[start..start + self.cols]
    }

    #[inline]
    pub fn get(&self, router: usize, row: usize, col: usize) -> f32 {
        self.values[self.index(router, row, col)]
    }

    #[inline]
    pub(crate) fn at_mut(&mut self, index: usize) -> &mut f32 {
        &mut self.values[index]
    }

    /// The smallest value of a row (the router's estimate of its best route).
    #[inline]
    pub(crate) fn row_min(&self, router: usize, row: usize) -> f32 {
        self.row(router, row)
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min)
    }

    /// Entries in the table.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The column of the smallest value; ties go to the lowest column.
#[inline]
pub(crate) fn argmin(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate().skip(1) {
        if v < row[best] {
            best = i;
        }
    }
    best
}

/// Learning rates: `alpha` when the news is good (the target is below the estimate), `beta`
/// when it is bad. Hysteretic Q-learning (Matignon et al.) as Q-adaptive uses it; classic
/// Q-routing is the special case `alpha == beta`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    pub alpha: f32,
    pub beta: f32,
    /// Q-values are integers and an update truncates (the Q-adaptive authors' int64 tables:
    /// a rise smaller than 1/beta is lost, a fall loses the fraction).
    pub integer: bool,
}

impl Rates {
    /// Moves `q` towards `target` (= r + Q_y, no discount).
    #[inline]
    pub fn update(self, q: &mut f32, target: f32) {
        let delta = target - *q;
        *q += if delta < 0.0 {
            self.alpha * delta
        } else {
            self.beta * delta
        };
        if self.integer {
            *q = q.trunc();
        }
    }
}

/// One update in flight: table entry `index` is to move towards `target` at cycle `due`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Update {
    due: u64,
    index: u32,
    target: f32,
}

/// Feedback in flight, in a timing wheel indexed by delivery cycle (every delay is at most
/// the longest link latency, so a wheel longer than that never wraps onto pending events
/// when it is drained every cycle).
#[derive(Clone, Debug)]
pub(crate) struct FeedbackQueue {
    slots: Vec<Vec<Update>>,
    mask: u64,
    /// The first cycle not yet delivered.
    next: u64,
    pending: usize,
}

impl FeedbackQueue {
    /// A queue for delays of at most `max_delay` cycles.
    pub(crate) fn new(max_delay: u32) -> Self {
        let len = (u64::from(max_delay) + 1).next_power_of_two();
        FeedbackQueue {
            slots: vec![Vec::new(); len as usize],
            mask: len - 1,
            next: 0,
            pending: 0,
        }
    }

    /// Updates not yet delivered.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Sends, at cycle `now`, an update of entry `index` that arrives `delay` cycles later.
    #[inline]
    pub(crate) fn push(&mut self, now: u64, delay: u32, index: u32, target: f32) {
        let due = now + u64::from(delay.max(1));
        self.slots[(due & self.mask) as usize].push(Update { due, index, target });
        self.pending += 1;
    }

    /// An update of entry `index` due at cycle `due` (not yet delivered; sent elsewhere: a
    /// partition of the parallel engine).
    pub(crate) fn push_due(&mut self, due: u64, index: u32, target: f32) {
        debug_assert!(
            due >= self.next,
            "an update due at a cycle already delivered"
        );
        self.slots[(due & self.mask) as usize].push(Update { due, index, target });
        self.pending += 1;
    }

    /// Hands every update due at or before `now` to `apply(index, target)`, in order of
    /// delivery cycle, then of sending. Called once per cycle. If `now` is before the cycles
    /// already delivered, a new run started (the session carried over from an earlier one):
    /// everything still in flight is delivered at once.
    pub(crate) fn deliver(&mut self, now: u64, mut apply: impl FnMut(u32, f32)) {
        if self.pending == 0 {
            self.next = now + 1;
            return;
        }
        let len = self.mask + 1;
        let flush = now < self.next;
        // Normally one slot; after a gap (or a flush) every slot once.
        let last = if flush || now - self.next >= len {
            self.next + len - 1
        } else {
            now
        };
        let mut taken = 0;
        for t in self.next..=last {
            let slot = &mut self.slots[(t & self.mask) as usize];
            slot.retain(|u| {
                let due = flush || u.due <= now;
                if due {
                    apply(u.index, u.target);
                    taken += 1;
                }
                !due
            });
        }
        self.pending -= taken;
        self.next = now + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_update_moves_by_alpha_down_and_beta_up() {
        let rates = Rates {
            alpha: 0.2,
            beta: 0.04,
            integer: false,
        };
        let mut q = 300.0;
        rates.update(&mut q, 400.0); // delta = +100: beta
        assert!((q - 304.0).abs() < 1e-4, "{q}");
        rates.update(&mut q, 204.0); // delta = -100: alpha
        assert!((q - 284.0).abs() < 1e-4, "{q}");
        rates.update(&mut q, 284.0);
        assert_eq!(q, 284.0);
        // Integer tables: +4.96 becomes +4, -19.5 becomes -19 (truncation towards zero of
        // the new value, as an int64 assignment in C++).
        let int = Rates {
            integer: true,
            ..rates
        };
        let mut q = 300.0;
        int.update(&mut q, 424.0);
        assert_eq!(q, 304.0);
        int.update(&mut q, 206.5);
        assert_eq!(q, 284.0);
        int.update(&mut q, 300.0); // +0.64: lost
        assert_eq!(q, 284.0);
    }

    #[test]
    fn q_argmin_breaks_ties_towards_the_lowest_column() {
        assert_eq!(argmin(&[3.0, 1.0, 1.0, 2.0]), 1);
        assert_eq!(argmin(&[5.0, 5.0]), 0);
        assert_eq!(argmin(&[f32::INFINITY, 7.0, f32::INFINITY]), 1);
    }

    #[test]
    fn q_feedback_arrives_after_its_delay_in_order() {
        let mut fq = FeedbackQueue::new(300);
        let mut got = Vec::new();
        fq.deliver(0, |i, t| got.push((0, i, t)));
        fq.push(0, 300, 1, 10.0);
        fq.push(0, 30, 2, 20.0);
        fq.deliver(1, |i, t| got.push((1, i, t)));
        fq.push(1, 29, 3, 30.0); // due at 30 too, sent later
        for now in 2..=400 {
            fq.deliver(now, |i, t| got.push((now, i, t)));
        }
        assert_eq!(got, vec![(30, 2, 20.0), (30, 3, 30.0), (300, 1, 10.0)]);
        assert_eq!(fq.pending(), 0);
    }

    #[test]
    fn q_feedback_survives_gaps_and_flushes_on_a_new_run() {
        let mut fq = FeedbackQueue::new(10);
        fq.deliver(0, |_, _| unreachable!());
        fq.push(0, 5, 1, 1.0);
        fq.push(0, 9, 2, 2.0);
        let mut got = Vec::new();
        // Not called for a while: the first is due, the second not yet.
        fq.deliver(7, |i, _| got.push(i));
        assert_eq!(got, vec![1]);
        fq.push(7, 10, 3, 3.0);
        // A long gap: both remaining are due.
        fq.deliver(100, |i, _| got.push(i));
        assert_eq!(got, vec![1, 2, 3]);
        // A new run restarts the clock: what is in flight is delivered at once.
        fq.push(100, 8, 4, 4.0);
        fq.deliver(0, |i, _| got.push(i));
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert_eq!(fq.pending(), 0);
    }
}
