//! The read-only congestion view handed to routing functions by the input-output-queued
//! router.

use super::*;

pub(super) struct IoqView<'e> {
    pub(super) router: &'e IoQueuedRouter,
    pub(super) net: &'e Network,
}

// Routing functions name any (router, port, VC) here: `Network::view_vc` checks them against
// the router's ports and VCs, and the lookups go through the tables' slices, bounds-checked
// (a `HotTable` indexed directly is not, `tables.rs`).
impl CongestionView for IoqView<'_> {
    fn num_vcs(&self) -> usize {
        self.net.num_vcs
    }

    fn vc_depth(&self) -> u32 {
        self.router.depth
    }

    fn credits(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.outputs.as_slice()[self.net.view_vc("credits", router, port, vc)]
            .credits
            .min(self.router.depth)
    }

    /// An output VC is busy while its buffer holds or expects flits.
    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool {
        self.router.outputs.as_slice()[self.net.view_vc("output_vc_busy", router, port, vc)]
            .committed
            > 0
    }

    /// The flits in the port's output buffers, every VC.
    fn output_queue(&self, router: usize, port: usize) -> u32 {
        self.router.ports.as_slice()[self.net.view_port("output_queue", router, port)].queued
    }

    fn output_queue_vc(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.outputs.as_slice()[self.net.view_vc("output_queue_vc", router, port, vc)].len
    }

    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.inputs.as_slice()[self.net.view_vc("input_occupancy", router, port, vc)].len
    }
}
