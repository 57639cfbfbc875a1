//! One router's cycle: route computation, VC-allocation requests and switch-allocation
//! requests over its non-empty input VCs (one pass over the bit set), then the allocators
//! (alloc.rs) and switch traversal.

use super::*;

impl Engine<'_> {
    pub(super) fn process_router(&mut self, r: usize) {
        let now = self.now;
        let words = self.words;
        let at = self.routers[r];
        let base = at.iv0;
        let mut any_va = false;
        let mut any_sa = false;
        for w in 0..words {
            let mut bits = self.nonempty[r * words + w];
            let mut sa_bits = 0u64;
            while bits != 0 {
                let li = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let iv = base + li;
                let ivc = self.ivs[iv];
                if ivc.ready > now {
                    continue;
                }
                match ivc.state {
                    VcState::Idle => {
                        self.compute_route(&at, li);
                        if self.p.routing_delay == 0 {
                            any_va |= self.request_vc(&at, li);
                        }
                    }
                    VcState::VcAllocation => any_va |= self.request_vc(&at, li),
                    // The VC allocation below does not change what `can_send` reads.
                    VcState::Active if self.can_send(&ivc) => sa_bits |= 1 << (li % 64),
                    VcState::Active => {}
                }
            }
            self.sa_mask[w] = sa_bits;
            any_sa |= sa_bits != 0;
        }
        if any_va {
            any_sa |= self.allocate_vcs(&at);
        }
        if any_sa {
            self.allocate_switch(&at);
        }
    }

    /// An `Active` input VC may request the switch: a credit downstream and a free channel.
    pub(super) fn can_send(&self, ivc: &InputVc) -> bool {
        self.ovs[ivc.out(self.v)].credits > 0
            && self.port_state[ivc.out_port as usize].free_at <= self.now
    }

    fn compute_route(&mut self, at: &RouterAt, li: usize) {
        let iv = at.iv0 + li;
        let flit = self.front(iv);
        debug_assert_eq!(
            flit.seq(),
            0,
            "a packet's first flit reached an idle VC mid-packet"
        );
        self.route_out.clear();
        let info = self.packet_info(flit.pkt);
        let mut state = self.packets[flit.pkt as usize].route;
        {
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
            self.session.route(
                self.now,
                &ctx,
                &info,
                &mut state,
                &mut self.rng,
                &mut self.route_out,
            );
        }
        self.packets[flit.pkt as usize].route = state;
        self.store_cands(iv);
        let extra = if self.hooks.route_delay {
            self.session.take_route_delay()
        } else {
            0
        };
        let ivc = &mut self.ivs[iv];
        ivc.state = VcState::VcAllocation;
        ivc.ready = self.now + u64::from(self.p.routing_delay + extra);
    }

    /// Keeps the candidates in `route_out` for input VC `iv`.
    fn store_cands(&mut self, iv: usize) {
        let n = self.route_out.len();
        if n > self.cand_stride {
            // Rare (a routing function returned more candidates than ever before): widen.
            let stride = n.next_power_of_two();
            let mut wider = vec![self.route_out[0]; self.ivs.len() * stride];
            for i in 0..self.ivs.len() {
                let old = self.cands(i);
                wider[i * stride..i * stride + old.len()].copy_from_slice(old);
            }
            self.cand_buf = wider;
            self.cand_stride = stride;
        }
        let start = iv * self.cand_stride;
        let dst = &mut self.cand_buf[start..start + n];
        if let [c] = self.route_out[..] {
            dst[0] = c; // the usual case, without a call to memcpy
        } else {
            dst.copy_from_slice(&self.route_out);
        }
        self.ivs[iv].cands = u16::try_from(n).expect("at most 65535 route candidates");
    }

    /// Input stage of VC allocation: the first candidate with a free output VC requests it
    /// (kept if nearer the output VC's round-robin pointer than earlier requests). Returns
    /// whether a request was made.
    #[inline(always)]
    fn request_vc(&mut self, at: &RouterAt, li: usize) -> bool {
        let base = at.iv0;
        let iv = base + li;
        // BookSim2's allocator out of line, so that the default path stays as small as it was.
        let choice = match self.p.vc_allocator {
            VcAllocatorKind::FirstFree => self.first_free_vc(base, iv),
            VcAllocatorKind::SeparableInputFirst => self.separable_vc(at, iv),
        };
        let Some((k, lov)) = choice else {
            return false;
        };
        let li = li as u32;
        let rr = self.ovs[base + lov].rr;
        let dist = rr_distance(li, rr, at.span);
        let bit = 1u64 << (lov % 64);
        let req = &mut self.va_best[lov];
        if self.va_mask[lov / 64] & bit == 0 || dist < req.dist {
            self.va_mask[lov / 64] |= bit;
            *req = VaRequest {
                dist,
                li,
                cand: k as u32,
            };
        }
        true
    }

    /// Whether local output VC `lov` of the router whose first VC is `base` can be granted to
    /// packet `pkt`; `need` is the credits every VC needs, or `None` when they differ by VC.
    #[inline(always)]
    fn grantable(&self, base: usize, lov: usize, pkt: u32, need: Option<u32>) -> bool {
        let ovc = &self.ovs[base + lov];
        let need = match need {
            Some(n) => n,
            None => self.grant_need(pkt, self.lvc[lov] as usize),
        };
        ovc.owner == NONE && ovc.credits >= need
    }

    /// The credits a grant needs when they are the same on every VC (no cut-through VCs under
    /// wormhole: the common case, as cheap as before per-VC rules existed).
    #[inline(always)]
    fn uniform_need(&self, pkt: u32) -> Option<u32> {
        self.uniform_need.then(|| self.grant_need(pkt, 0))
    }

    /// `first_free`: the first grantable VC in candidate order, as (candidate index, local
    /// output VC).
    #[inline(always)]
    fn first_free_vc(&self, base: usize, iv: usize) -> Option<(usize, usize)> {
        let pkt = self.front(iv).pkt;
        let need = self.uniform_need(pkt);
        let v = self.v;
        self.cands(iv).iter().enumerate().find_map(|(k, c)| {
            let first = c.port as usize * v;
            (c.vcs.start..c.vcs.end)
                .map(|vc| first + usize::from(vc))
                .find(|&lov| self.grantable(base, lov, pkt, need))
                .map(|lov| (k, lov))
        })
    }

    /// `separable_input_first` (BookSim2's): the routing function's order is the priority
    /// (BookSim's per-range priority); within the first candidate with a grantable VC, the
    /// one nearest this input VC's round-robin pointer.
    #[inline(never)]
    fn separable_vc(&self, at: &RouterAt, iv: usize) -> Option<(usize, usize)> {
        let pkt = self.front(iv).pkt;
        let need = self.uniform_need(pkt);
        let (v, ptr) = (self.v, self.va_ptr[iv]);
        self.cands(iv).iter().enumerate().find_map(|(k, c)| {
            let first = c.port as usize * v;
            (c.vcs.start..c.vcs.end)
                .map(|vc| first + usize::from(vc))
                .filter(|&lov| self.grantable(at.iv0, lov, pkt, need))
                .min_by_key(|&lov| rr_distance(lov as u32, ptr, at.span))
                .map(|lov| (k, lov))
        })
    }

    /// Moves the front flit of input VC `li` of router `at` through the crossbar onto its
    /// output channel.
    #[inline(always)]
    pub(super) fn traverse(&mut self, at: &RouterAt, li: usize) {
        let now = self.now;
        let base = at.iv0;
        let iv = base + li;
        let ivc = self.ivs[iv];
        let flit = ivc.front;
        let len = ivc.len - 1;
        // The next flit moves from the ring to the front. An emptied ring restarts at slot 0,
        // so that lightly used VCs touch only the first block of their slots.
        let (front, head) = if len == 0 {
            (flit, 0)
        } else {
            let next = self.buf[self.buf_slot(iv, ivc.head)];
            let head = if len == 1 || ivc.head + 1 == self.depth {
                0
            } else {
                ivc.head + 1
            };
            (next, head)
        };
        let ov = ivc.out(self.v);
        let out_port = ivc.out_port as usize;
        // Credit back to whoever feeds this input VC.
        let gp_in = at.port0 + self.lport[li] as usize;
        let input = self.ports[gp_in];
        let credit_at = now + u64::from(input.in_credit_delay);
        self.credit_wheel[(credit_at & self.wheel_mask) as usize]
            .push(input.in_credit + self.lvc[li]);
        // Onto the output channel.
        let port = self.ports[out_port];
        if !port.ejection {
            self.ovs[ov].credits -= 1;
            self.counters.flit_hops += 1;
        }
        let arrival = now + u64::from(port.out_delay);
        self.flit_wheel[(arrival & self.wheel_mask) as usize].push(FlitEvent {
            chan: port.out_chan,
            vc: u32::from(ivc.out_vc),
            flit,
        });
        let ps = &mut self.port_state[out_port];
        ps.queue -= 1;
        ps.free_at = now + u64::from(port.out_period);
        self.last_progress = now;
        let ivc = &mut self.ivs[iv];
        ivc.len = len;
        ivc.head = head;
        ivc.front = front;
        if flit.is_tail() {
            self.ovs[ov].owner = NONE;
            ivc.state = VcState::Idle;
            ivc.out_port = NONE;
            ivc.ready = now + 1;
        }
        if len == 0 {
            self.nonempty[at.r * self.words + li / 64] &= !(1 << (li % 64));
        }
    }
}
