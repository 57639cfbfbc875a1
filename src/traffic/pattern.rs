//! Destination patterns: which terminal a packet from a given source goes to.
//!
//! A pattern returns the source itself only with `self_packets` (BookSim2's behaviour, for
//! `uniform`, `diagonal` and the permutations): otherwise, where its definition would (a fixed
//! point of a permutation, the self share of `diagonal`, a stencil dimension of size 1) no
//! packet is created. `send_fraction` says which share of a source's creations produce a
//! packet.

use std::path::Path;

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::config::PatternSpec;
use super::matrix::{MatrixRows, read_matrix};
use crate::error::{Error, Result};
use crate::topology::{Shape, Topology};

/// "No destination" in a permutation table.
const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) enum Pattern {
    /// Any other terminal, uniformly (any terminal, the source included, with `itself`).
    Uniform {
        n: u32,
        itself: bool,
    },
    /// A fixed destination per source (`NONE`: the source does not send).
    Table {
        dest: Vec<u32>,
    },
    /// BookSim's diagonal: 1/3 to `src + 1`, 2/3 to itself (sent only with `itself`).
    Diagonal {
        n: u32,
        itself: bool,
    },
    Hotspot {
        n: u32,
        /// Sorted, distinct.
        spots: Vec<u32>,
        fraction: f64,
    },
    /// ADV+shift: a uniformly random terminal of group `(G + shift) mod groups`.
    Adv {
        shift: u32,
        groups: u32,
        group_of: Vec<u32>,
        /// Members of group `g` are `members[offsets[g]..offsets[g + 1]]`.
        offsets: Vec<u32>,
        members: Vec<u32>,
    },
    /// Terminal `x + X*(y + Y*z)` on a periodic X x Y x Z grid: one of the 6 neighbours.
    Stencil {
        dims: [u32; 3],
    },
    /// Same grid: any other terminal of the same Z line.
    ManyToMany {
        dims: [u32; 3],
    },
    /// Uniform among per-source target lists.
    Lists {
        offsets: Vec<u32>,
        targets: Vec<u32>,
    },
    Matrix(MatrixRows),
    /// All-to-all exchange groups of `size` consecutive terminals: any other member.
    Group {
        size: u32,
    },
}

fn uniform_other(src: u32, n: u32, rng: &mut ChaCha8Rng) -> u32 {
    let r = rng.random_range(0..n - 1);
    if r >= src { r + 1 } else { r }
}

/// A permutation; its fixed points send nothing unless `itself`.
fn table(n: usize, itself: bool, f: impl Fn(u32) -> u32) -> Pattern {
    let dest = (0..n as u32)
        .map(|s| {
            let d = f(s);
            if d == s && !itself { NONE } else { d }
        })
        .collect();
    Pattern::Table { dest }
}

fn bit_pattern(
    name: &str,
    n: usize,
    even: bool,
    itself: bool,
    f: impl Fn(u32, u32) -> u32,
) -> Result<Pattern> {
    let lg = n.trailing_zeros();
    if !n.is_power_of_two() || (even && lg % 2 == 1) {
        let need = if even {
            "an even power of two (4, 16, 64, 256, ...)"
        } else {
            "a power of two"
        };
        return Err(Error::field(
            "pattern",
            format!(
                "\"{name}\" needs a terminal count that is {need}; this topology has {n} terminals"
            ),
        ));
    }
    Ok(table(n, itself, |s| f(s, lg)))
}

/// The k-ary n-cube coordinates of terminals: the Cartesian dims when every router hosts
/// exactly one terminal (with the router-to-terminal map), else `None` (use a 1-D ring).
fn cube(topo: &Topology) -> Option<(Vec<usize>, Vec<u32>)> {
    let Shape::Cartesian { dims, .. } = &topo.shape else {
        return None;
    };
    if topo.num_terminals() != topo.num_routers() {
        return None;
    }
    let mut terminal_of = vec![NONE; topo.num_routers()];
    for (t, term) in topo.terminals.iter().enumerate() {
        if terminal_of[term.router] != NONE {
            return None;
        }
        terminal_of[term.router] = t as u32;
    }
    Some((dims.clone(), terminal_of))
}

/// A digit permutation (BookSim's tornado/neighbor): every coordinate `c` of radix `k`
/// becomes `(c + step(k)) mod k`.
fn digit_pattern(topo: &Topology, itself: bool, step: impl Fn(usize) -> usize) -> Pattern {
    let n = topo.num_terminals();
    match cube(topo) {
        Some((dims, terminal_of)) => table(n, itself, |t| {
            let mut r = topo.terminals[t as usize].router;
            let (mut dest, mut stride) = (0, 1);
            for &k in &dims {
                let c = r % k;
                r /= k;
                dest += (c + step(k)) % k * stride;
                stride *= k;
            }
            terminal_of[dest]
        }),
        None => table(n, itself, |t| ((t as usize + step(n)) % n) as u32),
    }
}

fn grid(dims: [usize; 3], n: usize) -> Result<[u32; 3]> {
    let product = dims[0]
        .checked_mul(dims[1])
        .and_then(|p| p.checked_mul(dims[2]));
    if product != Some(n) {
        return Err(Error::field(
            "dims",
            format!(
                "{} x {} x {} = {} terminals but the topology has {n}; set dims = [X, Y, Z] with X*Y*Z = {n}",
                dims[0],
                dims[1],
                dims[2],
                product.map_or("too many".to_string(), |p| p.to_string())
            ),
        ));
    }
    Ok(dims.map(|k| k as u32))
}

fn stencil_step(src: u32, dims: [u32; 3], dir: u32) -> u32 {
    let [x_n, y_n, _] = dims;
    let mut c = [src % x_n, src / x_n % y_n, src / (x_n * y_n)];
    let axis = (dir / 2) as usize;
    let k = dims[axis];
    c[axis] = if dir % 2 == 0 {
        (c[axis] + k - 1) % k
    } else {
        (c[axis] + 1) % k
    };
    c[0] + x_n * (c[1] + y_n * c[2])
}

impl Pattern {
    /// Builds the pattern for `topo`; `rng` draws the random structures (randperm,
    /// randneighbours) once; `itself`: packets to the source itself (`self_packets`).
    pub(crate) fn build(
        spec: &PatternSpec,
        topo: &Topology,
        base_dir: &Path,
        rng: &mut ChaCha8Rng,
        itself: bool,
    ) -> Result<Pattern> {
        let n = topo.num_terminals();
        let n32 = n as u32;
        Ok(match spec {
            PatternSpec::Uniform => Pattern::Uniform { n: n32, itself },
            PatternSpec::BitComp => {
                bit_pattern("bitcomp", n, false, itself, |s, _| !s & (n32 - 1))?
            }
            PatternSpec::Transpose => bit_pattern("transpose", n, true, itself, |s, lg| {
                let half = lg / 2;
                let lo = (1u32 << half) - 1;
                ((s >> half) & lo) | ((s << half) & (lo << half))
            })?,
            PatternSpec::BitRev => bit_pattern("bitrev", n, false, itself, |s, lg| {
                s.reverse_bits() >> (32 - lg)
            })?,
            PatternSpec::Shuffle => bit_pattern("shuffle", n, false, itself, |s, lg| {
                ((s << 1) & (n32 - 1)) | (s >> (lg - 1))
            })?,
            PatternSpec::Tornado => digit_pattern(topo, itself, |k| k.div_ceil(2) - 1),
            PatternSpec::Neighbor => digit_pattern(topo, itself, |_| 1),
            PatternSpec::RandPerm => {
                let mut perm: Vec<u32> = (0..n32).collect();
                // A uniformly random derangement by rejection (about e tries); after many
                // failures (impossible in practice) fixed points are swapped away.
                for _ in 0..1000 {
                    perm.shuffle(rng);
                    if perm.iter().enumerate().all(|(i, &d)| i as u32 != d) {
                        break;
                    }
                }
                for i in 0..n {
                    if perm[i] == i as u32 {
                        perm.swap(i, (i + 1) % n);
                    }
                }
                Pattern::Table { dest: perm }
            }
            PatternSpec::Diagonal => Pattern::Diagonal { n: n32, itself },
            PatternSpec::Hotspot { hotspots, fraction } => {
                let mut spots = Vec::with_capacity(hotspots.len());
                for (i, &h) in hotspots.iter().enumerate() {
                    if h >= n {
                        return Err(Error::field(
                            format!("hotspots[{i}]"),
                            format!("terminal {h} does not exist (the topology has {n})"),
                        ));
                    }
                    spots.push(h as u32);
                }
                spots.sort_unstable();
                if let Some(w) = spots.windows(2).find(|w| w[0] == w[1]) {
                    return Err(Error::field(
                        "hotspots",
                        format!("terminal {} is listed twice", w[0]),
                    ));
                }
                Pattern::Hotspot {
                    n: n32,
                    spots,
                    fraction: *fraction,
                }
            }
            PatternSpec::Adv { shift } => {
                let (a, g) = match topo.shape {
                    Shape::Dragonfly { a, g, .. } => (a, g),
                    _ => {
                        return Err(Error::field(
                            "pattern",
                            format!(
                                "\"adv\" (ADV+i) needs a dragonfly topology (groups); {} is not one",
                                topo.name
                            ),
                        ));
                    }
                };
                if *shift >= g {
                    return Err(Error::field(
                        "shift",
                        format!("must be between 1 and g - 1 = {} (got {shift})", g - 1),
                    ));
                }
                let group_of: Vec<u32> = topo
                    .terminals
                    .iter()
                    .map(|t| (t.router / a) as u32)
                    .collect();
                let mut offsets = vec![0u32; g + 1];
                for &grp in &group_of {
                    offsets[grp as usize + 1] += 1;
                }
                for i in 0..g {
                    offsets[i + 1] += offsets[i];
                }
                let mut fill = offsets.clone();
                let mut members = vec![0u32; n];
                for (t, &grp) in group_of.iter().enumerate() {
                    members[fill[grp as usize] as usize] = t as u32;
                    fill[grp as usize] += 1;
                }
                Pattern::Adv {
                    shift: *shift as u32,
                    groups: g as u32,
                    group_of,
                    offsets,
                    members,
                }
            }
            PatternSpec::Stencil3d { dims } => Pattern::Stencil {
                dims: grid(*dims, n)?,
            },
            PatternSpec::ManyToMany { dims } => Pattern::ManyToMany {
                dims: grid(*dims, n)?,
            },
            PatternSpec::RandNeighbours { min, max } => {
                let mut offsets = Vec::with_capacity(n + 1);
                let mut targets = Vec::new();
                offsets.push(0u32);
                for t in 0..n32 {
                    let k = rng.random_range(*min..=*max).min(n - 1);
                    let first = targets.len();
                    while targets.len() - first < k {
                        let d = uniform_other(t, n32, rng);
                        if !targets[first..].contains(&d) {
                            targets.push(d);
                        }
                    }
                    offsets.push(targets.len() as u32);
                }
                Pattern::Lists { offsets, targets }
            }
            PatternSpec::Matrix { path } => {
                let full = if path.is_absolute() {
                    path.clone()
                } else {
                    base_dir.join(path)
                };
                Pattern::Matrix(read_matrix(&full, n, "matrix")?)
            }
            PatternSpec::Group { size } => {
                let size = size.unwrap_or(n);
                if size < 2 || size > n || n % size != 0 {
                    return Err(Error::field(
                        "group",
                        format!(
                            "must be at least 2 and divide the terminal count {n} (got {size})"
                        ),
                    ));
                }
                Pattern::Group { size: size as u32 }
            }
        })
    }

    /// Exchange group size of an all-to-all pattern (else 0).
    pub(crate) fn group_size(&self) -> u32 {
        match self {
            Pattern::Group { size } => *size,
            _ => 0,
        }
    }

    /// Draws the destination of one packet from `src`, or `None` when this creation sends
    /// nothing (the pattern's destination is the source itself).
    pub(crate) fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        match self {
            Pattern::Uniform { n, itself: false } => Some(uniform_other(src, *n, rng)),
            Pattern::Uniform { n, itself: true } => Some(rng.random_range(0..*n)),
            Pattern::Table { dest } => Some(dest[src as usize]).filter(|&d| d != NONE),
            Pattern::Diagonal { n, itself } => match rng.random_range(0..3u32) {
                0 => Some((src + 1) % n),
                _ => itself.then_some(src),
            },
            Pattern::Hotspot { n, spots, fraction } => {
                if *fraction > 0.0 && rng.random::<f64>() < *fraction {
                    match spots.binary_search(&src) {
                        Err(_) => {
                            return Some(spots[rng.random_range(0..spots.len() as u32) as usize]);
                        }
                        Ok(i) if spots.len() > 1 => {
                            let mut r = rng.random_range(0..spots.len() as u32 - 1) as usize;
                            if r >= i {
                                r += 1;
                            }
                            return Some(spots[r]);
                        }
                        Ok(_) => {}
                    }
                }
                Some(uniform_other(src, *n, rng))
            }
            Pattern::Adv { .. } => {
                let m = self.adv_members(src);
                (!m.is_empty()).then(|| m[rng.random_range(0..m.len() as u32) as usize])
            }
            Pattern::Stencil { dims } => {
                let d = stencil_step(src, *dims, rng.random_range(0..6u32));
                (d != src).then_some(d)
            }
            Pattern::ManyToMany { dims } => {
                let plane = dims[0] * dims[1];
                if dims[2] < 2 {
                    return None;
                }
                Some(src % plane + plane * uniform_other(src / plane, dims[2], rng))
            }
            Pattern::Lists { offsets, targets } => {
                let list =
                    &targets[offsets[src as usize] as usize..offsets[src as usize + 1] as usize];
                (!list.is_empty()).then(|| list[rng.random_range(0..list.len() as u32) as usize])
            }
            Pattern::Matrix(m) => m.sample(src, rng),
            Pattern::Group { size } => {
                let base = src / size * size;
                Some(base + uniform_other(src - base, *size, rng))
            }
        }
    }

    fn adv_members(&self, src: u32) -> &[u32] {
        let Pattern::Adv {
            shift,
            groups,
            group_of,
            offsets,
            members,
        } = self
        else {
            return &[];
        };
        let g = ((group_of[src as usize] + shift) % groups) as usize;
        &members[offsets[g] as usize..offsets[g + 1] as usize]
    }

    /// The share of `src`'s creations that produce a packet (1 for most patterns).
    pub(crate) fn send_fraction(&self, src: u32) -> f64 {
        match self {
            Pattern::Uniform { .. } | Pattern::Hotspot { .. } => 1.0,
            Pattern::Table { dest } => f64::from(u8::from(dest[src as usize] != NONE)),
            Pattern::Diagonal { itself: true, .. } => 1.0,
            Pattern::Diagonal { itself: false, .. } => 1.0 / 3.0,
            Pattern::Adv { .. } => f64::from(u8::from(!self.adv_members(src).is_empty())),
            Pattern::Stencil { dims } => {
                (0..6u32)
                    .filter(|&dir| stencil_step(src, *dims, dir) != src)
                    .count() as f64
                    / 6.0
            }
            Pattern::ManyToMany { dims } => f64::from(u8::from(dims[2] >= 2)),
            Pattern::Lists { offsets, .. } => {
                f64::from(u8::from(offsets[src as usize + 1] > offsets[src as usize]))
            }
            Pattern::Matrix(m) => f64::from(u8::from(m.sends(src))),
            Pattern::Group { .. } => 1.0,
        }
    }

    /// The exact probability of each destination of one creation at `src`, sorted by
    /// destination; the probabilities sum to `send_fraction(src)`.
    pub(crate) fn distribution(&self, src: u32) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = match self {
            Pattern::Uniform { n, itself: false } => {
                let p = 1.0 / f64::from(n - 1);
                (0..*n).filter(|&d| d != src).map(|d| (d, p)).collect()
            }
            Pattern::Uniform { n, itself: true } => {
                let p = 1.0 / f64::from(*n);
                (0..*n).map(|d| (d, p)).collect()
            }
            Pattern::Table { dest } => match dest[src as usize] {
                NONE => Vec::new(),
                d => vec![(d, 1.0)],
            },
            Pattern::Diagonal { n, itself } => {
                let mut v = vec![((src + 1) % n, 1.0 / 3.0)];
                if *itself {
                    v.push((src, 2.0 / 3.0));
                }
                v
            }
            Pattern::Hotspot { n, spots, fraction } => {
                let others: Vec<u32> = spots.iter().copied().filter(|&h| h != src).collect();
                let (f, rest) = if others.is_empty() {
                    (0.0, 1.0)
                } else {
                    (*fraction, 1.0 - fraction)
                };
                let mut v: Vec<(u32, f64)> = (0..*n)
                    .filter(|&d| d != src)
                    .map(|d| (d, rest / f64::from(n - 1)))
                    .collect();
                for h in others.iter() {
                    v.push((*h, f / others.len() as f64));
                }
                v
            }
            Pattern::Adv { .. } => {
                let m = self.adv_members(src);
                m.iter().map(|&d| (d, 1.0 / m.len() as f64)).collect()
            }
            Pattern::Stencil { dims } => (0..6u32)
                .map(|dir| (stencil_step(src, *dims, dir), 1.0 / 6.0))
                .filter(|&(d, _)| d != src)
                .collect(),
            Pattern::ManyToMany { dims } => {
                let plane = dims[0] * dims[1];
                let z = src / plane;
                let p = 1.0 / f64::from(dims[2].saturating_sub(1).max(1));
                (0..dims[2])
                    .filter(|&k| k != z)
                    .map(|k| (src % plane + plane * k, p))
                    .collect()
            }
            Pattern::Lists { offsets, targets } => {
                let list =
                    &targets[offsets[src as usize] as usize..offsets[src as usize + 1] as usize];
                list.iter().map(|&d| (d, 1.0 / list.len() as f64)).collect()
            }
            Pattern::Matrix(m) => m.distribution(src),
            Pattern::Group { size } => {
                let base = src / size * size;
                let p = 1.0 / f64::from(size - 1);
                (base..base + size)
                    .filter(|&d| d != src)
                    .map(|d| (d, p))
                    .collect()
            }
        };
        out.sort_unstable_by_key(|&(d, _)| d);
        let mut merged: Vec<(u32, f64)> = Vec::with_capacity(out.len());
        for (d, p) in out {
            match merged.last_mut() {
                Some(last) if last.0 == d => last.1 += p,
                _ => merged.push((d, p)),
            }
        }
        merged.retain(|&(_, p)| p > 0.0);
        merged
    }
}
