//! FQ-CoDel (RFC 8290), as Linux's `sch_fq_codel` runs it: the qdisc a Linux user has
//! by default today.
//!
//! Packets are hashed on their 5-tuple (SipHash-1-3 with a seeded key, Linux's
//! perturbed flow hash) into one of `flows` buckets, each a FIFO with its own CoDel
//! state. A deficit round robin with a `quantum` of bytes serves the buckets: a bucket
//! that becomes active joins the *new* list and is served before the *old* ones, which
//! gives sparse flows (a VoIP stream, a DNS query, a TCP handshake) priority; a bucket
//! that used its quantum moves to the end of the old list. An empty new bucket passes
//! once through the old list before it leaves (RFC 8290 §4.2, against starvation).
//!
//! When the whole queue holds more than `limit` packets or `memory_limit` bytes, Linux
//! does not drop the arrival: it drops from the head of the fattest bucket, up to half
//! its bytes and at most `drop_batch` packets (`fq_codel_drop`). brisk does the same and
//! reports those drops as overflow. Finding the fattest bucket scans them all, as Linux
//! does; that happens only when the queue is full.
//!
//! Parameters and defaults (Linux): 1024 `flows`, `quantum` 1514 bytes, CoDel `target`
//! 5 ms and `interval` 100 ms, `limit` 10240 packets, `memory_limit` 32 MiB,
//! `drop_batch` 64, ECN on (Linux's fq_codel marks by default, unlike codel). Packets
//! without a TCP or UDP 5-tuple hash on their addresses alone, or go to bucket 0.

use std::collections::VecDeque;
use std::hash::Hasher;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use siphasher::sip::SipHasher13;

use brisk_time::Instant;

use super::codel::{CoDelCtx, CoDelParams, CoDelVars};
use super::fifo::Fifo;
use super::{Dequeued, Queue, QueueDrop};
use crate::element::Packet;
use crate::error::NetError;

/// ChaCha stream for the hash key, apart from the loss model's (same seed).
const FQ_STREAM: u64 = 0x0066_7163; // "fqc"
/// Most buckets (Linux's limit is 65536).
pub const MAX_FLOWS: usize = 65_536;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCoDelParams {
    pub codel: CoDelParams,
    pub flows: usize,
    pub quantum: usize,
    pub limit_packets: usize,
    pub memory_limit: usize,
    pub drop_batch: usize,
}

impl Default for FqCoDelParams {
    fn default() -> Self {
        FqCoDelParams {
            codel: CoDelParams {
                ecn: true,
                limit_packets: 10_240,
                ..CoDelParams::default()
            },
            flows: 1024,
            quantum: 1514,
            limit_packets: 10_240,
            memory_limit: 32 << 20,
            drop_batch: 64,
        }
    }
}

impl FqCoDelParams {
    pub fn validate(&self) -> Result<(), NetError> {
        self.codel.validate()?;
        if self.flows == 0 || self.flows > MAX_FLOWS {
            return Err(NetError::invalid(
                "queue.flows",
                self.flows,
                "must be between 1 and 65536",
            ));
        }
        if self.quantum < 64 || self.quantum > 1 << 20 {
            return Err(NetError::invalid(
                "queue.quantum",
                self.quantum,
                "must be between 64 bytes and 1MiB",
            ));
        }
        if self.limit_packets == 0 {
            return Err(NetError::invalid("queue.packets", 0, "must be at least 1"));
        }
        if self.memory_limit < 1514 {
            return Err(NetError::invalid(
                "queue.memory_limit",
                self.memory_limit,
                "must be at least one MTU (1514 bytes)",
            ));
        }
        if self.drop_batch == 0 {
            return Err(NetError::invalid(
                "queue.drop_batch",
                0,
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

/// Which list a bucket is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listed {
    No,
    New,
    Old,
}

#[derive(Clone, Debug)]
struct Bucket {
    q: Fifo,
    vars: CoDelVars,
    deficit: i64,
    listed: Listed,
}

#[derive(Clone, Debug)]
pub struct FqCoDel {
    p: FqCoDelParams,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    packets: usize,
    bytes: usize,
    key: (u64, u64),
    dropped: VecDeque<QueueDrop>,
}

impl FqCoDel {
    pub fn new(p: FqCoDelParams, seed: u64) -> Result<Self, NetError> {
        p.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(FQ_STREAM);
        let bucket = Bucket {
            q: Fifo::default(),
            vars: CoDelVars::default(),
            deficit: 0,
            listed: Listed::No,
        };
        Ok(FqCoDel {
            p,
            buckets: vec![bucket; p.flows],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            key: (rng.gen(), rng.gen()),
            dropped: VecDeque::new(),
        })
    }

    /// The bucket of a packet: its 5-tuple hashed with the run's key.
    fn classify(&self, pkt: &Packet) -> usize {
        let Some(k) = brisk_wire::peek::flow_key(&pkt.data) else {
            return 0;
        };
        let mut h = SipHasher13::new_with_keys(self.key.0, self.key.1);
        std::hash::Hash::hash(&k, &mut h);
        (h.finish() % self.p.flows as u64) as usize
    }

    /// Takes the served bucket off the front of its list.
    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Linux `fq_codel_drop`: from the head of the bucket with the largest backlog, up
    /// to half its bytes and at most `drop_batch` packets.
    fn drop_from_fattest(&mut self, now: Instant) {
        let Some((idx, fat)) = self
            .buckets
            .iter()
            .enumerate()
            .max_by_key(|(i, b)| (b.q.bytes(), std::cmp::Reverse(*i)))
            .map(|(i, b)| (i, b.q.bytes()))
        else {
            return;
        };
        let threshold = fat / 2;
        let (mut n, mut len) = (0usize, 0usize);
        while let Some(e) = self.buckets[idx].q.pop() {
            len += e.pkt.len();
            self.packets -= 1;
            self.bytes -= e.pkt.len();
            self.dropped.push_back(QueueDrop {
                pkt: e.pkt,
                at: now,
                enqueued_at: e.enqueued_at,
                overflow: true,
            });
            n += 1;
            if n >= self.p.drop_batch || len >= threshold {
                break;
            }
        }
    }
}

impl Queue for FqCoDel {
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet> {
        self.dropped.clear();
        let idx = self.classify(&pkt);
        let len = pkt.len();
        let b = &mut self.buckets[idx];
        b.q.push(pkt, now, false);
        if b.listed == Listed::No {
            b.listed = Listed::New;
            b.deficit = self.p.quantum as i64;
            self.new_flows.push_back(idx as u32);
        }
        self.packets += 1;
        self.bytes += len;
        if self.packets > self.p.limit_packets || self.bytes > self.p.memory_limit {
            self.drop_from_fattest(now);
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        self.dropped.clear();
        // Each pass either sends, or moves a bucket to the old list or off the lists;
        // a bucket's deficit is refilled at most once per pass through the old list.
        loop {
            let (idx, from_new) = match self.new_flows.front() {
                Some(&i) => (i as usize, true),
                None => (*self.old_flows.front()? as usize, false),
            };
            let quantum = self.p.quantum as i64;
            if self.buckets[idx].deficit <= 0 {
                self.buckets[idx].deficit += quantum;
                self.pop_list(from_new);
                self.buckets[idx].listed = Listed::Old;
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let b = &mut self.buckets[idx];
            let (before_n, before_b) = (b.q.len(), b.q.bytes());
            let other = self.bytes - before_b;
            let mut cx = CoDelCtx {
                p: &self.p.codel,
                q: &mut b.q,
                other_backlog: other,
                dropped: &mut self.dropped,
            };
            let got = b.vars.dequeue(&mut cx, now);
            self.packets -= before_n - b.q.len();
            self.bytes -= before_b - b.q.bytes();
            match got {
                Some(e) => {
                    b.deficit -= e.pkt.len() as i64;
                    return Some(e.into());
                }
                None => {
                    self.pop_list(from_new);
                    // An emptied new bucket goes once through the old list.
                    if from_new && !self.old_flows.is_empty() {
                        self.buckets[idx].listed = Listed::Old;
                        self.old_flows.push_back(idx as u32);
                    } else {
                        self.buckets[idx].listed = Listed::No;
                    }
                }
            }
        }
    }

    fn drops_pending(&self) -> bool {
        !self.dropped.is_empty()
    }

    fn poll_drop(&mut self) -> Option<QueueDrop> {
        self.dropped.pop_front()
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packets::ip;
    use brisk_wire::Ecn;

    /// A TCP packet of `len` bytes from source port `port`.
    fn tcp(id: u64, port: u16, len: usize) -> Packet {
        let mut p = ip(id, len.max(40), Ecn::Ect0);
        p.data[20..22].copy_from_slice(&port.to_be_bytes());
        p.data[22..24].copy_from_slice(&80u16.to_be_bytes());
        p
    }

    fn fq(p: FqCoDelParams) -> FqCoDel {
        FqCoDel::new(p, 11).unwrap()
    }

    #[test]
    fn a_sparse_flow_goes_ahead_of_a_backlogged_one() {
        let mut q = fq(FqCoDelParams::default());
        let t = Instant::from_millis(1);
        for i in 0..50 {
            q.enqueue(t, tcp(i, 1000, 1500)).unwrap();
        }
        // A 1514-byte quantum lets the bulk bucket send two 1500-byte packets (the
        // deficit is still positive after one); then a new flow arrives.
        assert_eq!(q.dequeue(t).unwrap().pkt.id, 0);
        assert_eq!(q.dequeue(t).unwrap().pkt.id, 1);
        q.enqueue(t, tcp(999, 2000, 100)).unwrap();
        let next = q.dequeue(t).unwrap().pkt.id;
        assert_eq!(next, 999, "the new flow is served first");
        assert_eq!(q.len_packets(), 48);
    }

    #[test]
    fn backlogged_flows_share_by_bytes() {
        let mut q = fq(FqCoDelParams::default());
        let t = Instant::from_millis(1);
        // Flow A sends 1500-byte packets, flow B 500-byte ones.
        for i in 0..300 {
            q.enqueue(t, tcp(i, 1000, 1500)).unwrap();
            q.enqueue(t, tcp(10_000 + i, 2000, 500)).unwrap();
        }
        let (mut a, mut b) = (0usize, 0usize);
        for _ in 0..200 {
            let d = q.dequeue(t).unwrap();
            if d.pkt.id < 10_000 {
                a += d.pkt.len();
            } else {
                b += d.pkt.len();
            }
        }
        let ratio = a as f64 / b as f64;
        assert!((0.8..1.25).contains(&ratio), "bytes A {a} B {b}");
    }

    #[test]
    fn a_full_queue_drops_from_the_fattest_flow_not_the_arrival() {
        let mut q = fq(FqCoDelParams {
            limit_packets: 20,
            ..FqCoDelParams::default()
        });
        let t = Instant::from_millis(1);
        for i in 0..20 {
            q.enqueue(t, tcp(i, 1000, 1000)).unwrap();
            assert!(q.poll_drop().is_none());
        }
        q.enqueue(t, tcp(500, 2000, 1000)).unwrap();
        let dropped: Vec<u64> = std::iter::from_fn(|| q.poll_drop())
            .map(|d| {
                assert!(d.overflow);
                d.pkt.id
            })
            .collect();
        // Half the fat bucket's bytes: its 10 oldest packets.
        assert_eq!(dropped, (0..10).collect::<Vec<u64>>());
        assert_eq!(q.len_packets(), 11);
        // The small flow's packet is still there, and goes after the fat bucket's
        // quantum (two 1000-byte packets).
        let order: Vec<u64> = (0..3).map(|_| q.dequeue(t).unwrap().pkt.id).collect();
        assert_eq!(order, vec![10, 11, 500]);
    }

    #[test]
    fn each_bucket_runs_codel_on_its_own_sojourn() {
        let mut q = fq(FqCoDelParams {
            codel: CoDelParams {
                ecn: false,
                ..FqCoDelParams::default().codel
            },
            ..FqCoDelParams::default()
        });
        // A standing 300-ms backlog in one bucket: CoDel drops from it after an interval.
        let mut id = 0;
        for ms in 0..400u64 {
            let t = Instant::from_millis(ms);
            for _ in 0..2 {
                q.enqueue(t, tcp(id, 1000, 1500)).unwrap();
                id += 1;
            }
            q.dequeue(t);
        }
        let t = Instant::from_millis(400);
        q.dequeue(t);
        let drops = std::iter::from_fn(|| q.poll_drop()).count();
        let total: usize = (401..600u64)
            .map(|ms| {
                q.dequeue(Instant::from_millis(ms));
                std::iter::from_fn(|| q.poll_drop()).count()
            })
            .sum();
        assert!(drops + total > 0, "CoDel dropped from the standing bucket");
        assert!(std::iter::from_fn(|| q.poll_drop()).all(|d| !d.overflow));
    }

    #[test]
    fn the_hash_key_comes_from_the_seed() {
        let a = FqCoDel::new(FqCoDelParams::default(), 1).unwrap();
        let b = FqCoDel::new(FqCoDelParams::default(), 1).unwrap();
        let c = FqCoDel::new(FqCoDelParams::default(), 2).unwrap();
        let buckets = |q: &FqCoDel| {
            (1000..1100)
                .map(|p| q.classify(&tcp(0, p, 100)))
                .collect::<Vec<_>>()
        };
        assert_eq!(buckets(&a), buckets(&b));
        assert_ne!(buckets(&a), buckets(&c));
        let distinct: std::collections::BTreeSet<usize> = buckets(&a).into_iter().collect();
        assert!(
            distinct.len() > 90,
            "100 flows into 1024 buckets: few collisions"
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (p, field) in [
            (
                FqCoDelParams {
                    flows: 0,
                    ..FqCoDelParams::default()
                },
                "queue.flows",
            ),
            (
                FqCoDelParams {
                    quantum: 10,
                    ..FqCoDelParams::default()
                },
                "queue.quantum",
            ),
            (
                FqCoDelParams {
                    memory_limit: 100,
                    ..FqCoDelParams::default()
                },
                "queue.memory_limit",
            ),
        ] {
            let e = FqCoDel::new(p, 1).unwrap_err();
            assert!(e.to_string().contains(field), "{e}");
        }
    }
}
