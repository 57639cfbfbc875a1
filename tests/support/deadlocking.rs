//! Routings built to deadlock, shared by the simulator tests (included with `#[path]`).

use fabricopt::routing::{
    Candidate, PacketInfo, RouteContext, RouteRng, RouteState, RoutingFunction, VcRange,
};

/// Clockwise round a ring (port 2) on one VC: deadlocks under load.
pub(crate) struct Clockwise;

impl RoutingFunction for Clockwise {
    fn name(&self) -> String {
        "clockwise".into()
    }
    fn min_vcs(&self) -> usize {
        1
    }
    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        _state: &mut RouteState,
        _rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let port = if ctx.router as u32 == pkt.dst_router {
            0
        } else {
            2
        };
        out.push(Candidate {
            port,
            vcs: VcRange::new(0, 1),
        });
    }
}

/// On a 4x4 mesh, packets between the four routers of the square `[r, r + 1, r + 5, r + 4]`
/// go round it clockwise on VC 0 (a cycle of channel dependencies); everything else follows
/// XY order on VC 1: a deadlock confined to the square while the rest of the mesh delivers.
pub(crate) struct ClockwiseSquare(pub(crate) [u32; 4]);

impl RoutingFunction for ClockwiseSquare {
    fn name(&self) -> String {
        "clockwise-square".into()
    }
    fn min_vcs(&self) -> usize {
        2
    }
    fn route(
        &self,
        ctx: &RouteContext,
        pkt: &PacketInfo,
        _state: &mut RouteState,
        _rng: &mut RouteRng,
        out: &mut Vec<Candidate>,
    ) {
        let (cur, dst) = (ctx.router, pkt.dst_router as usize);
        if cur == dst {
            out.push(Candidate {
                port: 0,
                vcs: VcRange::new(0, 2),
            });
            return;
        }
        let square = &self.0;
        if square.contains(&pkt.src_router) && square.contains(&pkt.dst_router) {
            // +x, then +y, then -x, then -y round the square.
            let port = match cur as u32 {
                c if c == square[0] => 2,
                c if c == square[1] => 4,
                c if c == square[2] => 1,
                _ => 3,
            };
            out.push(Candidate {
                port,
                vcs: VcRange::single(0),
            });
            return;
        }
        let (x, y, dx, dy) = (cur % 4, cur / 4, dst % 4, dst / 4);
        let port = if x != dx {
            if dx > x { 2 } else { 1 }
        } else if dy > y {
            4
        } else {
            3
        };
        out.push(Candidate {
            port,
            vcs: VcRange::single(1),
        });
    }
}
