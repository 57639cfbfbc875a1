//! The read-only congestion view handed to routing functions.

use super::*;

/// Read-only congestion state handed to routing functions.
pub(super) struct EngineView<'e> {
    output_vcs: &'e [OutputVc],
    ports: &'e [PortState],
    input_vcs: &'e [InputVc],
    net: &'e Network,
    depth: u32,
}

impl<'e> EngineView<'e> {
    #[inline]
    pub(super) fn of_parts(
        output_vcs: &'e [OutputVc],
        ports: &'e [PortState],
        input_vcs: &'e [InputVc],
        net: &'e Network,
        depth: u32,
    ) -> Self {
        EngineView {
            output_vcs,
            ports,
            input_vcs,
            net,
            depth,
        }
    }
}

impl CongestionView for EngineView<'_> {
    fn num_vcs(&self) -> usize {
        self.net.num_vcs
    }

    fn vc_depth(&self) -> u32 {
        self.depth
    }

    fn credits(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.output_vcs[self.net.view_vc("credits", router, port, vc)]
            .credits
            .min(self.depth)
    }

    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool {
        self.output_vcs[self.net.view_vc("output_vc_busy", router, port, vc)].owner != NONE
    }

    fn output_queue(&self, router: usize, port: usize) -> u32 {
        self.ports[self.net.view_port("output_queue", router, port)].output_queue
    }

    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32 {
        self.input_vcs[self.net.view_vc("input_occupancy", router, port, vc)].len
    }
}
