//! Upper bound on the bisection width: a multilevel graph bisector in the style of METIS.
//!
//! Each restart coarsens the router graph by heavy-edge matching (visiting vertices in a random
//! order) until about [`COARSEST`] vertices remain, bisects the coarsest graph by greedy graph
//! growing from several random seeds, and then projects the bisection back level by level,
//! improving it at every level with Fiduccia–Mattheyses passes (lazy binary heaps of gains, each
//! vertex moves at most once per pass, the pass is rolled back to its best prefix). Coarse
//! levels allow a small weight imbalance; the finest level enforces the exact part sizes
//! floor(n/2) / ceil(n/2), so every returned cut is a valid bisection and its size is a proven
//! upper bound on the bisection width (nothing else about it is certified).
//!
//! Restarts use independent ChaCha8 streams derived from the seed and run in parallel; the
//! answer is the smallest cut, ties broken by restart index, so it does not depend on the number
//! of threads. Cheap "structured" cuts (split by router id, split along each translatable digit
//! of a symmetry) are refined with FM as extra candidates; on tori, meshes and hypercubes they
//! are already optimal.

use std::collections::BinaryHeap;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::topology::graph::RouterGraph;
use crate::topology::symmetry::Symmetry;

/// Coarsening stops once a level has at most this many vertices.
pub(crate) const COARSEST: usize = 80;
/// Greedy-growing attempts on the coarsest graph of every restart.
const INITIAL_TRIES: usize = 6;
/// FM passes per level (a level stops early when a pass does not improve).
const MAX_PASSES: usize = 10;
/// V-cycles per restart after the first multilevel bisection.
const VCYCLES: usize = 1;

/// Weighted graph of one level (CSR; `ew` are summed link multiplicities, `vw` router counts).
#[derive(Clone, Debug)]
struct Level {
    xadj: Vec<usize>,
    adj: Vec<u32>,
    ew: Vec<i64>,
    vw: Vec<i64>,
}

impl Level {
    fn from_graph(g: &RouterGraph) -> Self {
        let n = g.num_nodes();
        let mut xadj = Vec::with_capacity(n + 1);
        xadj.push(0);
        let mut adj = Vec::new();
        let mut ew = Vec::new();
        for u in 0..n {
            for (v, m) in g.neighbors(u) {
                adj.push(v as u32);
                ew.push(i64::from(m));
            }
            xadj.push(adj.len());
        }
        Level {
            xadj,
            adj,
            ew,
            vw: vec![1; n],
        }
    }

    fn n(&self) -> usize {
        self.vw.len()
    }

    fn range(&self, u: usize) -> std::ops::Range<usize> {
        self.xadj[u]..self.xadj[u + 1]
    }

    fn cut(&self, side: &[bool]) -> i64 {
        let mut c = 0;
        for u in 0..self.n() {
            for e in self.range(u) {
                if side[u] != side[self.adj[e] as usize] {
                    c += self.ew[e];
                }
            }
        }
        c / 2
    }

    fn weight_a(&self, side: &[bool]) -> i64 {
        (0..self.n()).filter(|&u| side[u]).map(|u| self.vw[u]).sum()
    }

    fn max_vw(&self) -> i64 {
        self.vw.iter().copied().max().unwrap_or(1)
    }

    /// Heavy-edge matching and contraction. Returns the coarse level and the map fine -> coarse,
    /// or `None` when matching no longer shrinks the graph noticeably.
    fn coarsen(
        &self,
        rng: &mut ChaCha8Rng,
        max_vw: i64,
        side: Option<&[bool]>,
    ) -> Option<(Level, Vec<u32>)> {
        let n = self.n();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        const FREE: u32 = u32::MAX;
        let mut mate = vec![FREE; n];
        for &u in &order {
            let u = u as usize;
            if mate[u] != FREE {
                continue;
            }
            let mut best: Option<usize> = None;
            let mut best_w = 0;
            for e in self.range(u) {
                let v = self.adj[e] as usize;
                if mate[v] != FREE
                    || self.vw[u] + self.vw[v] > max_vw
                    || side.is_some_and(|s| s[u] != s[v])
                {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => {
                        self.ew[e] > best_w || (self.ew[e] == best_w && self.vw[v] < self.vw[b])
                    }
                };
                if better {
                    best = Some(v);
                    best_w = self.ew[e];
                }
            }
            match best {
                Some(v) => {
                    mate[u] = v as u32;
                    mate[v] = u as u32;
                }
                None => mate[u] = u as u32,
            }
        }
        let mut cmap = vec![0u32; n];
        let mut nc = 0usize;
        for u in 0..n {
            let m = mate[u] as usize;
            if m >= u {
                cmap[u] = nc as u32;
                cmap[m] = nc as u32;
                nc += 1;
            }
        }
        if nc as f64 > 0.92 * n as f64 {
            return None;
        }
        let mut xadj = Vec::with_capacity(nc + 1);
        xadj.push(0);
        let mut adj: Vec<u32> = Vec::with_capacity(self.adj.len() / 2);
        let mut ew: Vec<i64> = Vec::with_capacity(self.adj.len() / 2);
        let mut vw = Vec::with_capacity(nc);
        let mut pos = vec![0usize; nc];
        for u in 0..n {
            let m = mate[u] as usize;
            if m < u {
                continue;
            }
            let c = cmap[u] as usize;
            let start = adj.len();
            let members: &[usize] = if m == u { &[u][..] } else { &[u, m][..] };
            let mut w = 0;
            for &x in members {
                w += self.vw[x];
                for e in self.range(x) {
                    let cv = cmap[self.adj[e] as usize] as usize;
                    if cv == c {
                        continue;
                    }
                    let p = pos[cv];
                    if p >= start && p < adj.len() && adj[p] as usize == cv {
                        ew[p] += self.ew[e];
                    } else {
                        pos[cv] = adj.len();
                        adj.push(cv as u32);
                        ew.push(self.ew[e]);
                    }
                }
            }
            vw.push(w);
            xadj.push(adj.len());
        }
        Some((Level { xadj, adj, ew, vw }, cmap))
    }
}

/// Allowed weights of part A (`side == true`): a result counts as balanced in `[lo, hi]`;
/// moves may pass through `[lo - slack, hi + slack]`.
#[derive(Clone, Copy, Debug)]
struct Window {
    lo: i64,
    hi: i64,
    slack: i64,
}

impl Window {
    fn violation(&self, w: i64) -> i64 {
        if w < self.lo {
            self.lo - w
        } else if w > self.hi {
            w - self.hi
        } else {
            0
        }
    }

    fn allows(&self, from: i64, to: i64) -> bool {
        (to >= self.lo - self.slack && to <= self.hi + self.slack)
            || self.violation(to) < self.violation(from)
    }
}

/// State of a bisection on one level with incrementally maintained gains.
struct Fm<'a> {
    lv: &'a Level,
    side: Vec<bool>,
    /// Cut reduction if the vertex switched sides.
    gain: Vec<i64>,
    weight_a: i64,
    cut: i64,
    /// Random tie-break priority of each vertex (fixed for one refinement).
    prio: Vec<u32>,
}

impl<'a> Fm<'a> {
    fn new(lv: &'a Level, side: Vec<bool>, rng: &mut ChaCha8Rng) -> Self {
        let n = lv.n();
        let mut gain = vec![0i64; n];
        for u in 0..n {
            for e in lv.range(u) {
                let v = lv.adj[e] as usize;
                gain[u] += if side[u] != side[v] {
                    lv.ew[e]
                } else {
                    -lv.ew[e]
                };
            }
        }
        let weight_a = lv.weight_a(&side);
        let cut = lv.cut(&side);
        let prio = (0..n).map(|_| rng.random()).collect();
        Fm {
            lv,
            side,
            gain,
            weight_a,
            cut,
            prio,
        }
    }

    /// Moves `u` to the other side, updating gains; calls `touched` for each neighbour.
    fn flip(&mut self, u: usize, mut touched: impl FnMut(usize, i64)) {
        let lv = self.lv;
        self.cut -= self.gain[u];
        self.weight_a += if self.side[u] { -lv.vw[u] } else { lv.vw[u] };
        self.side[u] = !self.side[u];
        self.gain[u] = -self.gain[u];
        let su = self.side[u];
        for e in lv.range(u) {
            let v = lv.adj[e] as usize;
            let w = lv.ew[e];
            // v was on u's old side: now across (gain of v falls); else now together (rises).
            if self.side[v] == su {
                self.gain[v] -= 2 * w;
            } else {
                self.gain[v] += 2 * w;
            }
            touched(v, self.gain[v]);
        }
    }

    /// Moves vertices (best gain first) from the heavy side until the weight is in the window.
    fn balance(&mut self, win: Window) {
        let lv = self.lv;
        let mut touched = Vec::new();
        while win.violation(self.weight_a) > 0 {
            let from_a = self.weight_a > win.hi;
            let mut heap: BinaryHeap<(i64, u32, u32)> = (0..lv.n())
                .filter(|&u| self.side[u] == from_a)
                .map(|u| (self.gain[u], self.prio[u], u as u32))
                .collect();
            let mut moved = false;
            while win.violation(self.weight_a) > 0 && (self.weight_a > win.hi) == from_a {
                let Some((g, _, u)) = heap.pop() else { break };
                let u = u as usize;
                if self.side[u] != from_a || self.gain[u] != g {
                    continue;
                }
                let to = self.weight_a + if from_a { -lv.vw[u] } else { lv.vw[u] };
                if win.violation(to) >= win.violation(self.weight_a) {
                    continue; // too heavy to help
                }
                touched.clear();
                self.flip(u, |x, _| touched.push(x));
                for &x in &touched {
                    if self.side[x] == from_a {
                        heap.push((self.gain[x], self.prio[x], x as u32));
                    }
                }
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }

    fn key(&self, win: Window) -> (i64, i64) {
        (win.violation(self.weight_a), self.cut)
    }

    /// One FM pass; returns true when it improved (balance violation, cut).
    fn pass(&mut self, win: Window, locked: &mut [bool], moves: &mut Vec<usize>) -> bool {
        let n = self.lv.n();
        let limit = (n / 4).clamp(50, 500);
        type Heap = BinaryHeap<(i64, u32, u32)>;
        let (mut hb, mut ha) = (Vec::new(), Vec::new());
        for u in 0..n {
            let entry = (self.gain[u], self.prio[u], u as u32);
            if self.side[u] {
                ha.push(entry)
            } else {
                hb.push(entry)
            }
        }
        let mut heaps: [Heap; 2] = [Heap::from(hb), Heap::from(ha)];
        let mut touched: Vec<usize> = Vec::new();
        locked.fill(false);
        moves.clear();
        let start = self.key(win);
        let mut best = start;
        let mut best_len = 0;
        loop {
            let mut cand: [Option<(i64, usize)>; 2] = [None, None];
            for s in 0..2 {
                while let Some(&(g, _, v)) = heaps[s].peek() {
                    let v = v as usize;
                    if locked[v] || self.side[v] as usize != s || self.gain[v] != g {
                        heaps[s].pop();
                        continue;
                    }
                    let to = self.weight_a
                        + if s == 1 {
                            -self.lv.vw[v]
                        } else {
                            self.lv.vw[v]
                        };
                    if win.allows(self.weight_a, to) {
                        cand[s] = Some((g, v));
                    }
                    break;
                }
            }
            let heavy_a = usize::from(2 * self.weight_a > win.lo + win.hi);
            let pick = match (cand[0], cand[1]) {
                (None, None) => break,
                (Some(b), None) => b,
                (None, Some(a)) => a,
                (Some(b), Some(a)) => {
                    if a.0 > b.0 || (a.0 == b.0 && heavy_a == 1) {
                        a
                    } else {
                        b
                    }
                }
            };
            let v = pick.1;
            locked[v] = true;
            touched.clear();
            self.flip(v, |x, _| touched.push(x));
            for &x in &touched {
                if !locked[x] {
                    heaps[self.side[x] as usize].push((self.gain[x], self.prio[x], x as u32));
                }
            }
            moves.push(v);
            let k = self.key(win);
            if k < best {
                best = k;
                best_len = moves.len();
            } else if moves.len() - best_len > limit {
                break;
            }
        }
        while moves.len() > best_len {
            let v = moves.pop().unwrap();
            self.flip(v, |_, _| {});
        }
        best < start
    }

    fn refine(&mut self, win: Window) {
        let n = self.lv.n();
        let mut locked = vec![false; n];
        let mut moves = Vec::new();
        for _ in 0..MAX_PASSES {
            if !self.pass(win, &mut locked, &mut moves) {
                break;
            }
        }
    }
}

/// Window of part-A weight for a level whose heaviest vertex weighs `max_vw`.
fn window(n: usize, max_vw: i64, finest: bool) -> Window {
    let lo = (n / 2) as i64;
    let hi = (n - n / 2) as i64;
    if finest {
        Window { lo, hi, slack: 2 }
    } else {
        let tol = max_vw.max((n as i64) / 200);
        Window {
            lo: lo - tol,
            hi: hi + tol,
            slack: max_vw,
        }
    }
}

/// Greedy graph growing: part A grows from `seed` by best-gain vertices up to half the weight.
fn grow(lv: &Level, seed: usize, rng: &mut ChaCha8Rng) -> Vec<bool> {
    let n = lv.n();
    let total: i64 = lv.vw.iter().sum();
    let target = total / 2;
    let mut fm = Fm::new(lv, vec![false; n], rng);
    // Entries (gain, priority, vertex); stale when the vertex's gain changed or it joined A.
    let mut heap: BinaryHeap<(i64, u32, u32)> = BinaryHeap::new();
    let mut touched = Vec::new();
    let mut next = Some(seed);
    while fm.weight_a < target {
        let v = match next.take() {
            Some(v) => v,
            None => match heap.pop() {
                Some((g, _, v)) => {
                    let v = v as usize;
                    if fm.side[v] || fm.gain[v] != g {
                        continue;
                    }
                    v
                }
                // A's component is exhausted: continue from any vertex outside A.
                None => match (0..n).find(|&u| !fm.side[u]) {
                    Some(u) => u,
                    None => break,
                },
            },
        };
        if fm.weight_a > 0 && fm.weight_a + lv.vw[v] - target > target - fm.weight_a {
            break;
        }
        touched.clear();
        fm.flip(v, |x, _| touched.push(x));
        for &x in &touched {
            if !fm.side[x] {
                heap.push((fm.gain[x], fm.prio[x], x as u32));
            }
        }
    }
    fm.side
}

/// Coarse levels below `finest` and the fine -> coarse maps between consecutive levels. With
/// `side`, only vertices on the same side are matched (for V-cycles), so the bisection can be
/// carried down unchanged.
fn hierarchy(
    finest: &Level,
    rng: &mut ChaCha8Rng,
    max_vw: i64,
    side: Option<&[bool]>,
) -> (Vec<Level>, Vec<Vec<u32>>, Vec<Vec<bool>>) {
    let mut coarse: Vec<Level> = Vec::new();
    let mut maps: Vec<Vec<u32>> = Vec::new();
    let mut sides: Vec<Vec<bool>> = side.map(|s| vec![s.to_vec()]).unwrap_or_default();
    loop {
        let lv = coarse.last().unwrap_or(finest);
        if lv.n() <= COARSEST {
            break;
        }
        let Some((c, cmap)) = lv.coarsen(rng, max_vw, sides.last().map(Vec::as_slice)) else {
            break;
        };
        if let Some(fine) = sides.last() {
            let mut cs = vec![false; c.n()];
            for (u, &cu) in cmap.iter().enumerate() {
                cs[cu as usize] = fine[u];
            }
            sides.push(cs);
        }
        coarse.push(c);
        maps.push(cmap);
    }
    (coarse, maps, sides)
}

/// Projects `side` (a bisection of the coarsest level) back to the finest level, refining
/// with FM at every level (and at the coarsest when `refine_top`); exact sizes at the end.
fn uncoarsen(
    finest: &Level,
    coarse: &[Level],
    maps: &[Vec<u32>],
    mut side: Vec<bool>,
    refine_top: bool,
    rng: &mut ChaCha8Rng,
) -> (Vec<bool>, i64) {
    let n = finest.n();
    let level = |l: usize| if l == 0 { finest } else { &coarse[l - 1] };
    let top = coarse.len();
    if refine_top && top > 0 {
        let lv = level(top);
        let mut fm = Fm::new(lv, side, rng);
        fm.refine(window(n, lv.max_vw(), false));
        side = fm.side;
    }
    for l in (0..top).rev() {
        let lv = level(l);
        let cmap = &maps[l];
        let fine: Vec<bool> = (0..lv.n()).map(|u| side[cmap[u] as usize]).collect();
        let win = window(n, lv.max_vw(), l == 0);
        let mut fm = Fm::new(lv, fine, rng);
        if l == 0 {
            fm.balance(win);
        }
        fm.refine(win);
        side = fm.side;
        if l == 0 {
            return (side, fm.cut);
        }
    }
    // No coarsening happened: `side` is already a refined finest-level bisection.
    let mut fm = Fm::new(finest, side, rng);
    let win = window(n, 1, true);
    fm.balance(win);
    fm.refine(win);
    (fm.side, fm.cut)
}

/// One multilevel bisection (one restart, ChaCha8 stream `stream` of `seed`): coarsening,
/// greedy growing at the coarsest level, FM while uncoarsening, then [`VCYCLES`] V-cycles
/// (re-coarsen respecting the bisection, refine again; kept only when better).
/// Returns (side, cut) with exact part sizes.
pub(crate) fn multilevel_bisection(g: &RouterGraph, seed: u64, stream: u64) -> (Vec<bool>, u64) {
    let n = g.num_nodes();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    if n < 2 {
        return (vec![true; n], 0);
    }
    let finest = Level::from_graph(g);
    let max_vw = ((3 * n) / (2 * COARSEST)).max(2) as i64;
    let (coarse, maps, _) = hierarchy(&finest, &mut rng, max_vw, None);
    // Initial bisection of the coarsest level.
    let coarsest = coarse.last().unwrap_or(&finest);
    let win = window(n, coarsest.max_vw(), coarse.is_empty());
    let mut best: Option<((i64, i64), Vec<bool>)> = None;
    for _ in 0..INITIAL_TRIES {
        let seed_vertex = rng.random_range(0..coarsest.n());
        let side = grow(coarsest, seed_vertex, &mut rng);
        let mut fm = Fm::new(coarsest, side, &mut rng);
        fm.balance(win);
        fm.refine(win);
        let key = fm.key(win);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, fm.side));
        }
    }
    let (mut side, mut cut) = uncoarsen(&finest, &coarse, &maps, best.unwrap().1, false, &mut rng);
    for _ in 0..VCYCLES {
        let (coarse, maps, sides) = hierarchy(&finest, &mut rng, max_vw, Some(&side));
        let top = sides.last().unwrap().clone();
        let (s, c) = uncoarsen(&finest, &coarse, &maps, top, true, &mut rng);
        if c < cut {
            side = s;
            cut = c;
        }
    }
    let a = side.iter().filter(|&&x| x).count();
    assert!(a == n / 2 || a == n - n / 2, "bisection lost its balance");
    let cut = cut as u64;
    debug_assert_eq!(cut, g.cut_size(&side));
    (side, cut)
}

/// Balances `side` to exact part sizes and improves it with FM passes (strict constraint).
fn refine_bisection(g: &RouterGraph, side: Vec<bool>, rng: &mut ChaCha8Rng) -> (Vec<bool>, u64) {
    let n = g.num_nodes();
    let lv = Level::from_graph(g);
    let win = window(n, 1, true);
    let mut fm = Fm::new(&lv, side, rng);
    fm.balance(win);
    fm.refine(win);
    let side = fm.side;
    let a = side.iter().filter(|&&s| s).count();
    assert!(a == n / 2 || a == n - n / 2, "bisection lost its balance");
    let cut = g.cut_size(&side);
    debug_assert_eq!(cut as i64, fm.cut);
    (side, cut)
}

/// Improves a given bisection (any sizes; it is balanced first) with strict FM passes.
pub(crate) fn fm_refine(g: &RouterGraph, side: Vec<bool>, seed: u64) -> (Vec<bool>, u64) {
    assert_eq!(side.len(), g.num_nodes());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    refine_bisection(g, side, &mut rng)
}

/// Cheap cuts that are optimal on many regular topologies: router ids split in halves, and
/// for each translatable digit of `symmetry`, the lower half of that digit's values.
pub(crate) fn structured_cuts(g: &RouterGraph, symmetry: Option<&Symmetry>) -> Vec<Vec<bool>> {
    let n = g.num_nodes();
    let mut cuts = vec![(0..n).map(|v| v < n / 2).collect::<Vec<bool>>()];
    if let Some(sym) = symmetry.filter(|s| s.num_nodes() == n) {
        let radices = sym.translatable_radices();
        for (d, &r) in radices.iter().enumerate() {
            if r < 2 {
                continue;
            }
            let cut: Vec<bool> = (0..n)
                .map(|v| sym.translation_vector(sym.translation_index(v))[d] < r / 2)
                .collect();
            if !cuts.contains(&cut) {
                cuts.push(cut);
            }
        }
    }
    cuts
}

/// Best bisection over `restarts` multilevel runs and the FM-refined structured cuts.
///
/// Returns the side vector (true = part A, sizes floor(n/2) or ceil(n/2)) and its cut. The
/// result depends only on the graph, the symmetry, `restarts` and `seed`.
pub fn partition(
    g: &RouterGraph,
    symmetry: Option<&Symmetry>,
    restarts: usize,
    seed: u64,
) -> (Vec<bool>, u64) {
    let n = g.num_nodes();
    if n < 2 {
        return (vec![true; n], 0);
    }
    let structured = structured_cuts(g, symmetry);
    let runs = restarts.max(1);
    let results: Vec<(u64, usize, Vec<bool>)> = (0..runs + structured.len())
        .into_par_iter()
        .map(|i| {
            let (side, cut) = if i < runs {
                multilevel_bisection(g, seed, i as u64)
            } else {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(1 << 40 | i as u64);
                refine_bisection(g, structured[i - runs].clone(), &mut rng)
            };
            (cut, i, side)
        })
        .collect();
    let (cut, _, side) = results
        .into_iter()
        .min_by_key(|(cut, i, _)| (*cut, *i))
        .unwrap();
    (side, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torus2(k: usize) -> RouterGraph {
        let mut e = Vec::new();
        for y in 0..k {
            for x in 0..k {
                let v = x + k * y;
                e.push((v, (x + 1) % k + k * y));
                e.push((v, x + k * ((y + 1) % k)));
            }
        }
        RouterGraph::from_edges(k * k, e)
    }

    #[test]
    fn coarsening_preserves_weights_and_links() {
        let g = torus2(8);
        let lv = Level::from_graph(&g);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (c, cmap) = lv.coarsen(&mut rng, 4, None).unwrap();
        assert_eq!(c.vw.iter().sum::<i64>(), 64);
        // A fine cut induced by a coarse side has the same size on both levels.
        let cside: Vec<bool> = (0..c.n()).map(|i| i % 2 == 0).collect();
        let fside: Vec<bool> = (0..64).map(|u| cside[cmap[u] as usize]).collect();
        assert_eq!(c.cut(&cside) as u64, g.cut_size(&fside));
    }

    #[test]
    fn multilevel_alone_is_balanced_and_consistent() {
        for k in [6usize, 10, 12] {
            let g = torus2(k);
            for s in 0..3 {
                let (side, cut) = multilevel_bisection(&g, 7, s);
                let a = side.iter().filter(|&&x| x).count();
                assert_eq!(a, k * k / 2);
                assert_eq!(cut, g.cut_size(&side));
                assert!(cut >= 2 * k as u64);
            }
        }
    }

    #[test]
    fn odd_sizes_are_floor_or_ceil() {
        let n = 101;
        let g = RouterGraph::from_edges(n, (0..n).map(|i| (i, (i + 1) % n)));
        let (side, cut) = partition(&g, None, 4, 1);
        let a = side.iter().filter(|&&x| x).count();
        assert!(a == 50 || a == 51);
        assert_eq!(cut, 2);
    }

    #[test]
    fn result_is_deterministic() {
        let g = torus2(10);
        let r1 = partition(&g, None, 5, 42);
        let r2 = partition(&g, None, 5, 42);
        assert_eq!(r1, r2);
    }
}
