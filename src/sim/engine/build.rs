//! Building an engine: the flat tables of the network (ports, channels, VCs) and the
//! initial state.

use rand::SeedableRng;

use super::alloc::{SwitchAllocator, VcAllocator};
use super::vcs::{InputVcs, OutputVc, OutputVcs};
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
        let num_vcs = params.num_vcs;
        let net = Network::new(topo, num_vcs);
        let ports = Ports::new(&net, &params);
        let channels = Channels::new(&net, &params);
        // VCs allocated as in virtual cut-through (docs/simulator.md, "VC allocation").
        let cut_through = match params.switching {
            Switching::Wormhole => session.cut_through_vcs(num_vcs),
            Switching::VirtualCutThrough => u64::MAX,
        };
        let router = InputQueuedRouter::new(&net, &ports, &params, cut_through);
        let terminals = Terminals::new(&net, &params, &traffic, topo.num_terminals());
        let stats = Collector::new(
            traffic.num_classes(),
            params.warmup_cycles,
            params.measure_cycles,
            params.batches,
        );
        Engine {
            topology: topo,
            routing: Routing {
                hooks: session.hooks(),
                session,
                pending_control: Vec::new(),
                rng: RouteRng::seed_from_u64(seed ^ 0x005E_ED0F_0E7E),
                candidates: Vec::new(),
            },
            now: 0,
            num_vcs,
            vc_depth: params.vc_depth,
            ports,
            channels,
            packets: Packets::default(),
            terminals,
            active_routers: ActiveRouters {
                list: Vec::new(),
                is_active: vec![false; topo.num_routers()],
            },
            router,
            counters: Counters::default(),
            stats,
            progress: Progress::default(),
            log: None,
            timeline: None,
            net,
            traffic,
            params,
        }
    }
}

impl InputQueuedRouter {
    /// Empty routers for `net`; `cut_through` has bit `vc` set for the VCs allocated as in
    /// virtual cut-through.
    fn new(net: &Network, ports: &Ports, params: &SimParams, cut_through: u64) -> Self {
        let num_vcs = net.num_vcs;
        let count = net.num_ports() * num_vcs;
        let depth = params.vc_depth;
        let mut output_vcs = vec![
            OutputVc {
                credits: depth,
                owner: NONE,
                pointer: 0,
            };
            count
        ];
        for (port, &ejection) in net.out_is_ejection.iter().enumerate() {
            if ejection {
                // Terminals always accept flits: ejection VCs never run out of credits.
                for output_vc in &mut output_vcs[port * num_vcs..(port + 1) * num_vcs] {
                    output_vc.credits = u32::MAX / 2;
                }
            }
        }
        let cut_through: Vec<bool> = (0..num_vcs).map(|vc| cut_through >> vc & 1 == 1).collect();
        InputQueuedRouter {
            input_vcs: InputVcs::new(count, depth, net.num_routers(), ports.words_per_router()),
            output_vcs: OutputVcs {
                records: output_vcs,
                uniform_need: cut_through.iter().all(|&c| c == cut_through[0]),
                cut_through,
                wait_for_tail_credit: params.wait_for_tail_credit,
                depth,
            },
            port_state: vec![router::PortState::default(); net.num_ports()],
            vc_allocator: VcAllocator::new(params.vc_allocator, count, ports),
            switch_allocator: SwitchAllocator::new(ports),
        }
    }
}
