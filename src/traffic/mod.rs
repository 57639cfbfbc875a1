//! Traffic: what the simulator's terminals generate. Patterns (where packets go), injection
//! processes (when they are created) and packet sizes, one set per traffic class (a
//! `[[traffic]]` table of the problem file). See `docs/traffic.md`.
//!
//! Everything is deterministic from the problem's seed. Each (terminal, class) source owns its
//! random stream, so the packets a source creates do not depend on the order in which the
//! engine visits sources. The engine drives a source with [`Traffic::next_event`] and
//! [`Traffic::generate`]:
//!
//! ```ignore
//! let mut sources = traffic.new_sources_of(0..terminals);
//! // at cycle `now`, for every source whose next_event is Some(now):
//! traffic.generate(&mut sources[i], now, &mut new_packets);
//! ```

mod config;
mod demand;
mod matrix;
pub(crate) mod patterns;
mod process;
pub mod registry;
#[cfg(test)]
mod tests_patterns;
#[cfg(test)]
mod tests_sources;

use std::path::Path;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use config::TrafficConfig;
pub(crate) use config::{MAX_PACKET_FLITS, apply_booksim_defaults, check_types};
#[cfg(test)]
use config::{PhaseConfig, parse_traffic_tables};
pub use demand::AggregatedDemand;
pub(crate) use process::SourceState;

use config::{ClassSpec, InjectionSpec, LoadSpec};
use patterns::{DestinationPattern, Group, PatternInput};
use process::Process;

use crate::error::{Error, Result};
use crate::topology::Topology;

/// A packet a source has just created (the engine knows the cycle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct NewPacket {
    pub src: u32,
    pub dst: u32,
    /// Flits, at least 1.
    pub size: u32,
    pub class: u8,
}

/// Random streams: source streams are `class << 32 | terminal`; pattern structures use this
/// bit plus the class, so the two never collide.
const PATTERN_STREAM: u64 = 1 << 63;

#[derive(Clone, Debug)]
struct Class {
    spec: ClassSpec,
    // `name` and `send_mean` serve the tests' accessors (offered load, names); the simulator
    // reads the spec, pattern and process.
    #[cfg(test)]
    name: String,
    pattern: Arc<dyn DestinationPattern>,
    process: Process,
    /// Flits per terminal per cycle requested (`load`, the phases' time average, or implied).
    nominal_load: f64,
    /// Mean over terminals of the share of creations that produce a packet.
    #[cfg(test)]
    send_mean: f64,
    seed: u64,
}

/// All traffic classes of a problem, built once for a topology.
#[derive(Clone, Debug)]
pub struct Traffic {
    classes: Vec<Class>,
    terminals: u32,
}

/// Errors keep the key name inside the `[[traffic]]` table as their field (the caller
/// prefixes the table, e.g. `traffic.pattern`); with several classes the reason says which.
fn annotate_class(e: Error, class: usize, classes: usize) -> Error {
    match e {
        Error::Field { field, reason } if classes > 1 => Error::Field {
            field,
            reason: format!("{reason} (in [[traffic]] table {class}, counting from 0)"),
        },
        other => other,
    }
}

impl Traffic {
    /// Builds every class. A field error names the key inside the `[[traffic]]` table
    /// (`pattern`, `dims`, ...); relative matrix paths resolve against `base_dir` (the problem
    /// file's folder).
    pub fn build(
        configs: &[TrafficConfig],
        topo: &Topology,
        seed: u64,
        base_dir: &Path,
    ) -> Result<Traffic> {
        if configs.is_empty() {
            return Err(Error::field(
                "traffic",
                "needs at least one [[traffic]] table",
            ));
        }
        if configs.len() > 256 {
            return Err(Error::field(
                "traffic",
                format!("at most 256 classes (got {})", configs.len()),
            ));
        }
        let n = topo.num_terminals();
        if n < 2 || n >= u32::MAX as usize {
            return Err(Error::field(
                "traffic",
                format!("needs a topology with 2 to 2^32 - 2 terminals (this one has {n})"),
            ));
        }
        let classes = configs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                Class::build(c, i, topo, seed, base_dir)
                    .map_err(|e| annotate_class(e, i, configs.len()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Traffic {
            classes,
            terminals: n as u32,
        })
    }

    /// A copy with class `class` offering `load` flits per terminal per cycle (the nominal
    /// load, as the `load` field). Phases are scaled so that their time average is `load`;
    /// an all-to-all class gets the period that implies `load`.
    pub(crate) fn with_load(&self, class: usize, load: f64) -> Result<Traffic> {
        let mut out = self.clone();
        let c = out.classes.get_mut(class).ok_or_else(|| {
            Error::field(
                "class",
                format!("{class} does not exist ({} classes)", self.classes.len()),
            )
        })?;
        c.set_load(load)
            .map_err(|e| annotate_class(e, class, self.classes.len()))?;
        Ok(out)
    }

    pub(crate) fn num_classes(&self) -> usize {
        self.classes.len()
    }

    pub fn num_terminals(&self) -> usize {
        self.terminals as usize
    }

    /// One source per (terminal, class), at [`Traffic::source_index`].
    #[cfg(test)]
    pub(crate) fn new_sources(&self) -> Vec<SourceState> {
        self.new_sources_of(0..self.terminals)
    }

    /// The sources of `terminals` only, terminal-major in the order given: each the same as
    /// in [`Traffic::new_sources`] (a partition of the parallel engine builds its own
    /// terminals' sources; about 400 bytes each).
    pub(crate) fn new_sources_of(
        &self,
        terminals: impl IntoIterator<Item = u32>,
    ) -> Vec<SourceState> {
        let classes = self.classes.len();
        let terminals = terminals.into_iter();
        let mut out = Vec::with_capacity(terminals.size_hint().0 * classes);
        for t in terminals {
            for (ci, c) in self.classes.iter().enumerate() {
                let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
                rng.set_stream(((ci as u64) << 32) | u64::from(t));
                let mut s = SourceState::new(rng, t, ci as u8);
                if c.pattern.send_fraction(t) > 0.0 {
                    c.process.init(&mut s);
                }
                out.push(s);
            }
        }
        out
    }

    #[cfg(test)]
    pub(crate) fn source_index(&self, terminal: usize, class: usize) -> usize {
        terminal * self.classes.len() + class
    }

    /// First cycle >= the last `generate` call at which this source creates packets, or
    /// `None` if it never will again.
    pub(crate) fn next_event(&self, src: &SourceState) -> Option<u64> {
        src.next
    }

    /// Creates the packets due at `now` (call when `now == next_event`), appends them to
    /// `out` and advances the source. Events before `now` that were missed are created too;
    /// an event after `now` is left alone. May append nothing (a `diagonal` self share) or
    /// several packets (an all-to-all burst).
    pub(crate) fn generate(&self, src: &mut SourceState, now: u64, out: &mut Vec<NewPacket>) {
        let c = &self.classes[usize::from(src.class)];
        while let Some(t) = src.next {
            if t > now {
                break;
            }
            c.process.emit(&*c.pattern, &c.spec.sizes, src, t, out);
        }
    }

    /// Flits per terminal per cycle actually offered, averaged over terminals: the nominal
    /// load times the share of creations that produce a packet (permutation fixed points,
    /// `diagonal`'s self share and zero matrix rows send nothing).
    #[cfg(test)]
    pub(crate) fn offered_load(&self, class: usize) -> f64 {
        let c = &self.classes[class];
        c.nominal_load * c.send_mean
    }

    /// Flits per terminal per cycle requested: `load`, the time average of `phases`, or the
    /// load an all-to-all exchange implies.
    pub(crate) fn nominal_load(&self, class: usize) -> f64 {
        self.classes[class].nominal_load
    }

    /// Nominal load in effect at `cycle` (differs from `nominal_load` only with phases; 0
    /// after the last phase).
    #[cfg(test)]
    pub(crate) fn load_at(&self, class: usize, cycle: u64) -> f64 {
        let c = &self.classes[class];
        c.process.load_at(cycle, c.nominal_load)
    }

    #[cfg(test)]
    pub(crate) fn mean_packet_flits(&self, class: usize) -> f64 {
        self.classes[class].spec.sizes.mean()
    }

    /// Smallest and largest packet size in flits.
    pub(crate) fn packet_flits_range(&self, class: usize) -> (u32, u32) {
        self.classes[class].spec.sizes.bounds()
    }

    pub(crate) fn source_queue_limit(&self, class: usize) -> Option<usize> {
        self.classes[class].spec.source_queue
    }

    /// The class's `name`, or `class<i>`.
    #[cfg(test)]
    pub(crate) fn class_name(&self, class: usize) -> &str {
        &self.classes[class].name
    }

    /// The pattern name (`alltoall` for an all-to-all class).
    #[cfg(test)]
    pub(crate) fn pattern_name(&self, class: usize) -> &str {
        &self.classes[class].spec.pattern_name
    }

    #[cfg(test)]
    pub(crate) fn injection_name(&self, class: usize) -> &'static str {
        self.classes[class].spec.injection.name()
    }

    /// The exact destination probabilities of one packet creation at terminal `src`, sorted
    /// by destination, zero entries left out. They sum to 1 except where the pattern makes
    /// the source send to itself (then nothing is sent and the sum is less: 0 for a fixed
    /// point of a permutation or a zero matrix row, 1/3 for `diagonal`). Packets per cycle
    /// from `src` to `dst` = offered packet rate of a creation x probability, i.e. flits per
    /// cycle = `nominal_load(class) * p`.
    pub(crate) fn destination_distribution(&self, class: usize, src: usize) -> Vec<(u32, f64)> {
        patterns::distribution(&*self.classes[class].pattern, src as u32)
    }

    /// The share of terminal `src`'s creations that produce a packet (the sum of
    /// [`Traffic::destination_distribution`]).
    #[cfg(test)]
    pub(crate) fn send_fraction(&self, class: usize, src: usize) -> f64 {
        self.classes[class].pattern.send_fraction(src as u32)
    }

    /// Dense flits-per-cycle matrix of a class (`[src][dst]`), for small networks and tests
    /// (terminals squared in memory; the bounds use [`Traffic::aggregated_demand`]): the
    /// nominal load times the destination distribution.
    pub fn traffic_matrix(&self, class: usize) -> Vec<Vec<f64>> {
        let n = self.terminals as usize;
        let load = self.classes[class].nominal_load;
        (0..n)
            .map(|s| {
                let mut row = vec![0.0; n];
                for (d, p) in self.destination_distribution(class, s) {
                    row[d as usize] = load * p;
                }
                row
            })
            .collect()
    }
}

impl Class {
    fn build(
        cfg: &TrafficConfig,
        index: usize,
        topo: &Topology,
        seed: u64,
        base_dir: &Path,
    ) -> Result<Class> {
        let spec = cfg.resolve()?;
        let seed = seed.wrapping_add(spec.seed_offset.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(PATTERN_STREAM | index as u64);
        let pattern: Arc<dyn DestinationPattern> = match spec.pattern {
            Some(entry) => {
                let input = PatternInput::new(
                    &spec.pattern_name,
                    &cfg.params,
                    topo,
                    base_dir,
                    spec.self_packets,
                );
                Arc::from((entry.build)(&input, &mut rng)?)
            }
            None => Arc::new(Group::new(cfg.group, topo.num_terminals())?),
        };
        let (process, nominal_load) = Process::build(
            &spec.injection,
            &spec.load,
            &spec.sizes,
            pattern.group_size(),
        )?;
        #[cfg(test)]
        let n = topo.num_terminals();
        #[cfg(test)]
        let send_mean = (0..n as u32).map(|t| pattern.send_fraction(t)).sum::<f64>() / n as f64;
        Ok(Class {
            #[cfg(test)]
            name: spec.name.clone().unwrap_or_else(|| format!("class{index}")),
            spec,
            pattern,
            process,
            nominal_load,
            #[cfg(test)]
            send_mean,
            seed,
        })
    }

    fn set_load(&mut self, load: f64) -> Result<()> {
        if !(load.is_finite() && load >= 0.0) {
            return Err(Error::field(
                "load",
                format!(
                    "must be a finite number of flits per terminal per cycle >= 0 (got {load})"
                ),
            ));
        }
        match &mut self.spec.load {
            LoadSpec::Constant(l) => *l = load,
            LoadSpec::Phases(phases) => {
                if self.nominal_load <= 0.0 {
                    return Err(Error::field(
                        "phases",
                        "all phases have load 0, so they cannot be scaled to another load",
                    ));
                }
                let factor = load / self.nominal_load;
                for p in phases.iter_mut() {
                    p.1 *= factor;
                }
            }
            LoadSpec::Implied => {
                let InjectionSpec::AllToAll {
                    period,
                    packets_per_message,
                    ..
                } = &mut self.spec.injection
                else {
                    unreachable!("only alltoall has an implied load");
                };
                let others =
                    f64::from(self.pattern.group_size() - 1) * f64::from(*packets_per_message);
                let p = process::snap(others * self.spec.sizes.mean() / load);
                if p.is_nan() || p < 1.0 {
                    return Err(Error::field(
                        "load",
                        format!(
                            "{load} flits per cycle needs an all-to-all period of {p} cycles; the period must be at least 1 (load at most {})",
                            others * self.spec.sizes.mean()
                        ),
                    ));
                }
                *period = p;
            }
        }
        let (process, nominal) = Process::build(
            &self.spec.injection,
            &self.spec.load,
            &self.spec.sizes,
            self.pattern.group_size(),
        )?;
        self.process = process;
        self.nominal_load = nominal;
        Ok(())
    }
}
