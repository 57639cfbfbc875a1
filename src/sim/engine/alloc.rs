//! VC and switch allocation: separable input-first (round-robin) and iSLIP.

use super::*;

impl Engine<'_> {
    /// Output stage of VC allocation: each requested output VC grants one input VC,
    /// round-robin from its pointer.
    pub(super) fn allocate_vcs(&mut self, r: usize, base_iv: usize) {
        let span = self.net.ports_of(r) * self.v;
        let mut reqs = std::mem::take(&mut self.va_requests);
        reqs.sort_unstable();
        let mut i = 0;
        while i < reqs.len() {
            let ov = reqs[i].0 as usize;
            let mut j = i;
            let ptr = self.ov_rr[ov] as usize;
            let mut best = (usize::MAX, 0usize);
            while j < reqs.len() && reqs[j].0 as usize == ov {
                let li = reqs[j].1 as usize - base_iv;
                let dist = (li + span - ptr) % span;
                if dist < best.0 {
                    best = (dist, reqs[j].1 as usize);
                }
                j += 1;
            }
            self.grant_vc(best.1, ov);
            self.ov_rr[ov] = ((best.1 - base_iv + 1) % span) as u32;
            i = j;
        }
        reqs.clear();
        self.va_requests = reqs;
    }

    pub(super) fn grant_vc(&mut self, iv: usize, ov: usize) {
        let v = self.v;
        self.ov_owner[ov] = iv as u32;
        self.iv_state[iv] = ACTIVE;
        self.iv_out[iv] = ov as u32;
        self.iv_ready[iv] = self.now + u64::from(self.p.vc_alloc_delay);
        self.out_queue[ov / v] += self.buf_len[iv];
        let r = self.net.port_router[iv / v] as usize;
        let pb = self.net.port_base[r] as usize;
        let chosen_port = ov / v - pb;
        let chosen = self.iv_cands[iv]
            .iter()
            .copied()
            .find(|c| c.port as usize == chosen_port && c.vcs.contains(ov % v))
            .expect("granted output VC comes from a candidate");
        let flit = self.front(iv);
        let congestion = EngineView::of_parts(
            &self.credits,
            &self.ov_owner,
            &self.out_queue,
            &self.buf_len,
            &self.net,
            self.depth,
        );
        let ctx = RouteContext {
            router: r,
            in_port: iv / v - pb,
            in_vc: iv % v,
            congestion: &congestion,
        };
        let pkt = &mut self.packets[flit.pkt as usize];
        let mut state = pkt.route;
        self.routing
            .on_forward(&ctx, &pkt.info, chosen, ov % v, &mut state);
        // The head will cross a router-to-router channel: one more hop taken (the routing
        // function saw the hops taken before this router).
        if !self.net.out_is_ejection[ov / v] {
            state.hops += 1;
        }
        pkt.route = state;
    }

    /// Switch allocation among the requests `(input port, input VC, output port)` collected
    /// for router `r` (grouped by input port), then switch traversal of the winners.
    pub(super) fn allocate_switch(&mut self, r: usize) {
        let mut reqs = std::mem::take(&mut self.sa_requests);
        let mut winners = std::mem::take(&mut self.sa_winners);
        winners.clear();
        match self.p.allocator {
            AllocatorKind::Separable => self.separable_switch(r, &mut reqs, &mut winners),
            AllocatorKind::Islip => self.islip_switch(r, &reqs, &mut winners),
        }
        let now = self.now;
        for &iv in &winners {
            self.traverse(r, iv as usize, now);
        }
        reqs.clear();
        self.sa_requests = reqs;
        self.sa_winners = winners;
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
            let ptr = self.in_rr[gp_in] as usize;
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
            let ptr = self.out_rr[out] as usize;
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
            self.out_rr[out] = ((gp_in as usize - pb + 1) % nports) as u32;
            self.in_rr[gp_in as usize] = ((iv as usize % v + 1) % v) as u32;
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
            let ptr = self.in_rr[g as usize] as usize;
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
                        let dist = (in_local + nports - self.out_rr[out] as usize) % nports;
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
                    let dist = (out_local + nports - self.islip_accept[g] as usize) % nports;
                    if dist < best.0 {
                        best = (dist, grants[m].1, grants[m].2);
                    }
                    m += 1;
                }
                let (_, out, iv) = best;
                in_matched |= 1 << (g - pb);
                out_matched |= 1 << (out as usize - pb);
                if iter == 0 {
                    self.out_rr[out as usize] = ((g - pb + 1) % nports) as u32;
                    self.islip_accept[g] = ((out as usize - pb + 1) % nports) as u32;
                    self.in_rr[g] = ((iv as usize % v + 1) % v) as u32;
                }
                winners.push(iv);
                k = m;
            }
        }
        self.sa_picked = edges;
    }
}
