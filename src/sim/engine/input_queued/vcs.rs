//! The input-queued router's VCs: input VCs (their pipeline state, buffered flits and route
//! candidates) and output VCs (credits, owner, grant rule).

use super::*;

/// Where an input VC stands in the pipeline. One byte, so that `InputVc` stays 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Zeroable)]
#[repr(u8)]
pub(super) enum VcState {
    /// Empty, or a head flit at the front waiting for route computation.
    Idle,
    /// Routed, waiting for an output VC.
    VcAllocation,
    /// Holds an output VC; flits go through switch allocation.
    Active,
}

/// The hot state of one input VC, in one 32-byte record so that the pipeline stages touch
/// one cache line per VC rather than one per array. The front flit lives in the record; the
/// flits behind it in a ring in `InputVcs::ring` (so a VC holding one flit never touches it).
/// All-zero is the empty, idle VC.
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub(super) struct InputVc {
    /// Cycle from which the current stage (route computation, VC or switch allocation) may
    /// act.
    pub(super) ready: u64,
    /// The front flit, when `len > 0`.
    pub(super) front: Flit,
    /// Flits held (the front one included), and the ring slot of the one behind the front.
    pub(super) len: u32,
    pub(super) ring_head: u32,
    /// When `Active`: the output VC, as its global port and VC.
    pub(super) output_port: u32,
    /// Route candidates stored for this VC (see `InputVcs::candidates`).
    pub(super) num_candidates: u16,
    pub(super) state: VcState,
    pub(super) output_vc: u8,
}

// Two records per 64-byte cache line: a field added here must replace one.
const _: () = assert!(std::mem::size_of::<InputVc>() == 32);

impl InputVc {
    /// The output VC's global index (`output_port * num_vcs + output_vc`), when `Active`.
    #[inline(always)]
    pub(super) fn output_vc_index(&self, num_vcs: usize) -> usize {
        self.output_port as usize * num_vcs + usize::from(self.output_vc)
    }
}

/// Ring slots are stored in blocks of `RING_BLOCK` consecutive slots of one input VC,
/// block-major: block `k` of every input VC lies in one array region. An emptied ring
/// restarts at slot 0, so at moderate load nearly all waiting flits sit in the first block,
/// and those of all VCs share a compact region instead of one cache line per VC `depth * 8`
/// bytes apart (a power-of-two stride, which also maps them onto few cache sets).
const RING_BLOCK: usize = 4;

/// Every input VC of the network (index = global port * num_vcs + vc).
pub(super) struct InputVcs {
    /// Zero-filled and 64-byte aligned, two records per cache line (tables.rs).
    pub(super) records: AlignedZeroed<InputVc>,
    /// The flits behind each VC's front flit (see `RING_BLOCK`), `depth` slots per VC.
    pub(super) ring: tables::HotTable<Flit>,
    /// Distance between consecutive blocks of one VC in `ring` (input VCs x `RING_BLOCK`).
    pub(super) block_stride: usize,
    pub(super) depth: u32,
    /// Route candidates of each input VC: `records[i].num_candidates` of them from
    /// `i * candidate_stride`.
    pub(super) candidate_stride: usize,
    pub(super) candidate_table: tables::HotTable<Candidate>,
    /// Per router, a bit set over its local input VCs: those holding flits.
    pub(super) words_per_router: usize,
    pub(super) nonempty: tables::HotTable<u64>,
}

impl InputVcs {
    pub(super) fn new(count: usize, depth: u32, routers: usize, words_per_router: usize) -> Self {
        let blocks = (depth as usize).div_ceil(RING_BLOCK);
        InputVcs {
            records: AlignedZeroed::new(count),
            ring: empty_flit_slots(blocks * count * RING_BLOCK).into(),
            block_stride: count * RING_BLOCK,
            depth,
            candidate_stride: 1,
            candidate_table: tables::zeroed(count).into(),
            words_per_router,
            nonempty: vec![0; routers * words_per_router].into(),
        }
    }

    /// Index in `ring` of slot `pos` of input VC `input_vc` (see `RING_BLOCK`).
    #[inline(always)]
    pub(super) fn ring_slot(&self, input_vc: usize, pos: u32) -> usize {
        let pos = pos as usize;
        (pos / RING_BLOCK) * self.block_stride + input_vc * RING_BLOCK + pos % RING_BLOCK
    }

    /// The route candidates computed for input VC `input_vc`.
    #[inline(always)]
    pub(super) fn candidates(&self, input_vc: usize) -> &[Candidate] {
        let start = input_vc * self.candidate_stride;
        &self.candidate_table[start..start + usize::from(self.records[input_vc].num_candidates)]
    }

    /// Keeps `list` as the route candidates of input VC `input_vc`. Inlined into both paths
    /// of the router pass (`process_router`, `process_lone_vc`); the rare widening stays
    /// out of line.
    #[inline(always)]
    pub(super) fn store_candidates(&mut self, input_vc: usize, list: &[Candidate]) {
        let n = list.len();
        if n > self.candidate_stride {
            self.widen_candidates(n);
        }
        let start = input_vc * self.candidate_stride;
        let dst = &mut self.candidate_table[start..start + n];
        if let [c] = list[..] {
            dst[0] = c; // the usual case, without a call to memcpy
        } else {
            dst.copy_from_slice(list);
        }
        self.records[input_vc].num_candidates =
            u16::try_from(n).expect("at most 65535 route candidates");
    }

    /// Room for `n` candidates per input VC (a routing function returned more than ever
    /// before).
    #[cold]
    #[inline(never)]
    fn widen_candidates(&mut self, n: usize) {
        let stride = n.next_power_of_two();
        let mut wider = tables::zeroed(self.records.len() * stride);
        for i in 0..self.records.len() {
            let old = self.candidates(i);
            wider[i * stride..i * stride + old.len()].copy_from_slice(old);
        }
        self.candidate_table = wider.into();
        self.candidate_stride = stride;
    }

    /// Whether router `r` holds flits in any input VC.
    #[inline(always)]
    pub(super) fn router_holds_flits(&self, r: usize) -> bool {
        let words = self.words_per_router;
        self.nonempty[r * words..(r + 1) * words]
            .iter()
            .any(|&w| w != 0)
    }

    /// The flits buffered in input VC `input_vc`, front first.
    pub(super) fn buffered(&self, input_vc: usize) -> impl Iterator<Item = Flit> + '_ {
        let record = self.records[input_vc];
        let behind = (1..record.len).map(move |k| {
            let pos = (record.ring_head + k - 1) % self.depth;
            self.ring[self.ring_slot(input_vc, pos)]
        });
        (record.len > 0)
            .then_some(record.front)
            .into_iter()
            .chain(behind)
    }
}

/// An output VC: its credits (free slots downstream) and the input VC holding it (`NONE` if
/// free), in 8 bytes. Its round-robin pointer, written at each grant, lives apart
/// (`VcAllocator::output_pointers`): a large network's router pass prefetches every output
/// VC of a router ahead of its visit, 8 records per cache line rather than 4 with the
/// pointer beside them (docs/benchmarks.md, "Output VCs in 8 bytes").
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
#[repr(C, align(8))]
pub(super) struct OutputVc {
    pub(super) credits: u32,
    pub(super) owner: u32,
}

const _: () = assert!(std::mem::size_of::<OutputVc>() == 8);

/// Every output VC of the network (index = global port * num_vcs + vc, which is also its
/// credit counter's number), and the rule for granting them.
pub(super) struct OutputVcs {
    pub(super) records: tables::HotTable<OutputVc>,
    /// Per VC number: allocated as in virtual cut-through (see `grant_need`).
    pub(super) cut_through: Vec<bool>,
    /// The grant rule when every VC has the same one (`uniform_need`), decided once.
    pub(super) same_need: SameNeed,
    pub(super) wait_for_tail_credit: bool,
    pub(super) depth: u32,
}

/// What every output VC's grant needs, when that does not differ by VC ([`OutputVcs::grant_need`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SameNeed {
    /// The same credits for every packet: none (wormhole) or the whole buffer
    /// (`wait_for_tail_credit`).
    Credits(u32),
    /// Room for the packet, or the whole buffer for a larger one (every VC cut-through).
    PacketSize,
    /// The VCs' rules differ.
    ByVc,
}

impl SameNeed {
    pub(super) fn new(cut_through: &[bool], wait_for_tail_credit: bool, depth: u32) -> Self {
        if wait_for_tail_credit {
            SameNeed::Credits(depth)
        } else if cut_through.iter().all(|&c| !c) {
            SameNeed::Credits(0)
        } else if cut_through.iter().all(|&c| c) {
            SameNeed::PacketSize
        } else {
            SameNeed::ByVc
        }
    }
}

impl OutputVcs {
    /// Credits an output VC numbered `vc` needs downstream before it may be granted to
    /// packet `packet` (besides being free): in wormhole none (each flit waits for its
    /// credit at switch allocation); on a cut-through VC room for the whole packet, or the
    /// whole buffer for a packet larger than it; with `wait_for_tail_credit` the whole
    /// buffer (the previous packet's tail credit is back).
    #[inline(always)]
    pub(super) fn grant_need(&self, packets: &Packets, packet: u32, vc: usize) -> u32 {
        if self.wait_for_tail_credit {
            self.depth
        } else if self.cut_through[vc] {
            self.cut_through_need(packets, packet)
        } else {
            0
        }
    }

    /// A cut-through VC's need: room for the packet, or the whole buffer for a larger one.
    #[inline(always)]
    fn cut_through_need(&self, packets: &Packets, packet: u32) -> u32 {
        packets.table[packet as usize].info.size.min(self.depth)
    }

    /// The credits a grant needs when they are the same on every VC (no cut-through VCs
    /// under wormhole: the common case), as `grant_need` gives them, without its tests of
    /// the configuration at every VC request.
    #[inline(always)]
    pub(super) fn uniform_need(&self, packets: &Packets, packet: u32) -> Option<u32> {
        match self.same_need {
            SameNeed::Credits(n) => Some(n),
            SameNeed::PacketSize => Some(self.cut_through_need(packets, packet)),
            SameNeed::ByVc => None,
        }
    }
}
