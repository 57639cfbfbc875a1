//! Splitting one network between partitions for the parallel engine (parallel.rs;
//! docs/simulator.md, "The parallel engine"): which router each partition owns, the lookahead
//! the split allows, and the exchange of flits and credits on the cut channels.
//!
//! Each partition is a whole engine (every table indexed over the whole network, but taking
//! memory only for its own routers' state: tables.rs) that owns some routers and their
//! terminals: it generates only its own terminals' traffic, and a flit or
//! credit it sends towards another partition's router or NIC goes to an outbox instead of
//! its timing wheel. Every cut channel takes at least `lookahead` cycles, so what a
//! partition sends during a window of at most `lookahead` cycles arrives after the window:
//! the outboxes are exchanged between windows and nobody waits on anybody inside one.

use std::collections::HashMap;
use std::sync::Arc;

use crate::routing::session::RemoteUpdate;

use super::*;

/// How the routers are split between partitions, and the lookahead that allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    pub parts: usize,
    /// Per router, its partition (shared with the partitions' learning sessions).
    pub router_part: Arc<Vec<u32>>,
    /// The fewest cycles a flit or a credit takes on any cut channel: how far a partition
    /// may run without hearing from the others.
    pub lookahead: u64,
    /// Router-to-router channels between partitions.
    pub cut_channels: usize,
    /// How the split was made (for reports).
    pub method: String,
}

/// Largest partition allowed, relative to an even split, before a finer cut is tried.
const IMBALANCE: f64 = 1.25;

impl Partitioning {
    /// Splits `net`'s routers into `parts` partitions, cutting the longest channels first:
    /// for each channel delay from the longest down, the routers joined by shorter channels
    /// form groups (a dragonfly's groups when its global channels are the longest), which
    /// are dealt out in router order to partitions of about equal size. The first delay that
    /// gives a balanced split wins; when none does (every channel equally long: a mesh or a
    /// torus), routers are split in router order, which cuts a mesh or a torus into slabs.
    /// A channel's delay is the shorter of its flit's (switch allocation, traversal and the
    /// link) and its credit's (credit delay and the link), and with `feedback` (a learning
    /// routing's session sends updates back over links) no more than the link's latency.
    pub(crate) fn new(
        net: &Network,
        ports: &Ports,
        parts: usize,
        feedback: bool,
    ) -> Result<Self, String> {
        let routers = net.num_routers();
        if parts == 0 || parts > routers {
            return Err(format!(
                "cannot split {routers} routers into {parts} partitions (1 to {routers})"
            ));
        }
        let channels = router_channels(net, ports, feedback);
        if let Some(zero) = channels.iter().find(|c| c.2 == 0) {
            return Err(format!(
                "a channel from router {} to router {} takes 0 cycles: no lookahead to \
                 partition with",
                zero.0, zero.1
            ));
        }
        let mut delays: Vec<u32> = channels.iter().map(|c| c.2).collect();
        delays.sort_unstable_by(|a, b| b.cmp(a));
        delays.dedup();
        let even = routers as f64 / parts as f64;
        for &cut_at in &delays {
            let groups = groups_joined_below(routers, &channels, cut_at);
            if groups.len() < parts {
                continue;
            }
            let router_part = deal_groups(routers, &groups, parts);
            let mut sizes = vec![0usize; parts];
            for &p in &router_part {
                sizes[p as usize] += 1;
            }
            let largest = *sizes.iter().max().expect("parts > 0");
            if sizes.iter().all(|&s| s > 0) && largest as f64 <= IMBALANCE * even.ceil() {
                return Ok(Self::with_parts(
                    router_part,
                    parts,
                    &channels,
                    format!(
                        "{} groups of routers joined by channels shorter than {cut_at} cycles",
                        groups.len()
                    ),
                ));
            }
        }
        let router_part = (0..routers).map(|r| (r * parts / routers) as u32).collect();
        Ok(Self::with_parts(
            router_part,
            parts,
            &channels,
            "blocks of consecutive routers".into(),
        ))
    }

    fn with_parts(
        router_part: Vec<u32>,
        parts: usize,
        channels: &[(u32, u32, u32)],
        method: String,
    ) -> Self {
        let cut: Vec<u32> = channels
            .iter()
            .filter(|c| router_part[c.0 as usize] != router_part[c.1 as usize])
            .map(|c| c.2)
            .collect();
        Partitioning {
            parts,
            lookahead: u64::from(cut.iter().copied().min().unwrap_or(u32::MAX)),
            cut_channels: cut.len(),
            router_part: Arc::new(router_part),
            method,
        }
    }
}

/// Every router-to-router channel as (source router, sink router, delay: see
/// `Partitioning::new`).
fn router_channels(net: &Network, ports: &Ports, feedback: bool) -> Vec<(u32, u32, u32)> {
    (0..net.num_ports())
        .filter_map(|port| {
            let channel = net.out_chan[port];
            if channel == NONE {
                return None;
            }
            let Sink::Router(sink_port) = net.chan_sink[channel as usize] else {
                return None;
            };
            let mut delay = ports.links[port]
                .out_delay
                .min(ports.links[sink_port as usize].credit_delay);
            if feedback {
                delay = delay.min(net.chan_latency[channel as usize]);
            }
            Some((
                net.port_router[port],
                net.port_router[sink_port as usize],
                delay,
            ))
        })
        .collect()
}

/// The groups of routers joined by channels shorter than `cut_at`, each a list of routers in
/// increasing order, the groups in the order of their first router.
fn groups_joined_below(routers: usize, channels: &[(u32, u32, u32)], cut_at: u32) -> Vec<Vec<u32>> {
    let mut parent: Vec<u32> = (0..routers as u32).collect();
    fn root(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for &(a, b, delay) in channels {
        if delay < cut_at {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb) as usize] = ra.min(rb);
            }
        }
    }
    let mut group_of_root = HashMap::new();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for r in 0..routers as u32 {
        let root = root(&mut parent, r);
        let g = *group_of_root.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(r);
    }
    groups
}

/// Deals groups out in order to `parts` partitions: a group goes to the partition its middle
/// router would fall in if the routers were split evenly in that order.
fn deal_groups(routers: usize, groups: &[Vec<u32>], parts: usize) -> Vec<u32> {
    let mut router_part = vec![0u32; routers];
    let mut before = 0usize;
    for group in groups {
        let middle = before + group.len() / 2;
        let part = ((middle * parts) / routers).min(parts - 1) as u32;
        for &r in group {
            router_part[r as usize] = part;
        }
        before += group.len();
    }
    router_part
}

/// A flit crossing to another partition: when it is a head, its packet goes with it.
#[derive(Clone, Debug)]
pub(super) struct CutFlit {
    pub(super) arrival: u64,
    pub(super) event: FlitEvent,
    pub(super) packet: Option<Packet>,
}

/// What one partition sends another at the end of a window.
#[derive(Default, Debug)]
pub(crate) struct Mail {
    pub(super) flits: Vec<CutFlit>,
    pub(super) credits: Vec<(u64, u32)>,
    /// What a learning routing's session tells the receiver's routers.
    pub(super) updates: Vec<RemoteUpdate>,
}

impl Mail {
    pub(crate) fn is_empty(&self) -> bool {
        self.flits.is_empty() && self.credits.is_empty() && self.updates.is_empty()
    }
}

/// The channel side of a partition: who owns each channel's sink and each credit counter,
/// and the outboxes (see the module documentation).
pub(super) struct CutChannels {
    pub(super) own: u32,
    /// Per channel, the partition its sink (router or terminal) belongs to.
    pub(super) flit_part: Vec<u32>,
    /// Per credit counter (`Network::chan_credit_base` numbering), the partition of the
    /// router or NIC that owns it.
    pub(super) credit_part: Vec<u32>,
    /// Per destination partition, in the order sent.
    pub(super) flits_out: Vec<Vec<(u64, FlitEvent)>>,
    pub(super) credits_out: Vec<Vec<(u64, u32)>>,
}

impl CutChannels {
    pub(super) fn new(net: &Network, partitioning: &Partitioning, own: usize) -> Self {
        let part = &partitioning.router_part;
        let num_vcs = net.num_vcs;
        let flit_part = net
            .chan_sink
            .iter()
            .map(|&sink| match sink {
                Sink::Router(port) => part[net.port_router[port as usize] as usize],
                Sink::Terminal(t) => part[net.term_router[t as usize] as usize],
            })
            .collect();
        let router_counters = net.num_ports() * num_vcs;
        let credit_part = (0..router_counters + net.term_router.len() * num_vcs)
            .map(|c| {
                if c < router_counters {
                    part[net.port_router[c / num_vcs] as usize]
                } else {
                    part[net.term_router[(c - router_counters) / num_vcs] as usize]
                }
            })
            .collect();
        CutChannels {
            own: own as u32,
            flit_part,
            credit_part,
            flits_out: vec![Vec::new(); partitioning.parts],
            credits_out: vec![Vec::new(); partitioning.parts],
        }
    }
}

/// A partition's own side beyond its channels.
pub(super) struct PartState {
    pub(super) index: usize,
    pub(super) partitioning: Arc<Partitioning>,
    /// Per sending partition: its packet slot -> our slot, for packets whose head has come
    /// in and whose tail has not yet (indexed by the sender's slot: slots are dense).
    incoming_slots: Vec<Vec<u32>>,
}

impl PartState {
    pub(super) fn new(partitioning: Arc<Partitioning>, index: usize) -> Self {
        PartState {
            index,
            incoming_slots: vec![Vec::new(); partitioning.parts],
            partitioning,
        }
    }

    pub(super) fn owns_router(&self, router: usize) -> bool {
        self.partitioning.router_part[router] as usize == self.index
    }
}

impl<R: RouterModel> Engine<'_, R> {
    /// Empties the outboxes: one `Mail` per partition (ours empty). A head takes a copy of
    /// its packet along, and the count of the packet as measured and outstanding; a flit
    /// leaving counts out of our flits in the network; a tail frees our slot (all the
    /// packet's flits have left: a packet that comes back later is a new arrival).
    pub(crate) fn take_outgoing(&mut self) -> Vec<Mail> {
        let cut = self.channels.cut.as_mut().expect("a partition's engine");
        let flits_out: Vec<_> = cut.flits_out.iter_mut().map(std::mem::take).collect();
        let credits_out: Vec<_> = cut.credits_out.iter_mut().map(std::mem::take).collect();
        let mut mails = Vec::with_capacity(flits_out.len());
        for (flits, credits) in flits_out.into_iter().zip(credits_out) {
            let mut mail = Mail {
                flits: Vec::with_capacity(flits.len()),
                credits,
                updates: Vec::new(),
            };
            for (i, &(arrival, event)) in flits.iter().enumerate() {
                // The packet records of heads are read at random: start loading ahead.
                if let Some(ahead) = flits.get(i + PREFETCH_AHEAD) {
                    prefetch(&self.packets.table, ahead.1.flit.packet as usize);
                }
                let slot = event.flit.packet as usize;
                let packet = (event.flit.index() == 0).then(|| {
                    let packet = self.packets.table[slot];
                    if self.stats.in_window(packet.created) && packet.info.class != CONTROL_CLASS {
                        self.progress.measured_outstanding -= 1;
                    }
                    packet
                });
                if event.flit.is_tail() {
                    self.packets.table[slot].live = false;
                    self.packets.free_slots.push(slot as u32);
                }
                self.progress.flits_in_network -= 1;
                mail.flits.push(CutFlit {
                    arrival,
                    event,
                    packet,
                });
            }
            mails.push(mail);
        }
        let part = self.part.as_ref().expect("a partition's engine");
        for update in self.routing.session.take_remote_updates() {
            let to = part.partitioning.router_part[update.router as usize] as usize;
            mails[to].updates.push(update);
        }
        mails
    }

    /// Takes in what partition `from` sent: the flits onto our timing wheel (a head's packet
    /// into a slot of ours), the credits too.
    pub(crate) fn take_incoming(&mut self, from: usize, mail: Mail) {
        // What arrives, from another thread or decoded from another rank's bytes, must be
        // ours: the router model indexes its state from the channel's VC and the counter
        // without further checks (`tables::HotTable`). Checked lookups, once per item.
        let cut = self
            .channels
            .cut
            .as_deref()
            .expect("a partition's channels");
        let num_vcs = self.num_vcs;
        let ours_all = mail.flits.iter().all(|f| {
            cut.flit_part.get(f.event.channel as usize) == Some(&cut.own)
                && (f.event.vc as usize) < num_vcs
        }) && mail
            .credits
            .iter()
            .all(|&(_, counter)| cut.credit_part.get(counter as usize) == Some(&cut.own));
        assert!(
            ours_all,
            "partition {} received a flit or credit from partition {from} for a channel, VC or \
             counter it does not own",
            cut.own
        );
        let part = self.part.as_mut().expect("a partition's engine");
        let slots = &mut part.incoming_slots[from];
        for CutFlit {
            arrival,
            mut event,
            packet,
        } in mail.flits
        {
            let theirs = event.flit.packet;
            let ours = match packet {
                Some(mut packet) => {
                    packet.live = true;
                    if self.stats.in_window(packet.created) && packet.info.class != CONTROL_CLASS {
                        self.progress.measured_outstanding += 1;
                    }
                    let ours = self.packets.store(packet);
                    if slots.len() <= theirs as usize {
                        slots.resize(theirs as usize + 1, NONE);
                    }
                    slots[theirs as usize] = ours;
                    ours
                }
                None => {
                    let ours = slots.get(theirs as usize).copied().unwrap_or(NONE);
                    assert_ne!(
                        ours, NONE,
                        "a body flit follows its head through the same cut channel"
                    );
                    ours
                }
            };
            if event.flit.is_tail() {
                slots[theirs as usize] = NONE;
            }
            event.flit.packet = ours;
            self.progress.flits_in_network += 1;
            // A cut channel joins two routers: terminals belong to their router's partition.
            let list = Channels::to_routers(self.channels.slot(arrival));
            self.channels.flits[list].push(event);
        }
        for (arrival, counter) in mail.credits {
            self.channels.push_credit(arrival, counter);
        }
        if !mail.updates.is_empty() {
            self.routing.session.put_remote_updates(mail.updates);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::registry::routing::build_routing;
    use crate::routing::RoutingConfig;
    use crate::sim::SimConfig;
    use crate::topology::TopologyConfig;
    use crate::traffic::TrafficConfig;

    /// Partition 0 of a 4x4 mesh split in 2 takes in `mail` from partition 1.
    fn receive(mail: impl FnOnce(&Network, &Partitioning) -> Mail) {
        let topo = TopologyConfig::parse_spec("mesh:4x4")
            .unwrap()
            .build(Path::new("."), 1)
            .unwrap();
        let params = SimConfig {
            num_vcs: Some(2),
            ..SimConfig::default()
        }
        .resolve()
        .unwrap();
        let net = Network::new(&topo, 2);
        let ports = Ports::new(&net, &params);
        let partitioning = Arc::new(Partitioning::new(&net, &ports, 2, false).unwrap());
        let routing = build_routing(&RoutingConfig::new("dor"), &topo, 2).unwrap();
        let traffic = Traffic::build(
            &[TrafficConfig::new("uniform", 1e-12)],
            &topo,
            1,
            Path::new("."),
        )
        .unwrap();
        let mut engine = Engine::<InputQueuedRouter>::build_part(
            &topo,
            default_session(routing.as_ref(), 1),
            traffic,
            params,
            1,
            Some(PartState::new(Arc::clone(&partitioning), 0)),
        );
        let mail = mail(&net, &partitioning);
        engine.take_incoming(1, mail);
    }

    /// A head flit on the first cut channel into partition 0, or into partition 1 (a
    /// channel partition 0 does not own), on VC `vc`.
    fn head_into(net: &Network, p: &Partitioning, own: bool, vc: u32) -> Mail {
        let to = u32::from(!own);
        let channel = (0..net.out_chan.len())
            .filter(|&port| net.out_chan[port] != NONE)
            .find_map(|port| {
                let channel = net.out_chan[port];
                let crate::sim::network::Sink::Router(into) = net.chan_sink[channel as usize]
                else {
                    return None;
                };
                let (a, b) = (net.port_router[port], net.port_router[into as usize]);
                let (a, b) = (p.router_part[a as usize], p.router_part[b as usize]);
                (a != b && b == to).then_some(channel)
            })
            .expect("a cut channel");
        Mail {
            flits: vec![CutFlit {
                arrival: 5,
                event: FlitEvent {
                    channel,
                    vc,
                    flit: Flit::new(0, 0, true),
                },
                packet: Some(Packet {
                    info: crate::routing::PacketInfo {
                        id: 0,
                        src_terminal: 0,
                        dst_terminal: 15,
                        src_router: 0,
                        dst_router: 15,
                        size: 1,
                        class: 0,
                    },
                    route: crate::routing::RouteState::default(),
                    created: 0,
                    injected: 0,
                    received: 0,
                    live: true,
                }),
            }],
            credits: Vec::new(),
            updates: Vec::new(),
        }
    }

    // What arrives from another partition (or is decoded from another rank's bytes) is
    // indexed into the router model's unchecked tables: it must be for this partition.
    #[test]
    fn a_partition_takes_in_flits_for_its_own_channels() {
        receive(|net, p| head_into(net, p, true, 1));
    }

    #[test]
    #[should_panic(expected = "partition 0 received a flit or credit from partition 1")]
    fn a_partition_refuses_a_flit_for_another_partitions_channel() {
        receive(|net, p| head_into(net, p, false, 0));
    }

    #[test]
    #[should_panic(expected = "partition 0 received a flit or credit from partition 1")]
    fn a_partition_refuses_a_flit_on_a_vc_past_the_channels() {
        receive(|net, p| head_into(net, p, true, 2));
    }
}
