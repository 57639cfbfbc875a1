//! The read-only congestion view handed to routing functions by the input-output-queued
//! router.

use super::*;

pub(super) struct IoqView<'e> {
    pub(super) router: &'e IoQueuedRouter,
    pub(super) net: &'e Network,
}

impl IoqView<'_> {
    #[inline]
    fn vc(&self, router: usize, port: usize, vc: usize) -> usize {
        (self.net.port_base[router] as usize + port) * self.net.num_vcs + vc
    }
}

// Routing functions name any (router, port, VC) here: the lookups go through the tables'
// slices, bounds-checked (a `HotTable` indexed directly is not, `tables.rs`).
impl CongestionView for IoqView<'_> {
    fn num_vcs(&self) -> usize {
        self.net.num_vcs
    }

    fn vc_depth(&self) -> u32 {
        self.router.depth
    }

    fn credits(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.outputs.as_slice()[self.vc(router, port, vc)]
            .credits
            .min(self.router.depth)
    }

    /// An output VC is busy while its buffer holds or expects flits.
    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool {
        self.router.outputs.as_slice()[self.vc(router, port, vc)].committed > 0
    }

    /// The flits in the port's output buffers, every VC.
    fn output_queue(&self, router: usize, port: usize) -> u32 {
        self.router.ports.as_slice()[self.net.port_base[router] as usize + port].queued
    }

    fn output_queue_vc(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.outputs.as_slice()[self.vc(router, port, vc)].len
    }

    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.router.inputs.as_slice()[self.vc(router, port, vc)].len
    }
}
