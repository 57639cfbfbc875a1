//! VC and switch allocation: separable input-first (round-robin) and iSLIP.

use super::*;

/// A VC-allocation request: the input VC (local number) nearest the output VC's round-robin
/// pointer so far, its distance from the pointer and the candidate it requested through.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct VcRequest {
    distance: u32,
    local_input_vc: u32,
    candidate: u32,
}

/// An input VC's VC-allocation request: the output VC it asks for and the candidate it asks
/// through (local numbers).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct VcPick {
    pub(super) local_input_vc: u32,
    pub(super) local_output_vc: u32,
    pub(super) candidate: u32,
}

/// VC allocation's state.
pub(super) struct VcAllocator {
    /// Separable input-first VC allocation: each input VC's round-robin pointer over its
    /// router's local output VC numbers (empty under `first_free`).
    pub(super) input_pointers: tables::HotTable<u32>,
    /// Each output VC's round-robin pointer over its router's local input VC numbers (the
    /// output stage; by global output VC, as `OutputVcs::records`).
    pub(super) output_pointers: tables::HotTable<u32>,
    /// Per-router scratch: the requested local output VCs (a bit set) and the best request
    /// for each.
    requested: tables::HotTable<u64>,
    best: tables::HotTable<VcRequest>,
    /// The VC-allocation requests of the router visit under way, in input VC order. They
    /// are listed first and entered into the output stage only when needed: a lone request
    /// (most visits at low load) is granted directly, as the output stage would grant it,
    /// and so are several requests for as many different output VCs while the session's
    /// `on_forward` is not called (each wins its output VC; the grants commute). Listing
    /// them costs no branch per request (how many requests came before is data the
    /// predictor cannot learn); what to do with them is decided once per visit.
    pub(super) picks: tables::HotTable<VcPick>,
}

impl VcAllocator {
    /// `vcs`: the network's VCs, `ports * num_vcs` (as many input VCs as output VCs).
    pub(super) fn new(kind: VcAllocatorKind, vcs: usize, ports: &Ports) -> Self {
        VcAllocator {
            input_pointers: match kind {
                VcAllocatorKind::SeparableInputFirst => vec![0; vcs].into(),
                VcAllocatorKind::FirstFree => Vec::new().into(),
            },
            output_pointers: vec![0; vcs].into(),
            requested: vec![0; ports.words_per_router()].into(),
            best: vec![VcRequest::default(); ports.local_port.len()].into(),
            picks: vec![VcPick::default(); ports.local_port.len()].into(),
        }
    }

    /// Local input VC `local_input_vc` requests local output VC `local_output_vc` through
    /// its candidate `candidate`, at `distance` from the output VC's pointer: kept if no
    /// nearer request came first.
    #[inline(always)]
    pub(super) fn request(
        &mut self,
        local_output_vc: usize,
        local_input_vc: u32,
        candidate: u32,
        distance: u32,
    ) {
        let bit = 1u64 << (local_output_vc % 64);
        let old = self.best[local_output_vc];
        // A select, not a branch, as in `offer_output`.
        let nearer = (self.requested[local_output_vc / 64] & bit == 0) | (distance < old.distance);
        self.requested[local_output_vc / 64] |= bit;
        self.best[local_output_vc] = VcRequest {
            distance: select_u32(nearer, distance, old.distance),
            local_input_vc: select_u32(nearer, local_input_vc, old.local_input_vc),
            candidate: select_u32(nearer, candidate, old.candidate),
        };
    }
}

/// A router's switch requests as one integer, bit `v` for local input VC `v`
/// (`input_stage_by_port`).
trait RequestBits:
    Copy
    + Eq
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::Not<Output = Self>
    + std::ops::Shl<u32, Output = Self>
    + std::ops::Shr<u32, Output = Self>
{
    const ZERO: Self;
    const ONES: Self;
    const BITS: u32;
    fn trailing_zeros(self) -> u32;
    fn wrapping_shl(self, n: u32) -> Self;
}

macro_rules! request_bits {
    ($($t:ty),*) => {$(
        impl RequestBits for $t {
            const ZERO: Self = 0;
            const ONES: Self = <$t>::MAX;
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn wrapping_shl(self, n: u32) -> Self {
                <$t>::wrapping_shl(self, n)
            }
        }
    )*};
}

request_bits!(u64, u128);

/// Switch allocation's per-router scratch.
pub(super) struct SwitchAllocator {
    /// The local input VCs that request the switch (a bit set).
    pub(super) requesting: tables::HotTable<u64>,
    /// Separable with one VC per input port: the local output ports some input port picked
    /// (a bit set) and, per output port, the picking input nearest the output's pointer as
    /// (distance from the pointer, local input VC).
    offered: tables::HotTable<u64>,
    best_offer: tables::HotTable<(u32, u32)>,
    /// The general allocators' requests (input port, input VC, output port), the picks and
    /// the winning input VCs.
    requests: Vec<(u32, u32, u32)>,
    picked: Vec<(u32, u32, u32)>,
    winners: Vec<u32>,
}

impl SwitchAllocator {
    pub(super) fn new(ports: &Ports) -> Self {
        SwitchAllocator {
            requesting: vec![0; ports.words_per_router()].into(),
            offered: vec![0; ports.max_ports.div_ceil(64).max(1)].into(),
            best_offer: vec![(0, 0); ports.max_ports].into(),
            requests: Vec::new(),
            picked: Vec::new(),
            winners: Vec::new(),
        }
    }
}

impl Engine<'_, InputQueuedRouter> {
    /// Output stage of VC allocation: each requested output VC grants the requester nearest
    /// its round-robin pointer (kept by `request_vc`), in increasing output VC order. Returns
    /// whether a granted input VC may already request the switch this cycle.
    #[inline]
    pub(super) fn allocate_vcs(&mut self, at: &RouterLayout) -> bool {
        let mut any_switch_request = false;
        for w in 0..self.router.input_vcs.words_per_router {
            let mut bits = std::mem::take(&mut self.router.vc_allocator.requested[w]);
            while bits != 0 {
                let local_output_vc = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let request = self.router.vc_allocator.best[local_output_vc];
                any_switch_request |= self.grant_vc(
                    at,
                    VcPick {
                        local_input_vc: request.local_input_vc,
                        local_output_vc: local_output_vc as u32,
                        candidate: request.candidate,
                    },
                );
            }
        }
        any_switch_request
    }

    /// Grants output VC `pick.local_output_vc` of router `at` to input VC
    /// `pick.local_input_vc`, which requested it through its candidate `pick.candidate`: the
    /// grant, both round-robin pointers past it, and with no VC allocation delay the switch
    /// request. Returns whether the input VC requests the switch this cycle.
    #[inline(always)]
    pub(super) fn grant_vc(&mut self, at: &RouterLayout, pick: VcPick) -> bool {
        let span = at.num_local_vcs as usize;
        let local_input_vc = pick.local_input_vc as usize;
        let local_output_vc = pick.local_output_vc as usize;
        let (input_vc, output_vc) = (at.first_vc + local_input_vc, at.first_vc + local_output_vc);
        let output_port = at.first_port + self.ports.local_port[local_output_vc] as usize;
        let vc = self.ports.local_vc[local_output_vc] as usize;
        self.router.output_vcs.records[output_vc].owner = input_vc as u32;
        let packet = self.router.input_vcs.records[input_vc].front.packet as usize;
        // One field read, not the packet's whole `info` copied (wide loads).
        let size = self.packets.table[packet].info.size;
        let record = &mut self.router.input_vcs.records[input_vc];
        record.state = VcState::Active;
        record.output_port = output_port as u32;
        record.output_vc = vc as u8;
        record.ready = self.now + u64::from(self.params.vc_alloc_delay);
        // The granted packet's buffered flits: all of them when the packet is not complete
        // here yet, else its `size` (the flits behind its tail belong to later packets).
        self.router.port_state[output_port].output_queue += record.len.min(size);
        // The requesting candidate is the first one that holds the granted VC.
        let vcs = &self.router.input_vcs;
        let chosen = vcs.candidate_table[input_vc * vcs.candidate_stride + pick.candidate as usize];
        self.routing.forwarded(
            self.now,
            &self.ports,
            &mut self.packets,
            at,
            local_input_vc,
            packet as u32,
            chosen,
            vc,
            || self.router.view(&self.net),
        );
        self.router.vc_allocator.output_pointers[output_vc] = if local_input_vc + 1 == span {
            0
        } else {
            local_input_vc as u32 + 1
        };
        let pointers = &mut self.router.vc_allocator.input_pointers;
        if let Some(pointer) = pointers.get_mut(input_vc) {
            *pointer = if local_output_vc + 1 == span {
                0
            } else {
                local_output_vc as u32 + 1
            };
        }
        if self.params.vc_alloc_delay == 0
            && self.can_send(&self.router.input_vcs.records[input_vc])
        {
            self.router.switch_allocator.requesting[local_input_vc / 64] |=
                1 << (local_input_vc % 64);
            return true;
        }
        false
    }

    /// Switch allocation among the input VCs of router `at` that request the switch, then
    /// switch traversal of the winners in increasing output port order.
    #[inline]
    pub(super) fn allocate_switch(&mut self, at: &RouterLayout) {
        if self.single_separable_allocator() {
            self.separable_switch_single(at);
            return;
        }
        self.general_switch_allocation(at);
    }

    /// Whether switch allocation is separable with one VC per input port (the default,
    /// `separable_switch_single`).
    #[inline(always)]
    pub(super) fn single_separable_allocator(&self) -> bool {
        self.params.allocator == AllocatorKind::Separable && self.params.input_speedup == 1
    }

    /// `allocate_switch` with the general allocators, over the request list `(input port,
    /// input VC, output port)` grouped by input port. Out of line, so that the router pass
    /// keeps its registers for the default allocator.
    #[inline(never)]
    pub(super) fn general_switch_allocation(&mut self, at: &RouterLayout) {
        let (r, base) = (at.router, at.first_vc);
        let mut requests = std::mem::take(&mut self.router.switch_allocator.requests);
        requests.clear();
        for w in 0..self.router.input_vcs.words_per_router {
            let mut bits = std::mem::take(&mut self.router.switch_allocator.requesting[w]);
            while bits != 0 {
                let local_input_vc = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let input_vc = base + local_input_vc;
                let in_port =
                    (at.first_port + self.ports.local_port[local_input_vc] as usize) as u32;
                requests.push((
                    in_port,
                    input_vc as u32,
                    self.router.input_vcs.records[input_vc].output_port,
                ));
            }
        }
        let mut winners = std::mem::take(&mut self.router.switch_allocator.winners);
        winners.clear();
        match self.params.allocator {
            AllocatorKind::Separable => self.separable_switch(r, &mut requests, &mut winners),
            AllocatorKind::Islip => self.islip_switch(r, &requests, &mut winners),
        }
        for &input_vc in &winners {
            self.traverse(at, input_vc as usize - base);
        }
        self.router.switch_allocator.requests = requests;
        self.router.switch_allocator.winners = winners;
    }

    /// Separable input-first with one VC per input port (the default): each input port
    /// picks its requesting VC nearest its round-robin pointer, each output port grants the
    /// picking input port nearest its pointer; both pointers move past the winner. Same
    /// result as `separable_switch`, without sorting.
    #[inline]
    fn separable_switch_single(&mut self, at: &RouterLayout) {
        let first_port = at.first_port;
        if let Some(local_input_vc) = self.lone_switch_request() {
            // It wins both stages (`switch_granted`, as below). Most router visits at low
            // load have one request; skipping the stages' scratch saves 4% of the mesh
            // bench's instructions.
            let out =
                self.router.input_vcs.records[at.first_vc + local_input_vc].output_port as usize;
            self.switch_granted(at, out, local_input_vc);
            return;
        }
        let requesting = &mut self.router.switch_allocator.requesting;
        match self.router.input_vcs.words_per_router {
            1 => {
                let requests = std::mem::take(&mut requesting[0]);
                self.input_stage_by_port(at, requests);
            }
            2 => {
                let low = u128::from(std::mem::take(&mut requesting[0]));
                let requests = low | u128::from(std::mem::take(&mut requesting[1])) << 64;
                self.input_stage_by_port(at, requests);
            }
            _ => self.input_stage(at),
        }
        // Output stage, in increasing output port order.
        for w in 0..self.router.switch_allocator.offered.len() {
            let mut bits = std::mem::take(&mut self.router.switch_allocator.offered[w]);
            while bits != 0 {
                let out = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let local_input_vc = self.router.switch_allocator.best_offer[out].1 as usize;
                self.switch_granted(at, first_port + out, local_input_vc);
            }
        }
    }

    /// The separable allocator's input stage when the router's local VCs fit in one or two
    /// words (`B`: every router of the bench cases): each requesting
    /// input port offers its requesting VC nearest its pointer, found without a comparison
    /// per VC: the lowest bit of the port's request bits rotated to start at the pointer.
    /// One pass per requesting port rather than per VC, and no branch on which VC is
    /// nearer (data the predictor cannot learn: a fifth of the dragonfly bench's
    /// mispredicted branches were these comparisons).
    #[inline(always)]
    fn input_stage_by_port<B: RequestBits>(&mut self, at: &RouterLayout, mut requests: B) {
        // At most 64: every port's VCs, and at most two words of the router's, fit in `B`.
        let num_vcs = self.num_vcs as u32;
        let port_mask = B::ONES >> (B::BITS - num_vcs);
        while requests != B::ZERO {
            let port = self.ports.local_port[requests.trailing_zeros() as usize];
            let first = port * num_vcs; // the port's first local VC
            let bits = (requests >> first) & port_mask;
            requests = requests & !(port_mask << first);
            let pointer = self.router.port_state[at.first_port + port as usize].input_pointer;
            // `wrapping_shl`: at pointer 0 a shift by `num_vcs` (64 at most) is no rotation.
            let rotated = ((bits >> pointer) | bits.wrapping_shl(num_vcs - pointer)) & port_mask;
            let vc = pointer + rotated.trailing_zeros();
            let vc = vc - (num_vcs & 0u32.wrapping_sub(u32::from(vc >= num_vcs)));
            self.offer_output(at, port, (first + vc) as usize);
        }
    }

    /// The separable allocator's input stage over the requesting VCs in increasing order
    /// (grouped by port), for routers of more than 128 local VCs.
    #[inline(always)]
    fn input_stage(&mut self, at: &RouterLayout) {
        let num_vcs = self.num_vcs as u32;
        let first_port = at.first_port;
        let mut port = u32::MAX;
        let mut pick = (u32::MAX, 0usize); // (distance from the port's pointer, VC)
        for w in 0..self.router.input_vcs.words_per_router {
            let mut bits = std::mem::take(&mut self.router.switch_allocator.requesting[w]);
            while bits != 0 {
                let local_input_vc = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.ports.local_port[local_input_vc] != port {
                    if port != u32::MAX {
                        self.offer_output(at, port, pick.1);
                    }
                    port = self.ports.local_port[local_input_vc];
                    pick.0 = u32::MAX;
                }
                let pointer = self.router.port_state[first_port + port as usize].input_pointer;
                let vc = self.ports.local_vc[local_input_vc];
                let distance = round_robin_distance(vc, pointer, num_vcs);
                if distance < pick.0 {
                    pick = (distance, local_input_vc);
                }
            }
        }
        if port != u32::MAX {
            self.offer_output(at, port, pick.1);
        }
    }

    /// Output port `out` (global number) of router `at` granted input VC `local_input_vc`:
    /// the output's pointer moves past its input port, the input port's past its VC, and
    /// the flit crosses.
    #[inline(always)]
    pub(super) fn switch_granted(&mut self, at: &RouterLayout, out: usize, local_input_vc: usize) {
        let in_port = self.ports.local_port[local_input_vc];
        self.router.port_state[out].output_pointer = if in_port + 1 == at.num_ports {
            0
        } else {
            in_port + 1
        };
        let vc = self.ports.local_vc[local_input_vc];
        self.router.port_state[at.first_port + in_port as usize].input_pointer =
            if vc as usize + 1 == self.num_vcs {
                0
            } else {
                vc + 1
            };
        self.traverse(at, local_input_vc);
    }

    /// The only local input VC requesting the switch, if exactly one does (its request is
    /// then cleared).
    #[inline(always)]
    fn lone_switch_request(&mut self) -> Option<usize> {
        let requesting = &mut self.router.switch_allocator.requesting;
        let mut lone = None;
        for (w, &bits) in requesting.iter().enumerate() {
            if bits == 0 {
                continue;
            }
            if lone.is_some() || bits & (bits - 1) != 0 {
                return None;
            }
            lone = Some(w);
        }
        let w = lone?;
        let local_input_vc = w * 64 + requesting[w].trailing_zeros() as usize;
        requesting[w] = 0;
        Some(local_input_vc)
    }

    /// Output stage bookkeeping: input port `in_port` of router `at` picked its VC
    /// `local_input_vc`; its output port keeps the picking input port nearest the output's
    /// pointer.
    #[inline(always)]
    fn offer_output(&mut self, at: &RouterLayout, in_port: u32, local_input_vc: usize) {
        let out = self.router.input_vcs.records[at.first_vc + local_input_vc].output_port as usize
            - at.first_port;
        let pointer = self.router.port_state[at.first_port + out].output_pointer;
        let distance = round_robin_distance(in_port, pointer, at.num_ports);
        let bit = 1u64 << (out % 64);
        let allocator = &mut self.router.switch_allocator;
        // A select, not a branch: which offer is nearer is data the predictor cannot learn.
        let old = allocator.best_offer[out];
        let nearer = (allocator.offered[out / 64] & bit == 0) | (distance < old.0);
        allocator.offered[out / 64] |= bit;
        allocator.best_offer[out] = (
            select_u32(nearer, distance, old.0),
            select_u32(nearer, local_input_vc as u32, old.1),
        );
    }

    /// Separable input-first: each input port picks up to `input_speedup` of its requesting
    /// VCs (for different outputs) round-robin, then each output port grants one of the
    /// input ports that picked it, round-robin. Both pointers move past the winner.
    fn separable_switch(
        &mut self,
        r: usize,
        requests: &mut [(u32, u32, u32)],
        winners: &mut Vec<u32>,
    ) {
        let num_vcs = self.num_vcs;
        let first_port = self.net.port_base[r] as usize;
        let num_ports = self.net.ports_of(r);
        let mut picked_list = std::mem::take(&mut self.router.switch_allocator.picked);
        picked_list.clear();
        let mut i = 0;
        while i < requests.len() {
            let in_port = requests[i].0 as usize;
            let mut j = i;
            while j < requests.len() && requests[j].0 as usize == in_port {
                j += 1;
            }
            let pointer = self.router.port_state[in_port].input_pointer as usize;
            let group = &mut requests[i..j];
            group.sort_unstable_by_key(|&(_, input_vc, _)| {
                ((input_vc as usize % num_vcs) + num_vcs - pointer) % num_vcs
            });
            let mut taken: u64 = 0;
            let mut picked = 0;
            for &(port, input_vc, out) in group.iter() {
                if picked == self.params.input_speedup {
                    break;
                }
                let bit = 1u64 << ((out as usize - first_port) % 64);
                if taken & bit != 0 {
                    continue;
                }
                taken |= bit;
                picked_list.push((out, port, input_vc));
                picked += 1;
            }
            i = j;
        }
        picked_list.sort_unstable();
        let mut k = 0;
        while k < picked_list.len() {
            let out = picked_list[k].0 as usize;
            let pointer = self.router.port_state[out].output_pointer as usize;
            let mut m = k;
            let mut best = (usize::MAX, 0u32, 0u32);
            while m < picked_list.len() && picked_list[m].0 as usize == out {
                let distance =
                    (picked_list[m].1 as usize - first_port + num_ports - pointer) % num_ports;
                if distance < best.0 {
                    best = (distance, picked_list[m].1, picked_list[m].2);
                }
                m += 1;
            }
            let (_, in_port, input_vc) = best;
            self.router.port_state[out].output_pointer =
                ((in_port as usize - first_port + 1) % num_ports) as u32;
            self.router.port_state[in_port as usize].input_pointer =
                ((input_vc as usize % num_vcs + 1) % num_vcs) as u32;
            winners.push(input_vc);
            k = m;
        }
        self.router.switch_allocator.picked = picked_list;
    }

    /// iSLIP (McKeown): each unmatched output grants the requesting input port nearest its
    /// grant pointer; each input port accepts the grant (output) nearest its accept pointer;
    /// pointers move one past the partner only for grants accepted in the first iteration.
    /// Repeated `alloc_iters` times over the still unmatched ports. An input port's request
    /// to an output is its round-robin-first VC for that output.
    fn islip_switch(&mut self, r: usize, requests: &[(u32, u32, u32)], winners: &mut Vec<u32>) {
        let num_vcs = self.num_vcs;
        let first_port = self.net.port_base[r] as usize;
        let num_ports = self.net.ports_of(r);
        let port_state = &mut self.router.port_state;
        let mut in_matched: u128 = 0;
        let mut out_matched: u128 = 0;
        // (output, input port, input VC): per (input, output) keep the VC nearest the VC
        // pointer.
        let mut edges = std::mem::take(&mut self.router.switch_allocator.picked);
        edges.clear();
        for &(port, input_vc, out) in requests {
            let pointer = port_state[port as usize].input_pointer as usize;
            let key = (input_vc as usize % num_vcs + num_vcs - pointer) % num_vcs;
            match edges.iter_mut().find(|e| e.0 == out && e.1 == port) {
                Some(e) => {
                    let old = (e.2 as usize % num_vcs + num_vcs - pointer) % num_vcs;
                    if key < old {
                        e.2 = input_vc;
                    }
                }
                None => edges.push((out, port, input_vc)),
            }
        }
        for iter in 0..self.params.alloc_iters {
            // Grant: each free output picks the nearest requesting free input.
            let mut grants: Vec<(u32, u32, u32)> = Vec::new();
            edges.sort_unstable();
            let mut k = 0;
            while k < edges.len() {
                let out = edges[k].0 as usize;
                let mut m = k;
                let mut best = (usize::MAX, 0u32, 0u32);
                while m < edges.len() && edges[m].0 as usize == out {
                    let in_local = edges[m].1 as usize - first_port;
                    if out_matched & (1 << (out - first_port)) == 0
                        && in_matched & (1 << in_local) == 0
                    {
                        let distance = (in_local + num_ports
                            - port_state[out].output_pointer as usize)
                            % num_ports;
                        if distance < best.0 {
                            best = (distance, edges[m].1, edges[m].2);
                        }
                    }
                    m += 1;
                }
                if best.0 != usize::MAX {
                    grants.push((best.1, out as u32, best.2));
                }
                k = m;
            }
            // Accept: each input takes the granted output nearest its accept pointer.
            grants.sort_unstable();
            let mut k = 0;
            while k < grants.len() {
                let port = grants[k].0 as usize;
                let mut m = k;
                let mut best = (usize::MAX, 0u32, 0u32);
                while m < grants.len() && grants[m].0 as usize == port {
                    let out_local = grants[m].1 as usize - first_port;
                    let distance = (out_local + num_ports
                        - port_state[port].accept_pointer as usize)
                        % num_ports;
                    if distance < best.0 {
                        best = (distance, grants[m].1, grants[m].2);
                    }
                    m += 1;
                }
                let (_, out, input_vc) = best;
                in_matched |= 1 << (port - first_port);
                out_matched |= 1 << (out as usize - first_port);
                if iter == 0 {
                    port_state[out as usize].output_pointer =
                        ((port - first_port + 1) % num_ports) as u32;
                    port_state[port].accept_pointer =
                        ((out as usize - first_port + 1) % num_ports) as u32;
                    port_state[port].input_pointer =
                        ((input_vc as usize % num_vcs + 1) % num_vcs) as u32;
                }
                winners.push(input_vc);
                k = m;
            }
        }
        self.router.switch_allocator.picked = edges;
    }
}
