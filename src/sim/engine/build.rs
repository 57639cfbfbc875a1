//! Building an engine: the flat tables of the network (ports, channels, VCs) and the
//! initial state.

use rand::SeedableRng;

use super::*;

/// The routing session of a run that starts afresh (its random stream derived from `seed`).
pub(crate) fn default_session<'a>(
    routing: &'a dyn RoutingFunction,
    seed: u64,
) -> Box<dyn RoutingSession + 'a> {
    crate::routing::session::session_of(routing, seed ^ 0x1EA4_0000_5E55)
}

/// The input-queued engine, what every caller so far builds.
impl<'a> Engine<'a> {
    pub fn new(
        topo: &'a Topology,
        routing: &'a dyn RoutingFunction,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        Self::with_session(topo, default_session(routing, seed), traffic, params, seed)
    }

    /// An engine whose routing runs as `session` (e.g. one taken from an earlier run with
    /// [`Engine::into_session`], to go on from what it learned).
    pub fn with_session(
        topo: &'a Topology,
        session: Box<dyn RoutingSession + 'a>,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        Self::build(topo, session, traffic, params, seed)
    }
}

/// The input-output-queued engine (`[simulation] router = "ioq"`).
impl<'a> Engine<'a, IoQueuedRouter> {
    /// As [`Engine::new`], with the input-output-queued router; `params.ioq` must be set.
    pub fn new_ioq(
        topo: &'a Topology,
        routing: &'a dyn RoutingFunction,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        Self::build(topo, default_session(routing, seed), traffic, params, seed)
    }

    /// As [`Engine::with_session`], with the input-output-queued router.
    pub fn ioq_with_session(
        topo: &'a Topology,
        session: Box<dyn RoutingSession + 'a>,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        Self::build(topo, session, traffic, params, seed)
    }
}

/// One routing stream per router: ChaCha streams of one key, so independent by construction.
fn router_streams(seed: u64, routers: usize) -> Vec<RouteRng> {
    let key = RouteRng::seed_from_u64(seed ^ 0x005E_ED0F_0E7E);
    (0..routers)
        .map(|r| {
            let mut stream = key.clone();
            stream.set_stream(r as u64);
            stream
        })
        .collect()
}

impl<'a, R: RouterModel> Engine<'a, R> {
    /// An engine with the router model `R` (see [`Engine::with_session`]).
    pub(crate) fn build(
        topo: &'a Topology,
        session: Box<dyn RoutingSession + 'a>,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
    ) -> Self {
        Self::build_part(topo, session, traffic, params, seed, None)
    }

    /// [`Engine::build`] for partition `part.index` of the parallel engine (partition.rs):
    /// the whole network's tables, its own terminals' traffic, outboxes on the cut channels.
    pub(super) fn build_part(
        topo: &'a Topology,
        mut session: Box<dyn RoutingSession + 'a>,
        traffic: Traffic,
        params: SimParams,
        seed: u64,
        part: Option<super::partition::PartState>,
    ) -> Self {
        // A programming error, not bad input: the simulator picks the model from `params`
        // (`sim::simulate_point`), and so must every caller of the engine.
        assert_eq!(
            R::OUTPUT_QUEUED,
            params.ioq.is_some(),
            "the engine's router model does not match [simulation] router (build an \
             input-output-queued engine with Engine::new_ioq)"
        );
        // `SimConfig::resolve` refuses these; a `SimParams` built by hand must too, since the
        // buffers sized from them are indexed without bounds checks (`tables::HotTable`).
        assert!(
            params.num_vcs >= 1
                && params.vc_depth >= 1
                && params.ioq.as_ref().is_none_or(|ioq| ioq.output_depth >= 1),
            "num_vcs, vc_depth and output_depth must be at least 1"
        );
        session.begin_run();
        let num_vcs = params.num_vcs;
        let net = Network::new(topo, num_vcs);
        let mut ports = Ports::new(&net, &params);
        let mut channels = Channels::new(&net, &params);
        if let Some(part) = &part {
            let cut = super::partition::CutChannels::new(&net, &part.partitioning, part.index);
            ports.mark_cut(&net, &cut);
            channels.cut = Some(Box::new(cut));
        }
        // VCs allocated as in virtual cut-through (docs/simulator.md, "VC allocation").
        let cut_through = match params.switching {
            Switching::Wormhole => session.cut_through_vcs(num_vcs),
            Switching::VirtualCutThrough => u64::MAX,
        };
        let owns_router = |r: usize| part.as_ref().is_none_or(|p| p.owns_router(r));
        let router = R::build(&net, &ports, &params, cut_through, &owns_router);
        let large_state = ports.links.len() * num_vcs > super::LARGE_STATE_VCS;
        let terminals = Terminals::new(&net, &params, &traffic, topo.num_terminals(), |t| {
            owns_router(net.term_router[t] as usize)
        });
        let stats = Collector::new(
            traffic.num_classes(),
            params.warmup_cycles,
            params.measure_cycles,
            params.batches,
        );
        let (by_destination, by_destination_class, by_terminal_base) =
            by_destination_table(session.as_ref(), topo.num_routers(), topo.num_terminals());
        let prefetch_routes =
            !by_destination.is_empty() && ports.links.len() * num_vcs > super::ROUTE_PREFETCH_VCS;
        let forward_counter = session.forward_counter();
        Engine {
            topology: topo,
            routing: Routing {
                hooks: session.hooks(),
                // A counter the engine keeps itself needs no call.
                on_forward: session.updates_on_forward() && forward_counter.is_none(),
                forward_counter,
                session,
                pending_control: Vec::new(),
                rngs: router_streams(seed, topo.num_routers()).into(),
                candidates: Vec::new(),
                num_vcs,
                by_destination,
                by_destination_class,
                by_terminal_base,
                prefetch_routes,
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
                bits: vec![0; topo.num_routers().div_ceil(64)].into(),
            },
            large_state,
            descending_visits: false,
            router,
            counters: Counters::default(),
            stats,
            progress: Progress::default(),
            log: None,
            timeline: None,
            part: part.map(Box::new),
            net,
            traffic,
            params,
        }
    }
}

/// [`Routing::by_destination`]'s empty table, its class mask and where its entries by
/// terminal start, when the session routes by destination and the table is small enough.
fn by_destination_table(
    session: &dyn RoutingSession,
    routers: usize,
    terminals: usize,
) -> (Vec<Candidate>, u8, usize) {
    let Some(class_mask) = session.routes_by_destination() else {
        return (Vec::new(), 0, 0);
    };
    let classes = if class_mask == 0 { 1 } else { 2 };
    let by_pair = routers
        .checked_mul(routers)
        .and_then(|pairs| pairs.checked_mul(classes));
    match by_pair.and_then(|n| n.checked_add(terminals)) {
        Some(entries) if entries <= BY_DESTINATION_MAX => {
            (vec![UNROUTED; entries], class_mask, entries - terminals)
        }
        _ => (Vec::new(), 0, 0),
    }
}
