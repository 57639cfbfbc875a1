//! Statistics of one simulation: packet latencies (network and total), throughput and hops per
//! traffic class, with 95% confidence intervals from batch means.
//!
//! Only packets *created* during the measurement window count for latency and hops (they are
//! followed through the drain phase); accepted throughput counts flits *delivered* during the
//! window. The window is split into `batches` equal batches (by creation cycle for latency, by
//! delivery cycle for throughput); the confidence half-width is t(0.975, B-1) * s / sqrt(B)
//! over the batch means (statrs for the t quantile).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// One delivered packet.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize)]
pub struct PacketRecord {
    pub class: usize,
    pub created: u64,
    /// Cycle the head flit left the source NIC.
    pub injected: u64,
    /// Cycle the tail flit reached the destination terminal.
    pub delivered: u64,
    pub hops: u32,
    pub flits: u32,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
struct ClassAcc {
    total: Vec<u64>,
    network: Vec<u64>,
    hops: u64,
    batch_total: Vec<(f64, u64)>,
    batch_network: Vec<(f64, u64)>,
    offered_flits: u64,
    /// Flits of packets not created because the source queue was full.
    dropped_flits: u64,
    accepted_flits: u64,
    batch_accepted: Vec<u64>,
}

/// Accumulates measurements; see the module documentation for what counts.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Collector {
    start: u64,
    len: u64,
    batches: usize,
    classes: Vec<ClassAcc>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencyStats {
    pub avg: f64,
    /// 95% confidence half-width of `avg` (batch means); null when undefined.
    pub ci95: Option<f64>,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// Standard deviation over packets (population).
    #[serde(default)]
    pub sd: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ClassStats {
    /// Measured packets delivered.
    pub packets: u64,
    /// Created during the window, in flits per terminal per cycle.
    pub offered: f64,
    /// Not created during the window because a bounded source queue was full (what the
    /// sources asked for beyond `offered`), in flits per terminal per cycle.
    #[serde(default)]
    pub dropped: f64,
    /// Delivered during the window, in flits per terminal per cycle.
    pub accepted: f64,
    pub accepted_ci95: Option<f64>,
    /// Creation to tail delivery (includes source queueing).
    pub latency: LatencyStats,
    /// Head leaving the source NIC to tail delivery.
    pub network_latency: LatencyStats,
    pub hops_avg: f64,
}

impl Collector {
    pub fn new(classes: usize, window_start: u64, window_len: u64, batches: usize) -> Self {
        let acc = ClassAcc {
            batch_total: vec![(0.0, 0); batches],
            batch_network: vec![(0.0, 0); batches],
            batch_accepted: vec![0; batches],
            ..ClassAcc::default()
        };
        Collector {
            start: window_start,
            len: window_len,
            batches,
            classes: vec![acc; classes.max(1)],
        }
    }

    pub(crate) fn in_window(&self, cycle: u64) -> bool {
        cycle >= self.start && cycle < self.start + self.len
    }

    fn batch(&self, cycle: u64) -> usize {
        let offset = cycle - self.start;
        // 64-bit arithmetic when it cannot overflow (always in practice; a 128-bit division is
        // a library call).
        let b = match offset.checked_mul(self.batches as u64) {
            Some(x) => x / self.len,
            None => (offset as u128 * self.batches as u128 / self.len as u128) as u64,
        };
        (b as usize).min(self.batches - 1)
    }

    /// A packet of `flits` was created at `cycle`.
    pub fn created(&mut self, class: usize, cycle: u64, flits: u32) {
        if self.in_window(cycle) {
            self.classes[class].offered_flits += u64::from(flits);
        }
    }

    /// A packet of `flits` could not be created at `cycle` (its bounded source queue was
    /// full).
    pub fn dropped(&mut self, class: usize, cycle: u64, flits: u32) {
        if self.in_window(cycle) {
            self.classes[class].dropped_flits += u64::from(flits);
        }
    }

    /// `flits` flits reached their destination at `cycle`.
    pub(crate) fn ejected(&mut self, class: usize, cycle: u64, flits: u32) {
        if self.in_window(cycle) {
            let b = self.batch(cycle);
            let acc = &mut self.classes[class];
            acc.accepted_flits += u64::from(flits);
            acc.batch_accepted[b] += u64::from(flits);
        }
    }

    /// A packet was delivered; it counts when it was created inside the window.
    pub fn delivered(&mut self, rec: &PacketRecord) {
        if !self.in_window(rec.created) {
            return;
        }
        let b = self.batch(rec.created);
        let acc = &mut self.classes[rec.class];
        let total = rec.delivered - rec.created;
        let network = rec.delivered - rec.injected;
        acc.total.push(total);
        acc.network.push(network);
        acc.hops += u64::from(rec.hops);
        acc.batch_total[b].0 += total as f64;
        acc.batch_total[b].1 += 1;
        acc.batch_network[b].0 += network as f64;
        acc.batch_network[b].1 += 1;
    }

    /// Adds what another collector of the same window measured (a partition of the parallel
    /// engine). Every statistic is then what one collector would have measured: latencies
    /// are sorted before use and batch sums are sums of integers, exact in any order.
    pub(crate) fn merge(&mut self, other: &Collector) {
        debug_assert_eq!(
            (self.start, self.len, self.batches, self.classes.len()),
            (other.start, other.len, other.batches, other.classes.len())
        );
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            a.total.extend_from_slice(&b.total);
            a.network.extend_from_slice(&b.network);
            a.hops += b.hops;
            for (x, y) in a.batch_total.iter_mut().zip(&b.batch_total) {
                (x.0, x.1) = (x.0 + y.0, x.1 + y.1);
            }
            for (x, y) in a.batch_network.iter_mut().zip(&b.batch_network) {
                (x.0, x.1) = (x.0 + y.0, x.1 + y.1);
            }
            a.offered_flits += b.offered_flits;
            a.dropped_flits += b.dropped_flits;
            a.accepted_flits += b.accepted_flits;
            for (x, y) in a.batch_accepted.iter_mut().zip(&b.batch_accepted) {
                *x += y;
            }
        }
    }

    /// Per-class statistics and the statistics of all classes together.
    pub fn summarize(&self, terminals: usize) -> (Vec<ClassStats>, ClassStats) {
        let per_class: Vec<ClassStats> = self
            .classes
            .iter()
            .map(|a| self.class_stats(std::slice::from_ref(a), terminals))
            .collect();
        let all = self.class_stats(&self.classes, terminals);
        (per_class, all)
    }

    fn class_stats(&self, accs: &[ClassAcc], terminals: usize) -> ClassStats {
        let norm = (terminals.max(1) as f64) * self.len as f64;
        let mut total: Vec<u64> = accs.iter().flat_map(|a| a.total.iter().copied()).collect();
        let mut network: Vec<u64> = accs
            .iter()
            .flat_map(|a| a.network.iter().copied())
            .collect();
        let merge = |pick: fn(&ClassAcc) -> &Vec<(f64, u64)>| -> Vec<f64> {
            (0..self.batches)
                .filter_map(|b| {
                    let (s, n) = accs
                        .iter()
                        .fold((0.0, 0), |(s, n), a| (s + pick(a)[b].0, n + pick(a)[b].1));
                    (n > 0).then(|| s / n as f64)
                })
                .collect()
        };
        let batch_total = merge(|a| &a.batch_total);
        let batch_network = merge(|a| &a.batch_network);
        let batch_accepted: Vec<f64> = (0..self.batches)
            .map(|b| {
                let flits: u64 = accs.iter().map(|a| a.batch_accepted[b]).sum();
                flits as f64 * self.batches as f64 / norm
            })
            .collect();
        let packets = total.len() as u64;
        let hops: u64 = accs.iter().map(|a| a.hops).sum();
        ClassStats {
            packets,
            offered: accs.iter().map(|a| a.offered_flits).sum::<u64>() as f64 / norm,
            dropped: accs.iter().map(|a| a.dropped_flits).sum::<u64>() as f64 / norm,
            accepted: accs.iter().map(|a| a.accepted_flits).sum::<u64>() as f64 / norm,
            accepted_ci95: ci95(&batch_accepted),
            latency: latency_stats(&mut total, &batch_total),
            network_latency: latency_stats(&mut network, &batch_network),
            hops_avg: if packets > 0 {
                hops as f64 / packets as f64
            } else {
                0.0
            },
        }
    }
}

fn latency_stats(values: &mut [u64], batch_means: &[f64]) -> LatencyStats {
    if values.is_empty() {
        return LatencyStats::default();
    }
    values.sort_unstable();
    let n = values.len();
    // Nearest-rank percentile.
    let pct = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64;
    let avg = values.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let var = values
        .iter()
        .map(|&v| (v as f64 - avg).powi(2))
        .sum::<f64>()
        / n as f64;
    LatencyStats {
        avg,
        sd: var.sqrt(),
        ci95: ci95(batch_means),
        p50: pct(0.50),
        p95: pct(0.95),
        p99: pct(0.99),
        max: values[n - 1] as f64,
    }
}

/// Latency of the packets delivered in one window of a [`Timeline`].
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TimelineWindow {
    /// First cycle of the window.
    pub start: u64,
    pub packets: u64,
    pub latency_avg: f64,
    pub latency_p99: f64,
    pub network_latency_avg: f64,
    pub hops_avg: f64,
}

/// Latency per fixed window of *delivery* cycles over a whole run, warm-up included: how a
/// learned routing converges (a packet counts in the window it arrives in, so a window never
/// waits for packets still in flight). Empty windows are left out.
#[derive(Clone, Debug)]
pub(crate) struct Timeline {
    window: u64,
    current: u64,
    total: Vec<u64>,
    network_sum: u64,
    hops: u64,
    windows: Vec<TimelineWindow>,
    /// Recording instead ([`Timeline::recording`]): the delivered packets themselves.
    recorded: Option<Vec<PacketRecord>>,
}

impl Timeline {
    /// `window` cycles per window (at least 1).
    pub(crate) fn new(window: u64) -> Self {
        Timeline {
            window: window.max(1),
            current: 0,
            total: Vec::new(),
            network_sum: 0,
            hops: 0,
            windows: Vec::new(),
            recorded: None,
        }
    }

    /// A timeline that keeps its packets instead of summing them up, for one partition of a
    /// network (the parallel engine): [`Timeline::of_records`] makes the whole network's
    /// timeline from every partition's.
    pub(crate) fn recording(window: u64) -> Self {
        Timeline {
            recorded: Some(Vec::new()),
            ..Timeline::new(window)
        }
    }

    /// The packets recorded (empty unless [`Timeline::recording`]).
    pub(crate) fn into_records(self) -> Vec<PacketRecord> {
        self.recorded.unwrap_or_default()
    }

    /// The timeline of `records`, the delivered packets of every partition together: the
    /// windows a single engine that delivered them all would have made (a window's figures
    /// do not depend on the order of its packets: latencies are sorted first, the rest are
    /// integer sums).
    pub(crate) fn of_records(window: u64, mut records: Vec<PacketRecord>) -> Vec<TimelineWindow> {
        records.sort_by_key(|r| r.delivered);
        let mut timeline = Timeline::new(window);
        for r in &records {
            timeline.delivered(r);
        }
        timeline.finish()
    }

    pub(crate) fn delivered(&mut self, rec: &PacketRecord) {
        if let Some(records) = &mut self.recorded {
            records.push(*rec);
            return;
        }
        let w = rec.delivered / self.window;
        if w != self.current {
            self.close();
            self.current = w;
        }
        self.total.push(rec.delivered - rec.created);
        self.network_sum += rec.delivered - rec.injected;
        self.hops += u64::from(rec.hops);
    }

    fn close(&mut self) {
        if self.total.is_empty() {
            return;
        }
        let n = self.total.len() as u64;
        let stats = latency_stats(&mut self.total, &[]);
        self.windows.push(TimelineWindow {
            start: self.current * self.window,
            packets: n,
            latency_avg: stats.avg,
            latency_p99: stats.p99,
            network_latency_avg: self.network_sum as f64 / n as f64,
            hops_avg: self.hops as f64 / n as f64,
        });
        self.total.clear();
        self.network_sum = 0;
        self.hops = 0;
    }

    /// The windows, the last (possibly partial) one included.
    pub(crate) fn finish(mut self) -> Vec<TimelineWindow> {
        self.close();
        self.windows
    }
}

/// Half-width of the 95% confidence interval of the mean of `samples` (batch means).
pub(crate) fn ci95(samples: &[f64]) -> Option<f64> {
    let b = samples.len();
    if b < 2 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / b as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (b - 1) as f64)
        .ok()?
        .inverse_cdf(0.975);
    Some(t * (var / b as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_uses_the_t_quantile() {
        // Samples 1..=5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.7764.
        let half = ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!((half - 2.7764451 * (2.5f64 / 5.0).sqrt()).abs() < 1e-6);
        assert_eq!(ci95(&[1.0]), None);
    }

    #[test]
    fn timeline_groups_by_delivery_window() {
        let mut t = Timeline::new(10);
        let rec = |created, delivered, hops| PacketRecord {
            class: 0,
            created,
            injected: created + 1,
            delivered,
            hops,
            flits: 1,
        };
        t.delivered(&rec(0, 5, 2));
        t.delivered(&rec(2, 9, 4));
        t.delivered(&rec(20, 31, 1));
        let w = t.finish();
        assert_eq!(w.len(), 2, "the empty window 10..20 is left out");
        assert_eq!((w[0].start, w[0].packets), (0, 2));
        assert_eq!(w[0].latency_avg, 6.0);
        assert_eq!(w[0].latency_p99, 7.0);
        assert_eq!(w[0].network_latency_avg, 5.0);
        assert_eq!(w[0].hops_avg, 3.0);
        assert_eq!((w[1].start, w[1].packets, w[1].latency_avg), (30, 1, 11.0));
    }

    #[test]
    fn window_batches_and_percentiles() {
        let mut c = Collector::new(1, 100, 100, 4);
        for i in 0..100u64 {
            let created = 100 + i;
            c.created(0, created, 2);
            c.delivered(&PacketRecord {
                class: 0,
                created,
                injected: created + 1,
                delivered: created + 10 + i % 10,
                hops: 3,
                flits: 2,
            });
            c.ejected(0, created + 10, 2);
        }
        // Outside the window: ignored.
        c.created(0, 50, 2);
        c.delivered(&PacketRecord {
            class: 0,
            created: 50,
            injected: 50,
            delivered: 500,
            hops: 9,
            flits: 2,
        });
        let (_, all) = c.summarize(1);
        assert_eq!(all.packets, 100);
        assert!((all.offered - 2.0).abs() < 1e-12);
        // Flits delivered at 110..=199 fall in the window: 90 packets * 2 flits / 100 cycles.
        assert!((all.accepted - 1.8).abs() < 1e-12);
        assert_eq!(all.latency.avg, 14.5);
        // Latencies 10..=19, ten of each: population variance (10^2 - 1) / 12.
        assert!((all.latency.sd - (99.0f64 / 12.0).sqrt()).abs() < 1e-12);
        assert_eq!(all.network_latency.avg, 13.5);
        assert_eq!(all.latency.max, 19.0);
        assert_eq!(all.latency.p50, 14.0);
        assert_eq!(all.hops_avg, 3.0);
        assert!(all.latency.ci95.unwrap() >= 0.0);
    }
}
