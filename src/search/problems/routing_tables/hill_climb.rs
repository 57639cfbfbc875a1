//! The hill-climbing step of the routing-table GA: move flows off the hottest channel while
//! that never raises another channel to the maximum.
//!
//! With several training patterns and `aggregate = "worst"` the objective is the worst
//! pattern's max channel load, so the climber works on that pattern's hottest channel and
//! accepts a move only if no channel of any pattern reaches the current maximum (working on
//! the summed demand instead stops short: its hottest channel need not be the worst
//! pattern's). With `aggregate = "average"` it works on the summed demand.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::{Decoding, RoutingTableProblem, load_targets};
use crate::routing::table::load::channel_loads;
use crate::routing::table::pair_index;
use crate::topology::model::Endpoint;

/// Moves per hill-climbing step: each moves one flow (or one forwarding entry) off the
/// hottest channel.
const MOVES: usize = 256;
/// Best-response sweeps over all pairs per hill-climbing step, and the potential's exponent
/// (high enough that draining a channel at the maximum outweighs loading several below it).
const SWEEPS: usize = 4;
const POWER: i32 = 12;

impl RoutingTableProblem {
    /// Demand vectors whose channel maxima the objective combines.
    fn climb_targets(&self) -> Vec<&[f64]> {
        load_targets(&self.demands, &self.combined, self.ops.aggregate)
    }

    pub(super) fn hill_climb(&self, genome: &mut [u8], rng: &mut ChaCha8Rng) {
        match &self.decoding {
            Decoding::Candidates { .. } => self.climb_candidates(genome, rng),
            Decoding::DestinationBased { .. } => self.climb_destinations(genome, rng),
        }
    }

    fn climb_candidates(&self, genome: &mut [u8], rng: &mut ChaCha8Rng) {
        let Decoding::Candidates {
            pairs, channels, ..
        } = &self.decoding
        else {
            return;
        };
        let targets = self.climb_targets();
        let mut loads = self.candidate_channel_loads(genome, &targets);
        self.balance_candidates(genome, &targets, &mut loads, rng);
        for _ in 0..MOVES {
            let Some((q, hot, max)) = hottest(&loads) else {
                return;
            };
            let mut users: Vec<usize> = (0..pairs.len())
                .filter(|&g| targets[q][pairs[g]] > 0.0)
                .filter(|&g| channels[g][genome[g] as usize].contains(&hot))
                .collect();
            users.shuffle(rng);
            let mut moved = false;
            'genes: for g in users {
                let pair = pairs[g];
                let old = &channels[g][genome[g] as usize];
                let mut options: Vec<usize> = (0..channels[g].len()).collect();
                options.shuffle(rng);
                for k in options {
                    let new = &channels[g][k];
                    if new.contains(&hot) {
                        continue;
                    }
                    let fits = targets.iter().zip(&loads).all(|(demand, load)| {
                        let rate = demand[pair];
                        rate == 0.0
                            || new.iter().all(|&c| {
                                let add = rate / self.bandwidth(c);
                                let back = if old.contains(&c) { add } else { 0.0 };
                                load[c] - back + add < max
                            })
                    });
                    if fits {
                        for (demand, load) in targets.iter().zip(loads.iter_mut()) {
                            for &c in old {
                                load[c] -= demand[pair] / self.bandwidth(c);
                            }
                            for &c in new {
                                load[c] += demand[pair] / self.bandwidth(c);
                            }
                        }
                        genome[g] = k as u8;
                        moved = true;
                        break 'genes;
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// Best-response sweeps on the convex potential `sum_c (load_c / max)^POWER` over all
    /// patterns: each pair in turn takes the candidate that lowers it most. Unlike the
    /// hottest-channel moves this accepts moves that leave the maximum where it is but
    /// drain channels one below it, which is what a max of whole flows needs to step down.
    fn balance_candidates(
        &self,
        genome: &mut [u8],
        targets: &[&[f64]],
        loads: &mut [Vec<f64>],
        rng: &mut ChaCha8Rng,
    ) {
        let Decoding::Candidates {
            pairs, channels, ..
        } = &self.decoding
        else {
            return;
        };
        let Some((_, _, max)) = hottest(loads) else {
            return;
        };
        let phi = |u: f64| (u / max).max(0.0).powi(POWER);
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        for _ in 0..SWEEPS {
            order.shuffle(rng);
            let mut improved = false;
            for &g in &order {
                let pair = pairs[g];
                let current = genome[g] as usize;
                // Take the pair's flow off, price every candidate, put it back on the best.
                for (demand, load) in targets.iter().zip(loads.iter_mut()) {
                    for &c in &channels[g][current] {
                        load[c] -= demand[pair] / self.bandwidth(c);
                    }
                }
                let cost = |k: usize, loads: &[Vec<f64>]| -> f64 {
                    targets
                        .iter()
                        .zip(loads)
                        .map(|(demand, load)| {
                            channels[g][k]
                                .iter()
                                .map(|&c| {
                                    let add = demand[pair] / self.bandwidth(c);
                                    phi(load[c] + add) - phi(load[c])
                                })
                                .sum::<f64>()
                        })
                        .sum()
                };
                let mut best = (cost(current, loads), current);
                for k in 0..channels[g].len() {
                    let c = cost(k, loads);
                    if c < best.0 * (1.0 - 1e-9) {
                        best = (c, k);
                    }
                }
                for (demand, load) in targets.iter().zip(loads.iter_mut()) {
                    for &c in &channels[g][best.1] {
                        load[c] += demand[pair] / self.bandwidth(c);
                    }
                }
                if best.1 != current {
                    genome[g] = best.1 as u8;
                    improved = true;
                }
            }
            if !improved {
                return;
            }
        }
    }

    /// Destination-based tables: re-point one (router, destination) entry on the hottest
    /// channel to another minimal port; everything that reaches the router for that
    /// destination follows (the rest of the path is the table's own, so still minimal).
    fn climb_destinations(&self, genome: &mut [u8], rng: &mut ChaCha8Rng) {
        let Decoding::DestinationBased { ports } = &self.decoding else {
            return;
        };
        let n = self.topo.num_routers();
        let targets = self.climb_targets();
        // The decoded table the genome's entries describe (before any LMC fitting).
        let table = self.unfitted_table(genome);
        let mut loads: Vec<Vec<f64>> = targets
            .iter()
            .map(|demand| {
                let d = crate::routing::table::load::RouterDemand {
                    num_routers: n,
                    demand: demand.to_vec(),
                };
                channel_loads(&self.topo, &table, &d)
            })
            .collect();
        // The channels from `r` to `d` when `r` leaves by option `k` of its entry.
        let walk = |genome: &[u8], r: usize, d: usize, k: usize| -> Vec<usize> {
            let mut out = Vec::new();
            let (mut at, mut choice) = (r, k);
            while at != d {
                let i = pair_index(n, at, d);
                let (port, peer) = ports[i][choice % ports[i].len()];
                out.push(
                    self.topo
                        .out_channel(at, port as usize)
                        .expect("a minimal port leads to a router"),
                );
                at = peer as usize;
                if at != d {
                    choice = genome[pair_index(n, at, d)] as usize;
                }
            }
            out
        };
        for _ in 0..MOVES {
            let Some((q, hot, max)) = hottest(&loads) else {
                return;
            };
            // Entries that can take a flow off `hot`: every router on a path through it, up
            // to `hot` itself, with another minimal port towards the destination.
            let mut entries: Vec<(usize, usize)> = Vec::new();
            for s in 0..n {
                for d in (0..n).filter(|&d| d != s && targets[q][pair_index(n, s, d)] > 0.0) {
                    let path = walk(genome, s, d, genome_at(genome, n, s, d));
                    let Some(at) = path.iter().position(|&c| c == hot) else {
                        continue;
                    };
                    for &c in &path[..=at] {
                        if let Endpoint::Router { router: r, .. } = self.topo.channel_ends(c).0
                            && ports[pair_index(n, r, d)].len() > 1
                            && !entries.contains(&(r, d))
                        {
                            entries.push((r, d));
                        }
                    }
                }
            }
            entries.shuffle(rng);
            let mut moved = false;
            'entries: for (r, d) in entries {
                let i = pair_index(n, r, d);
                // What reaches r for d, per target: the sources whose path passes r.
                let through: Vec<f64> = targets
                    .iter()
                    .map(|demand| {
                        (0..n)
                            .filter(|&s| s != d && demand[pair_index(n, s, d)] > 0.0)
                            .filter(|&s| {
                                s == r
                                    || table_passes(
                                        &walk(genome, s, d, genome_at(genome, n, s, d)),
                                        &self.topo,
                                        r,
                                    )
                            })
                            .map(|s| demand[pair_index(n, s, d)])
                            .sum()
                    })
                    .collect();
                if through[q] <= 0.0 {
                    continue;
                }
                let current = genome[i] as usize % ports[i].len();
                let old = walk(genome, r, d, current);
                let mut options: Vec<usize> =
                    (0..ports[i].len()).filter(|&k| k != current).collect();
                options.shuffle(rng);
                for k in options {
                    let new = walk(genome, r, d, k);
                    if new.contains(&hot) {
                        continue;
                    }
                    let fits = through.iter().zip(&loads).all(|(&amount, load)| {
                        amount == 0.0
                            || new.iter().all(|&c| {
                                let add = amount / self.bandwidth(c);
                                let back = if old.contains(&c) { add } else { 0.0 };
                                load[c] - back + add < max
                            })
                    });
                    if fits {
                        for (&amount, load) in through.iter().zip(loads.iter_mut()) {
                            for &c in &old {
                                load[c] -= amount / self.bandwidth(c);
                            }
                            for &c in &new {
                                load[c] += amount / self.bandwidth(c);
                            }
                        }
                        genome[i] = k as u8;
                        moved = true;
                        break 'entries;
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }
}

/// The gene of entry (`s`, `d`).
fn genome_at(genome: &[u8], n: usize, s: usize, d: usize) -> usize {
    genome[pair_index(n, s, d)] as usize
}

/// Whether the channels `path` pass router `r` (leave it, or arrive at it).
fn table_passes(path: &[usize], topo: &crate::topology::Topology, r: usize) -> bool {
    path.iter()
        .any(|&c| matches!(topo.channel_ends(c).0, Endpoint::Router { router, .. } if router == r))
}

/// The (target, channel, utilisation) of the most loaded channel (None without load).
fn hottest(loads: &[Vec<f64>]) -> Option<(usize, usize, f64)> {
    let mut best: Option<(usize, usize, f64)> = None;
    for (q, load) in loads.iter().enumerate() {
        for (c, &l) in load.iter().enumerate() {
            if best.is_none_or(|b| l > b.2) {
                best = Some((q, c, l));
            }
        }
    }
    best.filter(|b| b.2 > 0.0)
}
