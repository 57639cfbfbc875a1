//! Injection processes and packet sizes: when a source creates packets and how long they are.
//!
//! Every source keeps the first cycle at which it creates something (`next`), so the engine
//! only touches a source when it has work. Random gaps are drawn directly (geometric
//! distribution by inversion), never cycle by cycle, and nothing is allocated per packet.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::NewPacket;
use super::config::{InjectionSpec, LoadSpec};
use super::patterns::DestinationPattern;
use crate::error::{Error, Result};

/// Packet sizes in flits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Sizes {
    Fixed(u32),
    /// `overhead` (header + footer) plus a payload uniform in `min..=max`.
    Range {
        overhead: u32,
        min: u32,
        max: u32,
    },
}

impl Sizes {
    pub(crate) fn mean(&self) -> f64 {
        match *self {
            Sizes::Fixed(s) => f64::from(s),
            Sizes::Range { overhead, min, max } => {
                f64::from(overhead) + (f64::from(min) + f64::from(max)) / 2.0
            }
        }
    }

    pub(crate) fn bounds(&self) -> (u32, u32) {
        match *self {
            Sizes::Fixed(s) => (s, s),
            Sizes::Range { overhead, min, max } => (overhead + min, overhead + max),
        }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> u32 {
        match *self {
            Sizes::Fixed(s) => s,
            Sizes::Range { overhead, min, max } => overhead + rng.random_range(min..=max),
        }
    }
}

/// The state of one (terminal, class) source. Created by `Traffic::new_sources`.
#[derive(Clone, Debug)]
pub(crate) struct SourceState {
    pub(crate) rng: ChaCha8Rng,
    /// The next cycle at which this source creates packets.
    pub(crate) next: Option<u64>,
    /// Rate processes: the first cycle whose Bernoulli trial is not drawn yet.
    pub(crate) cursor: u64,
    /// On/off: the first cycle of the next period.
    pub(crate) switch_at: u64,
    /// Periodic: packets created in the current phase; all-to-all: exchanges completed.
    pub(crate) count: u64,
    /// Periodic: this terminal's phase shift as a fraction of the interval.
    pub(crate) frac: f64,
    pub(crate) terminal: u32,
    pub(crate) phase: u32,
    /// All-to-all (spread): packets of the current exchange already created.
    pub(crate) sent: u32,
    pub(crate) class: u8,
    pub(crate) on: bool,
    /// All-to-all with `order = "shuffle"`: this exchange's destination order.
    pub(crate) order: Vec<u32>,
}

impl SourceState {
    pub(crate) fn new(rng: ChaCha8Rng, terminal: u32, class: u8) -> Self {
        SourceState {
            rng,
            next: None,
            cursor: 0,
            switch_at: 0,
            count: 0,
            frac: 0.0,
            terminal,
            phase: 0,
            sent: 0,
            class,
            on: true,
            order: Vec::new(),
        }
    }
}

/// Rounds a number of cycles computed as a quotient (e.g. 7 / 0.14) to the integer it is
/// meant to be when it is within rounding error of one, so that exact periods stay exact.
pub(crate) fn snap(cycles: f64) -> f64 {
    let r = cycles.round();
    if (cycles - r).abs() <= 1e-9 * cycles.abs() {
        r
    } else {
        cycles
    }
}

/// Number of failures before the first success of Bernoulli trials whose failure probability
/// has logarithm `ln1m` (`ln(1 - p)`), drawn by inversion.
fn failures(rng: &mut ChaCha8Rng, ln1m: f64) -> u64 {
    if ln1m == f64::NEG_INFINITY {
        return 0;
    }
    if ln1m >= 0.0 {
        return u64::MAX;
    }
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    // The quotient is >= 0 (or -0.0), so truncating with `as` is its floor (without a libm
    // call); `as` saturates for huge values.
    (u.ln() / ln1m) as u64
}

#[derive(Clone, Copy, Debug)]
struct RatePhase {
    start: u64,
    /// First cycle after the phase (`u64::MAX`: never ends).
    end: u64,
    /// Nominal flits per cycle.
    load: f64,
    /// Packets per cycle while injecting (during ON periods for on/off).
    rate: f64,
    /// `ln(1 - rate)`.
    ln1m: f64,
    /// `1 / rate` cycles (periodic).
    interval: f64,
}

#[derive(Clone, Copy, Debug)]
struct OnOff {
    /// Stationary probability of being ON.
    duty: f64,
    ln1m_on: f64,
    ln1m_off: f64,
}

/// Bernoulli, periodic and on/off processes, optionally with load phases.
#[derive(Clone, Debug)]
pub(crate) struct RateProcess {
    periodic: bool,
    onoff: Option<OnOff>,
    phases: Vec<RatePhase>,
    /// Phases at and after this index never create packets.
    active_until: usize,
}

/// The all-to-all exchange: every `period` cycles, one packet to every other group member.
#[derive(Clone, Debug)]
pub(crate) struct AllToAll {
    period: f64,
    size: u32,
    spread: bool,
    shuffle: bool,
    /// Packets sent back to back to each member per exchange.
    per_message: u32,
}

#[derive(Clone, Debug)]
pub(crate) enum Process {
    Rate(RateProcess),
    AllToAll(AllToAll),
}

impl Process {
    /// Builds the process; returns it with its nominal load (flits per terminal per cycle).
    pub(crate) fn build(
        injection: &InjectionSpec,
        load: &LoadSpec,
        sizes: &Sizes,
        group: u32,
    ) -> Result<(Process, f64)> {
        let mean = sizes.mean();
        if let InjectionSpec::AllToAll {
            period,
            spread,
            shuffle,
            packets_per_message,
        } = *injection
        {
            let p = AllToAll {
                period,
                size: group,
                spread,
                shuffle,
                per_message: packets_per_message,
            };
            let load = f64::from(group - 1) * f64::from(packets_per_message) * mean / period;
            return Ok((Process::AllToAll(p), load));
        }
        let (steps, phased) = match load {
            LoadSpec::Constant(l) => (vec![(u64::MAX, *l)], false),
            LoadSpec::Phases(p) => (p.clone(), true),
            LoadSpec::Implied => unreachable!("only alltoall has an implied load"),
        };
        let onoff = match *injection {
            InjectionSpec::OnOff { on, off } => Some(OnOff {
                duty: on / (on + off),
                ln1m_on: (-1.0 / on).ln_1p(),
                ln1m_off: (-1.0 / off).ln_1p(),
            }),
            _ => None,
        };
        let duty = onoff.map_or(1.0, |o| o.duty);
        let mut phases = Vec::with_capacity(steps.len());
        let mut start = 0;
        for (i, &(end, load)) in steps.iter().enumerate() {
            let field = if phased {
                format!("phases[{i}].load")
            } else {
                "load".to_string()
            };
            let rate = load / mean / duty;
            if rate > 1.0 + 1e-9 {
                let why = if onoff.is_some() {
                    format!(
                        "with packets of {mean} flits on average and ON {:.1}% of the time, {load} flits per cycle needs more than one packet per cycle during ON periods; use at most {}",
                        duty * 100.0,
                        mean * duty
                    )
                } else {
                    format!(
                        "with packets of {mean} flits on average, {load} flits per cycle needs more than one packet per cycle (a source creates at most one); use at most {mean}"
                    )
                };
                return Err(Error::field(field, why));
            }
            let rate = rate.min(1.0);
            phases.push(RatePhase {
                start,
                end,
                load,
                rate,
                ln1m: (-rate).ln_1p(),
                interval: snap(mean / load),
            });
            start = end;
        }
        let active_until = phases
            .iter()
            .rposition(|p| p.rate > 0.0)
            .map_or(0, |i| i + 1);
        let nominal = if phased {
            let span = phases.last().map_or(1, |p| p.end) as f64;
            phases
                .iter()
                .map(|p| p.load * (p.end - p.start) as f64)
                .sum::<f64>()
                / span
        } else {
            phases[0].load
        };
        let process = RateProcess {
            periodic: matches!(injection, InjectionSpec::Periodic),
            onoff,
            phases,
            active_until,
        };
        Ok((Process::Rate(process), nominal))
    }

    /// Nominal load in effect at `cycle` (averaged over on/off periods).
    #[cfg(test)]
    pub(crate) fn load_at(&self, cycle: u64, nominal: f64) -> f64 {
        match self {
            Process::Rate(r) => r
                .phases
                .iter()
                .find(|p| cycle < p.end)
                .map_or(0.0, |p| p.load),
            Process::AllToAll(_) => nominal,
        }
    }

    /// Draws the source's initial state and first event.
    pub(crate) fn init(&self, s: &mut SourceState) {
        match self {
            Process::Rate(r) => {
                if r.periodic {
                    s.frac = s.rng.random::<f64>();
                }
                if let Some(o) = r.onoff {
                    s.on = s.rng.random::<f64>() < o.duty;
                    let ln1m = if s.on { o.ln1m_on } else { o.ln1m_off };
                    s.switch_at = 1 + failures(&mut s.rng, ln1m);
                }
                r.advance(s);
            }
            Process::AllToAll(a) => {
                if a.size < 2 {
                    return;
                }
                if a.shuffle {
                    let base = s.terminal / a.size * a.size;
                    s.order = (base..base + a.size).filter(|&t| t != s.terminal).collect();
                    s.order.shuffle(&mut s.rng);
                }
                s.next = Some(a.time(0, 0));
            }
        }
    }

    /// Creates the packets of the source's next event (due at `now`) and advances it.
    pub(crate) fn emit(
        &self,
        pattern: &dyn DestinationPattern,
        sizes: &Sizes,
        s: &mut SourceState,
        now: u64,
        out: &mut Vec<NewPacket>,
    ) {
        match self {
            Process::Rate(r) => {
                if let Some(dst) = pattern.sample(s.terminal, &mut s.rng) {
                    let size = sizes.sample(&mut s.rng);
                    out.push(NewPacket {
                        src: s.terminal,
                        dst,
                        size,
                        class: s.class,
                    });
                }
                if r.periodic {
                    s.count += 1;
                }
                s.cursor = now + 1;
                r.advance(s);
            }
            Process::AllToAll(a) => a.emit(sizes, s, out),
        }
    }
}

impl RateProcess {
    fn advance(&self, s: &mut SourceState) {
        if self.periodic {
            self.advance_periodic(s);
        } else {
            self.advance_random(s);
        }
    }

    /// Bernoulli (optionally modulated by on/off periods and phases): the next cycle at or
    /// after `cursor` whose trial succeeds. Geometric gaps are memoryless, so a draw that
    /// overshoots a boundary (phase end, on/off switch) is discarded and redrawn from there.
    fn advance_random(&self, s: &mut SourceState) {
        loop {
            let phase = s.phase as usize;
            if phase >= self.active_until {
                s.next = None;
                return;
            }
            let ph = &self.phases[phase];
            if s.cursor >= ph.end {
                s.phase += 1;
                continue;
            }
            let mut boundary = ph.end;
            if let Some(o) = self.onoff {
                if s.cursor >= s.switch_at {
                    s.on = !s.on;
                    let ln1m = if s.on { o.ln1m_on } else { o.ln1m_off };
                    s.switch_at = s
                        .switch_at
                        .saturating_add(1)
                        .saturating_add(failures(&mut s.rng, ln1m));
                    continue;
                }
                boundary = boundary.min(s.switch_at);
                if !s.on {
                    s.cursor = boundary;
                    continue;
                }
            }
            // `rate > 0` here unless a later phase is active, so `boundary` is finite.
            if ph.rate <= 0.0 {
                s.cursor = boundary;
                continue;
            }
            let candidate = s.cursor.saturating_add(failures(&mut s.rng, ph.ln1m));
            if candidate >= boundary {
                if boundary == u64::MAX {
                    s.next = None;
                    return;
                }
                s.cursor = boundary;
                continue;
            }
            s.next = Some(candidate);
            return;
        }
    }

    /// Periodic: packet k of a phase at floor(start + (frac + k) * interval).
    fn advance_periodic(&self, s: &mut SourceState) {
        loop {
            let phase = s.phase as usize;
            if phase >= self.active_until {
                s.next = None;
                return;
            }
            let ph = &self.phases[phase];
            let cycle = if ph.rate > 0.0 {
                (ph.start as f64 + (s.frac + s.count as f64) * ph.interval).floor() as u64
            } else {
                u64::MAX
            };
            if cycle >= ph.end {
                s.phase += 1;
                s.count = 0;
                continue;
            }
            s.next = Some(cycle.max(s.cursor));
            return;
        }
    }
}

impl AllToAll {
    /// Cycle of packet `j` of exchange `k`.
    fn time(&self, k: u64, j: u32) -> u64 {
        let base = k as f64 * self.period;
        let t = if self.spread {
            base + f64::from(j) * self.period / f64::from(self.size - 1)
        } else {
            base
        };
        t.floor() as u64
    }

    fn destination(&self, s: &SourceState, j: u32) -> u32 {
        if self.shuffle {
            s.order[j as usize]
        } else {
            let base = s.terminal / self.size * self.size;
            let pos = s.terminal - base;
            base + (pos + 1 + j) % self.size
        }
    }

    /// The packets of the message to member `j`.
    fn push(&self, sizes: &Sizes, s: &mut SourceState, j: u32, out: &mut Vec<NewPacket>) {
        let dst = self.destination(s, j);
        for _ in 0..self.per_message {
            let size = sizes.sample(&mut s.rng);
            out.push(NewPacket {
                src: s.terminal,
                dst,
                size,
                class: s.class,
            });
        }
    }

    fn emit(&self, sizes: &Sizes, s: &mut SourceState, out: &mut Vec<NewPacket>) {
        let m = self.size - 1;
        if self.spread {
            self.push(sizes, s, s.sent, out);
            s.sent += 1;
        } else {
            for j in 0..m {
                self.push(sizes, s, j, out);
            }
            s.sent = m;
        }
        if s.sent == m {
            s.sent = 0;
            s.count += 1;
            if self.shuffle {
                s.order.shuffle(&mut s.rng);
            }
        }
        s.next = Some(self.time(s.count, s.sent));
    }
}
