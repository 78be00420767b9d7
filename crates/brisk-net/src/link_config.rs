//! One direction of a path as runtime parameters ([`LinkConfig`]), and the one
//! function that builds its elements: a [`Link`] (outage → loss → queue → serialiser →
//! delay), followed by an [`Impairment`] only when jitter, duplication or corruption is
//! asked for.
//!
//! brisk-net knows no scenario file: the words a link is written in (`rate`, `queue =
//! { kind = "codel" }`, …), their defaults and range checks are brisk-scenario's
//! `link::LinkSpec`, which turns itself into a `LinkConfig` in one place
//! (`LinkSpec::config`). The simulator and the emulator both build their links through
//! here, so the same description means the same elements in virtual and in real time.

use thiserror::Error;

use crate::error::NetError;
use crate::impair::{ImpairParams, Impairment};
use crate::link::{Link, LinkParams};
use crate::loss::{Loss, LossModel};
use crate::queue::{
    AnyQueue, CoDel, CoDelParams, DropTail, FqCoDel, FqCoDelParams, Pie, PieParams, Prio,
    PrioParams, QueueLimit, Red, RedParams,
};

/// A link's queue discipline with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// A FIFO with a limit and an optional step ECN marking threshold.
    DropTail {
        limit: QueueLimit,
        ecn_threshold: Option<QueueLimit>,
    },
    CoDel(CoDelParams),
    Red(RedParams),
    Pie(PieParams),
    FqCoDel(FqCoDelParams),
    /// Strict priority, optionally with PIE on band 0.
    Prio {
        params: PrioParams,
        band0_pie: Option<PieParams>,
    },
}

/// Everything one link is built from, in brisk-net's own parameter types.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub link: LinkParams,
    pub queue: QueueConfig,
    pub loss: LossModel,
    /// Present only when jitter, duplication or corruption is asked for.
    pub impairment: Option<ImpairParams>,
}

/// An element refused its parameters while a link was built.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field}: {source}")]
pub struct LinkBuildError {
    /// `<name>.queue`, `<name>.loss`, or `<name>` for the link or impairment itself.
    pub field: String,
    #[source]
    pub source: NetError,
}

/// Seeds of a link's two random streams, chosen by the owner so that each keeps its
/// own derivation scheme (and thus its runs' randomness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSeeds {
    pub loss: u64,
    pub impair: u64,
}

/// What one link description becomes.
#[derive(Clone, Debug)]
pub struct LinkElements {
    pub link: Link,
    /// Present only when jitter, duplication or corruption is asked for.
    pub impairment: Option<Impairment>,
}

impl LinkConfig {
    /// Builds the elements; `name` labels errors. Each element checks its own
    /// parameters, so this catches anything a description's validation let through.
    pub fn build(self, name: &str, seeds: LinkSeeds) -> Result<LinkElements, LinkBuildError> {
        // The field's name is formatted only when there is an error: formatted up
        // front it cost three `format!`s per link, a tenth of the build of `bench
        // scale`'s 4 × 10^5 links at 10^5 flows (issue 36 §2).
        let err = |part: &'static str| {
            move |source| LinkBuildError {
                field: if part.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}.{part}")
                },
                source,
            }
        };
        let queue: AnyQueue = match self.queue {
            QueueConfig::CoDel(p) => CoDel::new(p).map_err(err("queue"))?.into(),
            // RED and PIE draw from the loss seed on streams of their own.
            QueueConfig::Red(p) => Red::new(p, seeds.loss).map_err(err("queue"))?.into(),
            QueueConfig::Pie(p) => Pie::new(p, seeds.loss).map_err(err("queue"))?.into(),
            // The flow hash's key comes from the loss seed too (its own stream).
            QueueConfig::FqCoDel(p) => FqCoDel::new(p, seeds.loss).map_err(err("queue"))?.into(),
            QueueConfig::Prio { params, band0_pie } => {
                let mut q = Prio::new(params).map_err(err("queue"))?;
                if let Some(p) = band0_pie {
                    // PIE's draws come from the loss seed, as a PIE queue's do.
                    q = q.with_band0_pie(p, seeds.loss).map_err(err("queue"))?;
                }
                q.into()
            }
            QueueConfig::DropTail {
                limit,
                ecn_threshold,
            } => {
                let mut droptail = DropTail::new(limit).map_err(err("queue"))?;
                if let Some(k) = ecn_threshold {
                    droptail = droptail.with_ecn_threshold(k);
                }
                droptail.into()
            }
        };
        let loss = Loss::new(self.loss, seeds.loss).map_err(err("loss"))?;
        let link = Link::new(self.link, queue, loss).map_err(err(""))?;
        let impairment = match self.impairment {
            None => None,
            Some(p) => Some(Impairment::new(p, seeds.impair).map_err(err(""))?),
        };
        Ok(LinkElements { link, impairment })
    }
}
