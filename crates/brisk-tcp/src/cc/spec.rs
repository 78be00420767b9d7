//! Which controller a connection runs, as data: a base algorithm plus an ordered list of
//! layers ([`CcSpec`]), and the factory that turns a spec into a controller
//! ([`CcFactory`]). The endpoint owns one factory and one [`HostCc`] handle, so that
//! controllers which need randomness (CDG's probabilistic backoff) get a per-connection
//! seed, and controllers which couple flows (FSE, RFC 8699; shared-bottleneck
//! detection, RFC 8382) reach state shared by the host's connections.

use super::abe::{Abe, AbeConfig};
use super::cdg::CdgConfig;
use super::dctcp::DctcpConfig;
use super::delay_corr::{DelayCorrConfig, DelayCorrelation};
use super::new_cwv::{NewCwv, NewCwvConfig};
use super::{CcAlgorithm, CongestionControl};
use std::fmt;
use std::sync::{Arc, Mutex};

/// One layer around the base controller, innermost first in [`CcSpec::layers`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LayerSpec {
    /// The delay-correlation bufferbloat limiter (Nowlan 2014 ch. 3), tag "dc".
    DelayCorrelation(DelayCorrConfig),
    /// New congestion window validation (RFC 7661), tag "cwv".
    NewCwv(NewCwvConfig),
    /// Alternative Backoff with ECN (RFC 8511), tag "abe".
    Abe(AbeConfig),
}

impl LayerSpec {
    /// The tag this layer adds to a label ("dc").
    pub fn tag(&self) -> &'static str {
        match self {
            LayerSpec::DelayCorrelation(_) => super::delay_corr::TAG,
            LayerSpec::NewCwv(_) => super::new_cwv::TAG,
            LayerSpec::Abe(_) => super::abe::TAG,
        }
    }
}

/// A controller as data: `base` wrapped by `layers`, innermost first.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CcSpec {
    pub base: CcAlgorithm,
    pub layers: Vec<LayerSpec>,
    /// Module parameters of the base controllers that have any (CDG, DCTCP); only the
    /// base's own part is read.
    pub tuning: BaseTuning,
}

/// Linux's module parameters of the base controllers that have them, with Linux's
/// defaults.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BaseTuning {
    pub cdg: CdgConfig,
    pub dctcp: DctcpConfig,
}

impl From<CcAlgorithm> for CcSpec {
    fn from(base: CcAlgorithm) -> Self {
        CcSpec {
            base,
            layers: Vec::new(),
            tuning: BaseTuning::default(),
        }
    }
}

impl CcSpec {
    /// `self` with `layer` added outermost.
    pub fn with_layer(mut self, layer: LayerSpec) -> Self {
        self.layers.push(layer);
        self
    }

    /// The label the built controller reports: "cubic", "cubic+dc", ...
    pub fn name(&self) -> String {
        let mut s = self.base.name().to_string();
        for l in &self.layers {
            s.push('+');
            s.push_str(l.tag());
        }
        s
    }

    /// The delay-correlation layer's settings, if the spec has that layer.
    pub fn delay_correlation(&self) -> Option<&DelayCorrConfig> {
        self.layers.iter().find_map(|l| match l {
            LayerSpec::DelayCorrelation(c) => Some(c),
            _ => None,
        })
    }

    /// The ABE layer's settings, if the spec has that layer.
    pub fn abe(&self) -> Option<&AbeConfig> {
        self.layers.iter().find_map(|l| match l {
            LayerSpec::Abe(c) => Some(c),
            _ => None,
        })
    }

    /// The new-CWV layer's settings, if the spec has that layer.
    pub fn new_cwv(&self) -> Option<&NewCwvConfig> {
        self.layers.iter().find_map(|l| match l {
            LayerSpec::NewCwv(c) => Some(c),
            _ => None,
        })
    }
}

/// State shared by all controllers of one host (one endpoint). Cloning gives another
/// handle to the same state. Today it counts the controllers built, which is what an
/// ensemble needs first (FSE's flow count); FSE and shared-bottleneck detection will
/// keep their per-bottleneck groups here.
#[derive(Clone, Debug, Default)]
pub struct HostCc(Arc<Mutex<HostCcState>>);

#[derive(Debug, Default)]
struct HostCcState {
    built: u64,
}

impl HostCc {
    /// Controllers built for this host so far.
    pub fn controllers_built(&self) -> u64 {
        self.lock().built
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HostCcState> {
        // A poisoned lock only means another connection panicked mid-update of a
        // counter; the value is still meaningful.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a factory gets besides the spec.
#[derive(Clone, Copy, Debug)]
pub struct CcContext<'a> {
    /// The connection's seed (from the endpoint's RNG): the only source of randomness
    /// a controller may use.
    pub seed: u64,
    pub host: &'a HostCc,
}

/// Builds controllers from specs. The endpoint holds one (`EndpointConfig::cc_factory`);
/// researchers plug in their own to run a controller brisk does not ship.
pub trait CcFactory: fmt::Debug + Send + Sync {
    fn build(&self, spec: &CcSpec, ctx: CcContext<'_>) -> Box<dyn CongestionControl>;
}

/// The controllers brisk ships.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardCcFactory;

impl CcFactory for StandardCcFactory {
    fn build(&self, spec: &CcSpec, ctx: CcContext<'_>) -> Box<dyn CongestionControl> {
        ctx.host.lock().built += 1;
        let mut cc = spec.base.build_with(&spec.tuning, ctx.seed);
        for layer in &spec.layers {
            cc = match layer {
                LayerSpec::DelayCorrelation(dc) => {
                    // The connection's seed is mixed into the layer's sampling seed so
                    // that flows sharing one configuration draw independent samples.
                    let mut dc = dc.clone();
                    dc.seed ^= ctx.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    Box::new(DelayCorrelation::new(cc, dc))
                }
                LayerSpec::NewCwv(cfg) => Box::new(NewCwv::new(cc, cfg.clone())),
                LayerSpec::Abe(cfg) => {
                    let beta = cfg
                        .beta_ecn
                        .unwrap_or_else(|| super::abe::default_beta_ecn(spec.base));
                    Box::new(Abe::new(cc, beta).with_beta_loss(cfg.beta_loss))
                }
            };
        }
        cc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compose_from_the_spec_and_match_the_built_label() {
        let host = HostCc::default();
        let ctx = CcContext {
            seed: 7,
            host: &host,
        };
        for base in [CcAlgorithm::Reno, CcAlgorithm::Cubic] {
            let plain = CcSpec::from(base);
            assert_eq!(plain.name(), base.name());
            assert_eq!(StandardCcFactory.build(&plain, ctx).label(), plain.name());
            let dc = plain.with_layer(LayerSpec::DelayCorrelation(DelayCorrConfig::default()));
            assert_eq!(dc.name(), format!("{}+dc", base.name()));
            assert_eq!(StandardCcFactory.build(&dc, ctx).label(), dc.name());
            assert!(dc.delay_correlation().is_some());
            let cwv = dc.with_layer(LayerSpec::NewCwv(NewCwvConfig::default()));
            assert_eq!(cwv.name(), format!("{}+dc+cwv", base.name()));
            assert_eq!(StandardCcFactory.build(&cwv, ctx).label(), cwv.name());
            assert!(cwv.new_cwv().is_some() && cwv.delay_correlation().is_some());
        }
        assert_eq!(host.controllers_built(), 6);
    }
}
