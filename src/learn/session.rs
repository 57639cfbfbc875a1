//! The learning session Q-routing and Q-adaptive share: one run's Q-tables, the feedback in
//! flight and the exploration switch. What differs between the two algorithms — how a packet
//! is routed under a table, and which entry a head's arrival updates with which estimate — is
//! their [`QModel`]; everything else (the arrival stamp in `RouteState::aux`, the feedback
//! delayed by the reverse link, the hysteretic update, counting updates) is here once.

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use super::feedback::{FeedbackQueue, QTable, Rates};
use crate::routing::session::RemoteUpdate;
use crate::routing::{
    Candidate, PacketInfo, RouteContext, RouteRng, RouteState, RoutingSession, SessionHooks,
};

/// The read-only side of a Q-learning algorithm, shared by its routing function and sessions.
pub trait QModel: Debug + Send + Sync + 'static {
    /// The algorithm's name, as the session reports it.
    const NAME: &'static str;

    /// The table every run starts from.
    fn initial(&self) -> &QTable;

    /// The longest link latency: feedback is never delayed by more.
    fn max_latency(&self) -> u32;

    /// The learning rates (good news, bad news).
    fn rates(&self) -> Rates;

    /// Routes `pkt` under table `q`; `explore` switches epsilon-exploration on.
    // The table and the exploration switch are the session's, the rest the engine's call.
    #[allow(clippy::too_many_arguments)]
    fn route(
        &self,
        q: &QTable,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &RouteState,
        explore: bool,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    );

    /// When the feedback of a hop is sent (default: at the head's arrival).
    fn feedback_at(&self) -> FeedbackAt {
        FeedbackAt::Arrival
    }

    /// What the head of `pkt`, arriving at `router` through `in_port`, teaches the upstream
    /// router: the reverse link's latency, the upstream table entry to move, and `Q_y` (this
    /// router's estimate of the rest of the way). `None` when nothing is learned (from a
    /// terminal, or where the algorithm does not learn).
    fn feedback(
        &self,
        q: &QTable,
        router: usize,
        in_port: usize,
        pkt: &PacketInfo,
    ) -> Option<Feedback>;
}

/// When a router sends a hop's feedback upstream (`[routing.q] feedback_at`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackAt {
    /// When the head arrives, over the link back (fabricopt's reading of the paper).
    #[default]
    Arrival,
    /// When the packet leaves the router's input buffer, back to the sender as a credit
    /// goes (the Q-adaptive authors' Merlin code: the wait in the input buffer delays it).
    InputExit,
}

/// One piece of feedback a head's arrival sends upstream (see [`QModel::feedback`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    pub latency: u32,
    pub index: usize,
    pub q_y: f32,
}

/// One run's learning state: the Q-tables and the feedback in flight.
#[derive(Debug)]
pub struct QSession<M: QModel> {
    pub(super) model: Arc<M>,
    pub(super) q: QTable,
    feedback: FeedbackQueue,
    updates: u64,
    /// Off (`set_learning(false)`): no exploration, no updates.
    learning: bool,
    /// `FeedbackAt::InputExit`: per packet slot, the r measured at the head's arrival,
    /// waiting for the packet to leave the input buffer.
    arrival_r: Vec<f32>,
    /// In the parallel engine: which partition runs each router, which one is ours, and
    /// the feedback for other partitions' routers, in the order sent.
    partition: Option<(Arc<Vec<u32>>, u32)>,
    remote: Vec<RemoteUpdate>,
}

impl<M: QModel> QSession<M> {
    pub(super) fn new(model: Arc<M>) -> Self {
        QSession {
            q: model.initial().clone(),
            feedback: FeedbackQueue::new(model.max_latency()),
            updates: 0,
            learning: true,
            arrival_r: Vec::new(),
            partition: None,
            remote: Vec::new(),
            model,
        }
    }

    /// Sends feedback for entry `index` (of whichever router holds it), due `delay` cycles
    /// after `now`: into our queue, or aside for the partition that runs that router.
    fn send(&mut self, now: u64, delay: u32, index: usize, target: f32) {
        if let Some((router_part, own)) = &self.partition {
            let router = self.q.router_of(index);
            if router_part[router] != *own {
                self.remote.push(RemoteUpdate {
                    router: router as u32,
                    due: now + u64::from(delay.max(1)),
                    index: index as u32,
                    target,
                });
                return;
            }
        }
        self.feedback.push(now, delay, index as u32, target);
    }

    /// Feedback sent and not yet applied.
    #[cfg(test)]
    pub(crate) fn pending_feedback(&self) -> usize {
        self.feedback.pending()
    }

    /// Feedback applied so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }
}

impl<M: QModel> RoutingSession for QSession<M> {
    fn name(&self) -> String {
        M::NAME.into()
    }

    fn hooks(&self) -> SessionHooks {
        SessionHooks {
            head_arrival: true,
            advance: true,
            input_exit: self.model.feedback_at() == FeedbackAt::InputExit,
            ..SessionHooks::default()
        }
    }

    fn route(
        &mut self,
        _now: u64,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        state: &mut RouteState,
        rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        self.model
            .route(&self.q, ctx, pkt, state, self.learning, rng, out);
    }

    fn on_head_arrival(
        &mut self,
        now: u64,
        router: usize,
        in_port: usize,
        pkt: &PacketInfo,
        state: &mut RouteState,
    ) {
        // Arrival cycles modulo 2^32: differences stay right as long as a hop takes less.
        let arrived_upstream = state.aux;
        state.aux = now as u32;
        if !self.learning {
            return;
        }
        let r = (now as u32).wrapping_sub(arrived_upstream) as f32;
        if self.model.feedback_at() == FeedbackAt::InputExit {
            let slot = pkt.id as usize;
            if slot >= self.arrival_r.len() {
                self.arrival_r.resize(slot + 1, 0.0);
            }
            self.arrival_r[slot] = r;
            return;
        }
        if let Some(f) = self.model.feedback(&self.q, router, in_port, pkt) {
            self.send(now, f.latency, f.index, r + f.q_y);
        }
    }

    fn on_input_exit(
        &mut self,
        now: u64,
        router: usize,
        in_port: usize,
        pkt: &PacketInfo,
        back_delay: u32,
    ) {
        if !self.learning {
            return;
        }
        // Q_y as it stands when the packet leaves, r as measured at its arrival.
        if let Some(f) = self.model.feedback(&self.q, router, in_port, pkt) {
            let r = self.arrival_r.get(pkt.id as usize).copied().unwrap_or(0.0);
            self.send(now, back_delay, f.index, r + f.q_y);
        }
    }

    fn advance(&mut self, now: u64) {
        let rates = self.model.rates();
        let (q, updates) = (&mut self.q, &mut self.updates);
        self.feedback.deliver(now, |index, target| {
            rates.update(q.at_mut(index as usize), target);
            *updates += 1;
        });
    }

    fn set_learning(&mut self, on: bool) {
        self.learning = on;
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    /// Feedback crosses partitions as remote updates, one link's latency (or a credit's
    /// delay) late: never inside the parallel engine's lookahead.
    fn partition_obstacle(&self) -> Option<String> {
        None
    }

    fn set_partition(&mut self, router_part: Arc<Vec<u32>>, own: u32) {
        self.partition = Some((router_part, own));
    }

    fn take_remote_updates(&mut self) -> Vec<RemoteUpdate> {
        std::mem::take(&mut self.remote)
    }

    fn put_remote_updates(&mut self, updates: Vec<RemoteUpdate>) {
        for u in updates {
            self.feedback.push_due(u.due, u.index, u.target);
        }
    }
}
