//! VC and switch allocation: separable input-first (round-robin) and iSLIP.

use super::*;

impl Engine<'_> {
    /// Output stage of VC allocation: each requested output VC grants the requester nearest
    /// its round-robin pointer (kept by `request_vc`), in increasing output VC order. Returns
    /// whether a granted input VC may already request the switch this cycle.
    pub(super) fn allocate_vcs(&mut self, at: &RouterAt) -> bool {
        let span = at.span as usize;
        let base = at.iv0;
        let mut any_sa = false;
        for w in 0..self.words {
            let mut bits = std::mem::take(&mut self.va_mask[w]);
            while bits != 0 {
                let lov = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let req = self.va_best[lov];
                let li = req.li as usize;
                self.grant_vc(at, li, lov, req.cand as usize);
                self.ovs[base + lov].rr = if li + 1 == span { 0 } else { li as u32 + 1 };
                if let Some(ptr) = self.va_ptr.get_mut(base + li) {
                    *ptr = if lov + 1 == span { 0 } else { lov as u32 + 1 };
                }
                if self.p.vc_alloc_delay == 0 && self.can_send(&self.ivs[base + li]) {
                    self.sa_mask[li / 64] |= 1 << (li % 64);
                    any_sa = true;
                }
            }
        }
        any_sa
    }

    /// Grants output VC `lov` of router `at` to input VC `li`, which requested it through
    /// its candidate number `cand`.
    fn grant_vc(&mut self, at: &RouterAt, li: usize, lov: usize, cand: usize) {
        let (iv, ov) = (at.iv0 + li, at.iv0 + lov);
        let out_port = at.port0 + self.lport[lov] as usize;
        let vc = self.lvc[lov] as usize;
        self.ovs[ov].owner = iv as u32;
        let pkt = self.ivs[iv].front.pkt as usize;
        let info = self.packets[pkt].info;
        let ivc = &mut self.ivs[iv];
        ivc.state = VcState::Active;
        ivc.out_port = out_port as u32;
        ivc.out_vc = vc as u8;
        ivc.ready = self.now + u64::from(self.p.vc_alloc_delay);
        // The granted packet's buffered flits: all of them when the packet is not complete
        // here yet, else its `size` (the flits behind its tail belong to later packets).
        self.port_state[out_port].queue += ivc.len.min(info.size);
        // The requesting candidate is the first one that holds the granted VC.
        let chosen = self.cand_buf[iv * self.cand_stride + cand];
        let congestion = EngineView::of_parts(
            &self.ovs,
            &self.port_state,
            &self.ivs,
            &self.net,
            self.depth,
        );
        let ctx = RouteContext {
            router: at.r,
            in_port: self.lport[li] as usize,
            in_vc: self.lvc[li] as usize,
            congestion: &congestion,
        };
        let mut state = self.packets[pkt].route;
        self.session
            .on_forward(self.now, &ctx, &info, chosen, vc, &mut state);
        // The head will cross a router-to-router channel: one more hop taken (the routing
        // function saw the hops taken before this router).
        if !self.ports[out_port].ejection {
            state.hops += 1;
        }
        self.packets[pkt].route = state;
    }

    /// Switch allocation among the input VCs of router `at` in `sa_mask`, then switch
    /// traversal of the winners in increasing output port order.
    pub(super) fn allocate_switch(&mut self, at: &RouterAt) {
        if self.p.allocator == AllocatorKind::Separable && self.p.input_speedup == 1 {
            self.separable_switch_single(at);
            return;
        }
        // General allocators over the request list `(input port, input VC, output port)`,
        // grouped by input port.
        let (r, base) = (at.r, at.iv0);
        let mut reqs = std::mem::take(&mut self.sa_requests);
        reqs.clear();
        for w in 0..self.words {
            let mut bits = std::mem::take(&mut self.sa_mask[w]);
            while bits != 0 {
                let li = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let iv = base + li;
                let gp_in = (at.port0 + self.lport[li] as usize) as u32;
                reqs.push((gp_in, iv as u32, self.ivs[iv].out_port));
            }
        }
        let mut winners = std::mem::take(&mut self.sa_winners);
        winners.clear();
        match self.p.allocator {
            AllocatorKind::Separable => self.separable_switch(r, &mut reqs, &mut winners),
            AllocatorKind::Islip => self.islip_switch(r, &reqs, &mut winners),
        }
        for &iv in &winners {
            self.traverse(at, iv as usize - base);
        }
        self.sa_requests = reqs;
        self.sa_winners = winners;
    }

    /// Separable input-first with one VC per input port (the default): each input port
    /// picks its requesting VC nearest its round-robin pointer, each output port grants the
    /// picking input port nearest its pointer; both pointers move past the winner. Same
    /// result as `separable_switch`, without sorting.
    fn separable_switch_single(&mut self, at: &RouterAt) {
        let v = self.v as u32;
        let pb = at.port0;
        // Input stage, over the requesting VCs in increasing order (grouped by port).
        let mut port = u32::MAX;
        let mut pick = (u32::MAX, 0usize); // (distance from the port's pointer, VC)
        for w in 0..self.words {
            let mut bits = std::mem::take(&mut self.sa_mask[w]);
            while bits != 0 {
                let li = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.lport[li] != port {
                    if port != u32::MAX {
                        self.offer_output(at, port, pick.1);
                    }
                    port = self.lport[li];
                    pick.0 = u32::MAX;
                }
                let ptr = self.port_state[pb + port as usize].in_rr;
                let vc = self.lvc[li];
                let dist = rr_distance(vc, ptr, v);
                if dist < pick.0 {
                    pick = (dist, li);
                }
            }
        }
        if port != u32::MAX {
            self.offer_output(at, port, pick.1);
        }
        // Output stage, in increasing output port order.
        let nports = at.nports;
        for w in 0..self.out_mask.len() {
            let mut bits = std::mem::take(&mut self.out_mask[w]);
            while bits != 0 {
                let out = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let li = self.sa_best[out].1 as usize;
                let in_port = self.lport[li];
                self.port_state[pb + out].out_rr = if in_port + 1 == nports {
                    0
                } else {
                    in_port + 1
                };
                let vc = self.lvc[li];
                self.port_state[pb + in_port as usize].in_rr = if vc + 1 == v { 0 } else { vc + 1 };
                self.traverse(at, li);
            }
        }
    }

    /// Output stage bookkeeping: input port `in_port` of router `at` picked its VC `li`; its
    /// output port keeps the picking input port nearest the output's pointer.
    #[inline(always)]
    fn offer_output(&mut self, at: &RouterAt, in_port: u32, li: usize) {
        let out = self.ivs[at.iv0 + li].out_port as usize - at.port0;
        let ptr = self.port_state[at.port0 + out].out_rr;
        let dist = rr_distance(in_port, ptr, at.nports);
        let bit = 1u64 << (out % 64);
        if self.out_mask[out / 64] & bit == 0 || dist < self.sa_best[out].0 {
            self.out_mask[out / 64] |= bit;
            self.sa_best[out] = (dist, li as u32);
        }
    }

    /// Separable input-first: each input port picks up to `input_speedup` of its requesting
    /// VCs (for different outputs) round-robin, then each output port grants one of the
    /// input ports that picked it, round-robin. Both pointers move past the winner.
    fn separable_switch(&mut self, r: usize, reqs: &mut [(u32, u32, u32)], winners: &mut Vec<u32>) {
        let v = self.v;
        let pb = self.net.port_base[r] as usize;
        let nports = self.net.ports_of(r);
        let mut picked_list = std::mem::take(&mut self.sa_picked);
        picked_list.clear();
        let mut i = 0;
        while i < reqs.len() {
            let gp_in = reqs[i].0 as usize;
            let mut j = i;
            while j < reqs.len() && reqs[j].0 as usize == gp_in {
                j += 1;
            }
            let ptr = self.port_state[gp_in].in_rr as usize;
            let group = &mut reqs[i..j];
            group.sort_unstable_by_key(|&(_, iv, _)| ((iv as usize % v) + v - ptr) % v);
            let mut taken: u64 = 0;
            let mut picked = 0;
            for &(g, iv, out) in group.iter() {
                if picked == self.p.input_speedup {
                    break;
                }
                let bit = 1u64 << ((out as usize - pb) % 64);
                if taken & bit != 0 {
                    continue;
                }
                taken |= bit;
                picked_list.push((out, g, iv));
                picked += 1;
            }
            i = j;
        }
        picked_list.sort_unstable();
        let mut k = 0;
        while k < picked_list.len() {
            let out = picked_list[k].0 as usize;
            let ptr = self.port_state[out].out_rr as usize;
            let mut m = k;
            let mut best = (usize::MAX, 0u32, 0u32);
            while m < picked_list.len() && picked_list[m].0 as usize == out {
                let dist = (picked_list[m].1 as usize - pb + nports - ptr) % nports;
                if dist < best.0 {
                    best = (dist, picked_list[m].1, picked_list[m].2);
                }
                m += 1;
            }
            let (_, gp_in, iv) = best;
            self.port_state[out].out_rr = ((gp_in as usize - pb + 1) % nports) as u32;
            self.port_state[gp_in as usize].in_rr = ((iv as usize % v + 1) % v) as u32;
            winners.push(iv);
            k = m;
        }
        self.sa_picked = picked_list;
    }

    /// iSLIP (McKeown): each unmatched output grants the requesting input port nearest its
    /// grant pointer; each input port accepts the grant (output) nearest its accept pointer;
    /// pointers move one past the partner only for grants accepted in the first iteration.
    /// Repeated `alloc_iters` times over the still unmatched ports. An input port's request
    /// to an output is its round-robin-first VC for that output.
    fn islip_switch(&mut self, r: usize, reqs: &[(u32, u32, u32)], winners: &mut Vec<u32>) {
        let v = self.v;
        let pb = self.net.port_base[r] as usize;
        let nports = self.net.ports_of(r);
        let mut in_matched: u128 = 0;
        let mut out_matched: u128 = 0;
        // (output, input port, iv): per (input, output) keep the VC nearest the VC pointer.
        let mut edges = std::mem::take(&mut self.sa_picked);
        edges.clear();
        for &(g, iv, out) in reqs {
            let ptr = self.port_state[g as usize].in_rr as usize;
            let key = (iv as usize % v + v - ptr) % v;
            match edges.iter_mut().find(|e| e.0 == out && e.1 == g) {
                Some(e) => {
                    let old = (e.2 as usize % v + v - ptr) % v;
                    if key < old {
                        e.2 = iv;
                    }
                }
                None => edges.push((out, g, iv)),
            }
        }
        for iter in 0..self.p.alloc_iters {
            // Grant: each free output picks the nearest requesting free input.
            let mut grants: Vec<(u32, u32, u32)> = Vec::new();
            edges.sort_unstable();
            let mut k = 0;
            while k < edges.len() {
                let out = edges[k].0 as usize;
                let mut m = k;
                let mut best = (usize::MAX, 0u32, 0u32);
                while m < edges.len() && edges[m].0 as usize == out {
                    let in_local = edges[m].1 as usize - pb;
                    if out_matched & (1 << (out - pb)) == 0 && in_matched & (1 << in_local) == 0 {
                        let dist =
                            (in_local + nports - self.port_state[out].out_rr as usize) % nports;
                        if dist < best.0 {
                            best = (dist, edges[m].1, edges[m].2);
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
                let g = grants[k].0 as usize;
                let mut m = k;
                let mut best = (usize::MAX, 0u32, 0u32);
                while m < grants.len() && grants[m].0 as usize == g {
                    let out_local = grants[m].1 as usize - pb;
                    let dist =
                        (out_local + nports - self.port_state[g].islip_accept as usize) % nports;
                    if dist < best.0 {
                        best = (dist, grants[m].1, grants[m].2);
                    }
                    m += 1;
                }
                let (_, out, iv) = best;
                in_matched |= 1 << (g - pb);
                out_matched |= 1 << (out as usize - pb);
                if iter == 0 {
                    self.port_state[out as usize].out_rr = ((g - pb + 1) % nports) as u32;
                    self.port_state[g].islip_accept = ((out as usize - pb + 1) % nports) as u32;
                    self.port_state[g].in_rr = ((iv as usize % v + 1) % v) as u32;
                }
                winners.push(iv);
                k = m;
            }
        }
        self.sa_picked = edges;
    }
}
