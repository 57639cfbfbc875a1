//! The patterns without parameters: `uniform`, `diagonal` and the permutations `transpose`,
//! `bitcomp`, `bitrev`, `shuffle`, `tornado`, `neighbor`, `randperm`.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::{DestinationPattern, NONE, PatternInput, uniform_other};
use crate::error::{Error, Result};
use crate::topology::{Shape, Topology};

/// Any other terminal, uniformly (any terminal, the source included, with `itself`).
#[derive(Clone, Debug)]
pub(crate) struct Uniform {
    n: u32,
    itself: bool,
}

/// A fixed destination per source (`NONE`: the source does not send).
#[derive(Clone, Debug)]
pub(crate) struct Table {
    dest: Vec<u32>,
}

/// BookSim's diagonal: 1/3 to `src + 1`, 2/3 to itself (sent only with `itself`).
#[derive(Clone, Debug)]
pub(crate) struct Diagonal {
    n: u32,
    itself: bool,
}

type Built = Result<Box<dyn DestinationPattern>>;

pub(crate) fn uniform(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    Ok(Box::new(Uniform {
        n: input.terminals() as u32,
        itself: input.itself,
    }))
}

pub(crate) fn diagonal(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    Ok(Box::new(Diagonal {
        n: input.terminals() as u32,
        itself: input.itself,
    }))
}

pub(crate) fn bitcomp(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    let n32 = input.terminals() as u32;
    bit_pattern(input, false, |s, _| !s & (n32 - 1))
}

pub(crate) fn transpose(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    bit_pattern(input, true, |s, lg| {
        let half = lg / 2;
        let lo = (1u32 << half) - 1;
        ((s >> half) & lo) | ((s << half) & (lo << half))
    })
}

pub(crate) fn bitrev(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    bit_pattern(input, false, |s, lg| s.reverse_bits() >> (32 - lg))
}

pub(crate) fn shuffle(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    let n32 = input.terminals() as u32;
    bit_pattern(input, false, |s, lg| {
        ((s << 1) & (n32 - 1)) | (s >> (lg - 1))
    })
}

pub(crate) fn tornado(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    Ok(Box::new(digit_pattern(input.topo, input.itself, |k| {
        k.div_ceil(2) - 1
    })))
}

pub(crate) fn neighbor(input: &PatternInput, _: &mut ChaCha8Rng) -> Built {
    Ok(Box::new(digit_pattern(input.topo, input.itself, |_| 1)))
}

pub(crate) fn randperm(input: &PatternInput, rng: &mut ChaCha8Rng) -> Built {
    let n = input.terminals();
    let mut perm: Vec<u32> = (0..n as u32).collect();
    // A uniformly random derangement by rejection (about e tries); after many failures
    // (impossible in practice) fixed points are swapped away.
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
    Ok(Box::new(Table { dest: perm }))
}

/// A permutation; its fixed points send nothing unless `itself`.
pub(crate) fn table(n: usize, itself: bool, f: impl Fn(u32) -> u32) -> Table {
    let dest = (0..n as u32)
        .map(|s| {
            let d = f(s);
            if d == s && !itself { NONE } else { d }
        })
        .collect();
    Table { dest }
}

fn bit_pattern(input: &PatternInput, even: bool, f: impl Fn(u32, u32) -> u32) -> Built {
    let n = input.terminals();
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
                "\"{}\" needs a terminal count that is {need}; this topology has {n} terminals",
                input.name
            ),
        ));
    }
    Ok(Box::new(table(n, input.itself, |s| f(s, lg))))
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
fn digit_pattern(topo: &Topology, itself: bool, step: impl Fn(usize) -> usize) -> Table {
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

impl DestinationPattern for Uniform {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        if self.itself {
            Some(rng.random_range(0..self.n))
        } else {
            Some(uniform_other(src, self.n, rng))
        }
    }

    fn send_fraction(&self, _: u32) -> f64 {
        1.0
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let n = self.n;
        if self.itself {
            let p = 1.0 / f64::from(n);
            (0..n).map(|d| (d, p)).collect()
        } else {
            let p = 1.0 / f64::from(n - 1);
            (0..n).filter(|&d| d != src).map(|d| (d, p)).collect()
        }
    }

    fn uniform_over_all(&self) -> Option<bool> {
        Some(self.itself)
    }
}

impl DestinationPattern for Table {
    fn sample(&self, src: u32, _: &mut ChaCha8Rng) -> Option<u32> {
        Some(self.dest[src as usize]).filter(|&d| d != NONE)
    }

    fn send_fraction(&self, src: u32) -> f64 {
        f64::from(u8::from(self.dest[src as usize] != NONE))
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        match self.dest[src as usize] {
            NONE => Vec::new(),
            d => vec![(d, 1.0)],
        }
    }
}

impl DestinationPattern for Diagonal {
    fn sample(&self, src: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        match rng.random_range(0..3u32) {
            0 => Some((src + 1) % self.n),
            _ => self.itself.then_some(src),
        }
    }

    fn send_fraction(&self, _: u32) -> f64 {
        if self.itself { 1.0 } else { 1.0 / 3.0 }
    }

    fn destinations(&self, src: u32) -> Vec<(u32, f64)> {
        let mut v = vec![((src + 1) % self.n, 1.0 / 3.0)];
        if self.itself {
            v.push((src, 2.0 / 3.0));
        }
        v
    }
}
