//! The partitioned engine's window messages between MPI ranks, as bytes: fixed-width
//! little-endian fields in declaration order. Hand-written rather than serde: with
//! MessagePack, encoding and decoding a window's mail took most of the exchange's time
//! (docs/benchmarks.md, "The partitioned engine across MPI ranks"). Every encoder destructures
//! its struct whole, so a field added later fails to compile here instead of being dropped.

use crate::routing::session::RemoteUpdate;
use crate::routing::{PacketInfo, RouteState};

use super::Packet;
use super::channels::{Flit, FlitEvent};
use super::partition::{CutFlit, Mail};

/// Appends fields to a message.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
}

/// Reads a message's fields back, in the order written. A message cut short is a bug (both
/// sides are this build), so it panics, which ends the MPI job.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .expect("a window message from another rank is cut short");
        self.0 = rest;
        *head
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn len(&mut self) -> usize {
        self.u64() as usize
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn put_packet(w: &mut Writer, p: &Packet) {
    let Packet {
        info,
        route,
        created,
        injected,
        received,
        live,
    } = *p;
    let PacketInfo {
        id,
        src_terminal,
        dst_terminal,
        src_router,
        dst_router,
        size,
        class,
    } = info;
    for v in [id, src_terminal, dst_terminal, src_router, dst_router, size] {
        w.u32(v);
    }
    w.u8(class);
    let RouteState {
        hops,
        intermediate,
        phase,
        flags,
        aux,
    } = route;
    w.u16(hops);
    w.u32(intermediate);
    w.u8(phase);
    w.u8(flags);
    w.u32(aux);
    w.u64(created);
    w.u64(injected);
    w.u32(received);
    w.u8(u8::from(live));
}

fn get_packet(r: &mut Reader) -> Packet {
    let info = PacketInfo {
        id: r.u32(),
        src_terminal: r.u32(),
        dst_terminal: r.u32(),
        src_router: r.u32(),
        dst_router: r.u32(),
        size: r.u32(),
        class: r.u8(),
    };
    let route = RouteState {
        hops: r.u16(),
        intermediate: r.u32(),
        phase: r.u8(),
        flags: r.u8(),
        aux: r.u32(),
    };
    Packet {
        info,
        route,
        created: r.u64(),
        injected: r.u64(),
        received: r.u32(),
        live: r.u8() != 0,
    }
}

impl Mail {
    fn encode(&self, w: &mut Writer) {
        let Mail {
            flits,
            credits,
            updates,
        } = self;
        w.len(flits.len());
        for CutFlit {
            arrival,
            event,
            packet,
        } in flits
        {
            let FlitEvent { channel, vc, flit } = *event;
            let Flit {
                packet: slot,
                index_and_tail,
            } = flit;
            w.u64(*arrival);
            w.u32(channel);
            w.u32(vc);
            w.u32(slot);
            w.u32(index_and_tail);
            match packet {
                Some(p) => {
                    w.u8(1);
                    put_packet(w, p);
                }
                None => w.u8(0),
            }
        }
        w.len(credits.len());
        for &(arrival, counter) in credits {
            w.u64(arrival);
            w.u32(counter);
        }
        w.len(updates.len());
        for &RemoteUpdate {
            router,
            due,
            index,
            target,
        } in updates
        {
            w.u32(router);
            w.u64(due);
            w.u32(index);
            w.u32(target.to_bits());
        }
    }

    fn decode(r: &mut Reader) -> Mail {
        let flits = (0..r.len())
            .map(|_| {
                let arrival = r.u64();
                let event = FlitEvent {
                    channel: r.u32(),
                    vc: r.u32(),
                    flit: Flit {
                        packet: r.u32(),
                        index_and_tail: r.u32(),
                    },
                };
                let packet = (r.u8() != 0).then(|| get_packet(r));
                CutFlit {
                    arrival,
                    event,
                    packet,
                }
            })
            .collect();
        let credits = (0..r.len()).map(|_| (r.u64(), r.u32())).collect();
        let updates = (0..r.len())
            .map(|_| RemoteUpdate {
                router: r.u32(),
                due: r.u64(),
                index: r.u32(),
                target: f32::from_bits(r.u32()),
            })
            .collect();
        Mail {
            flits,
            credits,
            updates,
        }
    }
}

/// What one rank sends another after a window: its partitions' mail for the other's
/// partitions (`from`, `to`). (The window's logs go through an all-reduce instead.)
#[derive(Default)]
pub(super) struct WindowMessage {
    pub(super) mail: Vec<(u32, u32, Mail)>,
}

impl WindowMessage {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.len(self.mail.len());
        for (from, to, mail) in &self.mail {
            w.u32(*from);
            w.u32(*to);
            mail.encode(&mut w);
        }
        w.0
    }

    pub(super) fn decode(bytes: &[u8]) -> WindowMessage {
        let mut r = Reader(bytes);
        let mail = (0..r.len())
            .map(|_| (r.u32(), r.u32(), Mail::decode(&mut r)))
            .collect();
        assert!(
            r.is_empty(),
            "a window message from another rank is longer than read"
        );
        WindowMessage { mail }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::NO_ROUTER;

    #[test]
    fn window_messages_round_trip() {
        let packet = Packet {
            info: PacketInfo {
                id: 7,
                src_terminal: 1,
                dst_terminal: u32::MAX,
                src_router: 2,
                dst_router: 3,
                size: 4,
                class: 5,
            },
            route: RouteState {
                hops: 6,
                intermediate: NO_ROUTER,
                phase: 1,
                flags: 0b101,
                aux: 9,
            },
            created: u64::MAX - 1,
            injected: 11,
            received: 2,
            live: true,
        };
        let flit = |slot, index, tail| FlitEvent {
            channel: 12,
            vc: 2,
            flit: Flit::new(slot, index, tail),
        };
        let mail = Mail {
            flits: vec![
                CutFlit {
                    arrival: 100,
                    event: flit(3, 0, false),
                    packet: Some(packet),
                },
                CutFlit {
                    arrival: 101,
                    event: flit(3, 1, true),
                    packet: None,
                },
            ],
            credits: vec![(102, 40), (103, 41)],
            updates: vec![RemoteUpdate {
                router: 5,
                due: 110,
                index: 33,
                target: -0.1,
            }],
        };
        let message = WindowMessage {
            mail: vec![(0, 3, mail), (1, 2, Mail::default())],
        };
        let bytes = message.encode();
        let back = WindowMessage::decode(&bytes);
        assert_eq!(format!("{:?}", back.mail), format!("{:?}", message.mail));
    }
}
