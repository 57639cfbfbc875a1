//! Building an engine: the flat tables of the network (ports, channels, VCs) and the
//! initial state.

use super::*;

impl<'a> Engine<'a> {
    pub fn new(
        topo: &'a Topology,
        routing: &'a dyn RoutingFunction,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        let session = crate::routing::session::session_of(routing, seed ^ 0x1EA4_0000_5E55);
        Self::with_session(topo, session, traffic, params, seed)
    }

    /// An engine whose routing runs as `session` (e.g. one taken from an earlier run with
    /// [`Engine::into_session`], to go on from what it learned).
    pub fn with_session(
        topo: &'a Topology,
        mut session: Box<dyn RoutingSession + 'a>,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        session.begin_run();
        let v = params.num_vcs;
        let net = Network::new(topo, v);
        let ports = net.num_ports();
        let ivs = ports * v;
        let depth = params.vc_depth;
        let max_ports = (0..net.num_routers())
            .map(|r| net.ports_of(r))
            .max()
            .unwrap_or(0);
        let locals = max_ports * v;
        let words = locals.div_ceil(64).max(1);
        let horizon = u64::from(
            params.sw_alloc_delay + params.st_delay + params.credit_delay + params.injection_delay,
        ) + u64::from(net.max_latency)
            + 2;
        let wheel_len = horizon.next_power_of_two();
        let mut ovs = vec![
            OutputVc {
                credits: depth,
                owner: NONE,
                rr: 0,
            };
            ivs
        ];
        for (gp, &ej) in net.out_is_ejection.iter().enumerate() {
            if ej {
                // Terminals always accept flits: ejection VCs never run out of credits.
                for ovc in &mut ovs[gp * v..(gp + 1) * v] {
                    ovc.credits = u32::MAX / 2;
                }
            }
        }
        // VCs allocated as in virtual cut-through (docs/simulator.md, "VC allocation").
        let cut_through = match params.switching {
            Switching::Wormhole => session.cut_through_vcs(v),
            Switching::VirtualCutThrough => u64::MAX,
        };
        let cut_through_vc: Vec<bool> = (0..v).map(|vc| cut_through >> vc & 1 == 1).collect();
        let uniform_need = cut_through_vc.iter().all(|&c| c == cut_through_vc[0]);
        let input_vc = InputVc {
            ready: 0,
            front: Flit::new(0, 0, false),
            len: 0,
            head: 0,
            out_port: NONE,
            cands: 0,
            state: VcState::Idle,
            out_vc: 0,
        };
        let mut port_info = vec![PortInfo::default(); ports];
        for (gp, info) in port_info.iter_mut().enumerate() {
            let (in_chan, out_chan) = (net.in_chan[gp], net.out_chan[gp]);
            if in_chan != NONE {
                info.in_credit = net.chan_credit_base[in_chan as usize];
                info.in_credit_delay = params.credit_delay + net.chan_latency[in_chan as usize];
            }
            info.out_chan = out_chan;
            info.ejection = net.out_is_ejection[gp];
            if out_chan != NONE {
                info.out_delay =
                    params.sw_alloc_delay + params.st_delay + net.chan_latency[out_chan as usize];
                info.out_period = net.chan_period[out_chan as usize];
            }
        }
        let chan_dest = net
            .chan_sink
            .iter()
            .map(|&sink| match sink {
                Sink::Router(gp) => {
                    let r = net.port_router[gp as usize];
                    ChanDest {
                        router: r,
                        first: gp * v as u32,
                        local: (gp - net.port_base[r as usize]) * v as u32,
                    }
                }
                Sink::Terminal(t) => ChanDest {
                    router: NONE,
                    first: t,
                    local: 0,
                },
            })
            .collect();
        let sources = traffic.new_sources();
        let mut calendar = SourceCalendar::new(sources.len());
        for (i, s) in sources.iter().enumerate() {
            if let Some(t) = traffic.next_event(s) {
                calendar.push(t, i as u32, 0);
            }
        }
        let terminals = topo.num_terminals();
        let window = params.warmup_cycles;
        let stats = Collector::new(
            traffic.num_classes(),
            window,
            params.measure_cycles,
            params.batches,
        );
        let blocks = (depth as usize).div_ceil(BUF_BLOCK);
        Engine {
            lport: (0..locals).map(|l| (l / v) as u32).collect(),
            lvc: (0..locals).map(|l| (l % v) as u32).collect(),
            routers: (0..net.num_routers())
                .map(|r| RouterAt {
                    r,
                    iv0: net.port_base[r] as usize * v,
                    port0: net.port_base[r] as usize,
                    nports: net.ports_of(r) as u32,
                    span: (net.ports_of(r) * v) as u32,
                })
                .collect(),
            topo,
            hooks: session.hooks(),
            session,
            control_out: Vec::new(),
            now: 0,
            v,
            depth,
            ports: port_info,
            chan_dest,
            ivs: vec![input_vc; ivs],
            buf: vec![Flit::new(0, 0, false); blocks * ivs * BUF_BLOCK],
            buf_block_stride: ivs * BUF_BLOCK,
            cand_stride: 1,
            cand_buf: vec![
                Candidate {
                    port: 0,
                    vcs: crate::routing::VcRange::new(0, 0),
                };
                ivs
            ],
            route_out: Vec::new(),
            ovs,
            cut_through_vc,
            uniform_need,
            port_state: vec![PortState::default(); ports],
            words,
            nonempty: vec![0; topo.num_routers() * words],
            active: Vec::new(),
            is_active: vec![false; topo.num_routers()],
            wheel_mask: wheel_len - 1,
            flit_wheel: vec![Vec::new(); wheel_len as usize],
            credit_wheel: vec![Vec::new(); wheel_len as usize],
            packets: Vec::new(),
            free_slots: Vec::new(),
            sources,
            calendar,
            queue: vec![VecDeque::new(); terminals],
            queued_per_source: vec![0; terminals * traffic.num_classes()],
            nics: (0..terminals)
                .map(|t| {
                    let chan = net.term_inj_chan[t];
                    Nic {
                        free_at: 0,
                        pkt: NONE,
                        seq: 0,
                        vc: 0,
                        rr: 0,
                        chan,
                        credit_base: (t * v) as u32,
                        delay: params.injection_delay + net.chan_latency[chan as usize],
                        period: net.chan_period[chan as usize],
                        active: false,
                    }
                })
                .collect(),
            nic_credits: vec![depth; terminals * v],
            nic_active: Vec::new(),
            total_queued: 0,
            va_ptr: match params.vc_allocator {
                VcAllocatorKind::SeparableInputFirst => vec![0; ivs],
                VcAllocatorKind::FirstFree => Vec::new(),
            },
            va_mask: vec![0; words],
            va_best: vec![VaRequest::default(); locals],
            sa_mask: vec![0; words],
            out_mask: vec![0; max_ports.div_ceil(64).max(1)],
            sa_best: vec![(0, 0); max_ports],
            rng: RouteRng::seed_from_u64(seed ^ 0x005E_ED0F_0E7E),
            new_packets: Vec::new(),
            sa_requests: Vec::new(),
            sa_picked: Vec::new(),
            sa_winners: Vec::new(),
            counters: Counters::default(),
            stats,
            flits_in_network: 0,
            last_progress: 0,
            measured_outstanding: 0,
            log: None,
            timeline: None,
            net,
            traffic,
            p: params,
        }
    }
}
