//! The one conversion of a link description into brisk-net's runtime parameters
//! ([`LinkConfig`]): each queue's defaults where a key is absent, a time limit as bytes
//! at the link's rate, the loss model, and the impairment stage only when asked for.
//! Validation uses the same functions, so it checks the values that will be built.

use brisk_net::impair::ImpairParams;
use brisk_net::link::LinkParams;
use brisk_net::loss::LossModel;
use brisk_net::outage::Outage;
use brisk_net::queue::{CoDelParams, FqCoDelParams, PieParams, PrioParams, QueueLimit, RedParams};
use brisk_net::{LinkConfig, NetError, QueueConfig};
use brisk_time::{Duration, Instant};

use super::{
    BandPieSpec, LinkBuildError, LinkElements, LinkSeeds, LinkSpec, ListCount, LossSpec, QueueSpec,
    DEFAULT_QUEUE_PACKETS, UNLIMITED_QUEUE_PACKETS,
};
use crate::units::Size;

impl BandPieSpec {
    /// The parameters, with Linux 3.17.4's defaults where a key is absent.
    pub fn params(&self) -> PieParams {
        let d = PieParams::default();
        PieParams {
            target: self.target.map_or(d.target, |t| t.0),
            tupdate: self.tupdate.map_or(d.tupdate, |t| t.0),
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            max_burst: self.max_burst.map_or(d.max_burst, |t| t.0),
            bytemode: self.bytemode,
            ecn: self.ecn,
            ecn_drop_above: if self.ecn_drop_rule.unwrap_or(true) {
                Some(self.ecn_drop_above.unwrap_or(0.1))
            } else {
                None
            },
            ..d
        }
    }
}

impl LinkSpec {
    /// Builds the elements, with `extra_delay` added to the link's own delay (the
    /// emulator folds each direction's share of the base RTT in here). `name` labels
    /// errors. Call [`validate`](Self::validate) first for errors that name the key;
    /// the elements' own checks still catch anything it lets through.
    pub fn build(
        &self,
        name: &str,
        extra_delay: Duration,
        seeds: LinkSeeds,
    ) -> Result<LinkElements, LinkBuildError> {
        self.config(name, extra_delay)?.build(name, seeds)
    }

    /// brisk-net's parameters for this link, with `extra_delay` added to its own delay.
    /// The only error is a `trace` that was named but not loaded (`name.trace`).
    pub fn config(&self, name: &str, extra_delay: Duration) -> Result<LinkConfig, LinkBuildError> {
        let link = LinkParams {
            rate_bps: self.rate.map_or(0, |r| r.0),
            delay: extra_delay.saturating_add(self.delay.map_or(Duration::ZERO, |d| d.0)),
            outages: self
                .outages
                .iter()
                .map(|o| Outage {
                    start: Instant::ZERO + o.start.0,
                    end: Instant::ZERO + o.start.0 + o.duration.0,
                })
                .collect(),
            trace: match &self.trace {
                None => None,
                Some(t) => Some(t.loaded.clone().ok_or_else(|| LinkBuildError {
                    field: format!("{name}.trace"),
                    source: NetError::Invalid {
                        field: "trace",
                        value: t.path.clone(),
                        reason: "was not loaded",
                    },
                })?),
            },
            ..LinkParams::default()
        };
        let queue = match &self.queue {
            Some(QueueSpec::Codel { .. }) => QueueConfig::CoDel(self.codel_params()),
            Some(QueueSpec::Red { .. }) => QueueConfig::Red(self.red_params()),
            Some(QueueSpec::Pie { .. }) => QueueConfig::Pie(self.pie_params()),
            Some(QueueSpec::FqCodel { .. }) => QueueConfig::FqCoDel(self.fq_codel_params()),
            Some(QueueSpec::Prio { band0_pie, .. }) => QueueConfig::Prio {
                params: self.prio_params(),
                band0_pie: band0_pie.as_ref().map(BandPieSpec::params),
            },
            Some(QueueSpec::Droptail { .. }) | None => {
                let (limit, ecn_threshold) = self.queue_limits();
                QueueConfig::DropTail {
                    limit,
                    ecn_threshold,
                }
            }
        };
        let impairment = self.is_impaired().then(|| ImpairParams {
            jitter: self.jitter.as_ref().map_or(Duration::ZERO, |j| j.max.0),
            reorder: self.jitter.as_ref().is_some_and(|j| j.reorder),
            duplicate_p: self.duplicate.unwrap_or(0.0),
            corrupt_p: self.corrupt.unwrap_or(0.0),
            ..ImpairParams::default()
        });
        Ok(LinkConfig {
            link,
            queue,
            loss: self.loss_model(),
            impairment,
        })
    }

    /// CoDel's parameters: the scenario's, else RFC 8289's defaults.
    pub(crate) fn codel_params(&self) -> CoDelParams {
        let d = CoDelParams::default();
        match &self.queue {
            Some(QueueSpec::Codel {
                target,
                interval,
                packets,
                ecn,
            }) => CoDelParams {
                target: target.map_or(d.target, |t| t.0),
                interval: interval.map_or(d.interval, |t| t.0),
                limit_packets: packets.map_or(d.limit_packets, to_usize),
                ecn: *ecn,
                ..d
            },
            _ => d,
        }
    }

    /// RED's parameters: the scenario's, else the defaults; the link rate for the
    /// idle decay.
    pub(crate) fn red_params(&self) -> RedParams {
        let d = RedParams {
            rate_bps: self.rate.map_or(0, |r| r.0),
            ..RedParams::default()
        };
        match &self.queue {
            Some(QueueSpec::Red {
                min_th,
                max_th,
                max_p,
                w_q,
                gentle,
                ecn,
                harddrop,
                packets,
                mean_packet,
            }) => RedParams {
                min_th: min_th.unwrap_or(d.min_th),
                max_th: max_th.unwrap_or(d.max_th),
                max_p: max_p.unwrap_or(d.max_p),
                w_q: w_q.unwrap_or(d.w_q),
                gentle: gentle.unwrap_or(d.gentle),
                ecn: *ecn,
                harddrop: *harddrop,
                limit_packets: packets.map_or(d.limit_packets, to_usize),
                mean_packet: mean_packet.map_or(d.mean_packet, to_usize),
                ..d
            },
            _ => d,
        }
    }

    /// PIE's parameters: the scenario's, else Linux 3.17.4's.
    pub(crate) fn pie_params(&self) -> PieParams {
        let d = PieParams::default();
        match &self.queue {
            Some(QueueSpec::Pie {
                target,
                tupdate,
                alpha,
                beta,
                max_burst,
                packets,
                bytemode,
                ecn,
                ecn_drop_rule,
                ecn_drop_above,
            }) => PieParams {
                target: target.map_or(d.target, |t| t.0),
                tupdate: tupdate.map_or(d.tupdate, |t| t.0),
                alpha: alpha.unwrap_or(d.alpha),
                beta: beta.unwrap_or(d.beta),
                max_burst: max_burst.map_or(d.max_burst, |t| t.0),
                limit_packets: packets.map_or(d.limit_packets, to_usize),
                bytemode: *bytemode,
                ecn: *ecn,
                ecn_drop_above: if ecn_drop_rule.unwrap_or(true) {
                    Some(ecn_drop_above.unwrap_or(0.1))
                } else {
                    None
                },
                ..d
            },
            _ => d,
        }
    }

    /// FQ-CoDel's parameters: the scenario's, else Linux's.
    pub(crate) fn fq_codel_params(&self) -> FqCoDelParams {
        let d = FqCoDelParams::default();
        match &self.queue {
            Some(QueueSpec::FqCodel {
                target,
                interval,
                flows,
                quantum,
                packets,
                memory_limit,
                drop_batch,
                ecn,
            }) => FqCoDelParams {
                codel: CoDelParams {
                    target: target.map_or(d.codel.target, |t| t.0),
                    interval: interval.map_or(d.codel.interval, |t| t.0),
                    ecn: ecn.unwrap_or(d.codel.ecn),
                    ..d.codel
                },
                flows: flows.map_or(d.flows, to_usize),
                quantum: quantum.map_or(d.quantum, to_usize),
                limit_packets: packets.map_or(d.limit_packets, to_usize),
                memory_limit: memory_limit.map_or(d.memory_limit, |m| to_usize(m.0)),
                drop_batch: drop_batch.map_or(d.drop_batch, to_usize),
            },
            _ => d,
        }
    }

    /// The strict-priority queue's parameters: the scenario's, else 3 bands (Linux's
    /// `prio`), the queue limit of `queue_limits`, push-out on.
    pub(crate) fn prio_params(&self) -> PrioParams {
        let d = PrioParams::default();
        match &self.queue {
            Some(QueueSpec::Prio {
                bands, push_out, ..
            }) => PrioParams {
                bands: bands.map_or(d.bands, to_usize),
                limit: self.queue_limits().0,
                push_out: push_out.unwrap_or(d.push_out),
            },
            _ => d,
        }
    }

    /// The queue limit and the optional ECN marking threshold.
    pub(crate) fn queue_limits(&self) -> (QueueLimit, Option<QueueLimit>) {
        let packets = |p: u64| QueueLimit::Packets(to_usize(p));
        let bytes = |b: Size| QueueLimit::Bytes(to_usize(b.0));
        let default = if self.rate.is_none() && self.trace.is_none() {
            QueueLimit::Packets(UNLIMITED_QUEUE_PACKETS)
        } else {
            QueueLimit::Packets(DEFAULT_QUEUE_PACKETS)
        };
        match &self.queue {
            None => (default, None),
            Some(QueueSpec::Droptail {
                packets: p,
                bytes: b,
                time: t,
                ecn_threshold_packets: kp,
                ecn_threshold_bytes: kb,
            }) => {
                // A time limit is that many bytes at the link's rate.
                let in_time = t
                    .zip(self.rate)
                    .map(|(t, r)| Size((u128::from(r.0) * t.0.as_nanos() / 8_000_000_000) as u64));
                let limit = match (b.or(in_time), p) {
                    (Some(b), _) => bytes(b),
                    (None, Some(p)) => packets(*p),
                    (None, None) => default,
                };
                (limit, kb.map(bytes).or(kp.map(packets)))
            }
            Some(QueueSpec::Prio {
                packets: p,
                bytes: b,
                ..
            }) => match (b, p) {
                (Some(b), _) => (bytes(*b), None),
                (None, Some(p)) => (packets(*p), None),
                (None, None) => (QueueLimit::Packets(1000), None),
            },
            Some(
                QueueSpec::Codel { packets: p, .. }
                | QueueSpec::Red { packets: p, .. }
                | QueueSpec::Pie { packets: p, .. }
                | QueueSpec::FqCodel { packets: p, .. },
            ) => (p.map_or(QueueLimit::Packets(1000), packets), None),
        }
    }

    pub(crate) fn loss_model(&self) -> LossModel {
        match &self.loss {
            None | Some(LossSpec::None) => LossModel::None,
            Some(LossSpec::Bernoulli { p }) => LossModel::Bernoulli { p: *p },
            Some(LossSpec::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            }) => LossModel::GilbertElliott {
                p_gb: *p_good_bad,
                p_bg: *p_bad_good,
                loss_good: *loss_good,
                loss_bad: *loss_bad,
            },
            Some(LossSpec::List { packets, count }) => match count {
                ListCount::All => LossModel::List(packets.clone()),
                ListCount::Data => LossModel::DataList(packets.clone()),
            },
        }
    }
}

/// A count from a scenario as a `usize`, saturating (the ranges are checked before).
fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}
