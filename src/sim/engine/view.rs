//! The read-only congestion view handed to routing functions.

use super::*;

/// Read-only congestion state handed to routing functions.
pub(super) struct EngineView<'e> {
    credits: &'e [u32],
    ov_owner: &'e [u32],
    out_queue: &'e [u32],
    buf_len: &'e [u32],
    net: &'e Network,
    depth: u32,
}

impl<'e> EngineView<'e> {
    pub(super) fn of_parts(
        credits: &'e [u32],
        ov_owner: &'e [u32],
        out_queue: &'e [u32],
        buf_len: &'e [u32],
        net: &'e Network,
        depth: u32,
    ) -> Self {
        EngineView {
            credits,
            ov_owner,
            out_queue,
            buf_len,
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
        let gp = self.net.port_base[router] as usize + port;
        self.credits[gp * self.net.num_vcs + vc].min(self.depth)
    }

    fn output_vc_busy(&self, router: usize, port: usize, vc: usize) -> bool {
        let gp = self.net.port_base[router] as usize + port;
        self.ov_owner[gp * self.net.num_vcs + vc] != NONE
    }

    fn output_queue(&self, router: usize, port: usize) -> u32 {
        self.out_queue[self.net.port_base[router] as usize + port]
    }

    fn input_occupancy(&self, router: usize, port: usize, vc: usize) -> u32 {
        let gp = self.net.port_base[router] as usize + port;
        self.buf_len[gp * self.net.num_vcs + vc]
    }
}
