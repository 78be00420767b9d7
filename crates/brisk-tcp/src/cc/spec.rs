//! Which controller a connection runs, as data: a base algorithm plus an ordered list of
//! layers ([`CcSpec`]), and the factory that turns a spec into a controller
//! ([`CcFactory`]). The endpoint owns one factory and the host's [`HostCc`], so that
//! controllers which need randomness (CDG's probabilistic backoff) get a per-connection
//! seed, and controllers which couple flows (FSE, RFC 8699; shared-bottleneck
//! detection, RFC 8382) learn their path and group at build time ([`PathInfo`]).

use super::abe::{Abe, AbeConfig};
use super::cdg::CdgConfig;
use super::dctcp::DctcpConfig;
use super::delay_corr::{DelayCorrConfig, DelayCorrelation};
use super::host::{HostCc, PathInfo};
use super::new_cwv::{NewCwv, NewCwvConfig};
use super::{CcAlgorithm, CongestionControl};
use std::fmt;

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

impl LayerSpec {
    /// The layer's kind, without its settings.
    pub fn kind(&self) -> LayerKind {
        match self {
            LayerSpec::DelayCorrelation(_) => LayerKind::DelayCorrelation,
            LayerSpec::NewCwv(_) => LayerKind::NewCwv,
            LayerSpec::Abe(_) => LayerKind::Abe,
        }
    }
}

/// A layer's kind: what a [`LayerOrder`] lists. Written as the scenario knob that
/// switches it on (`delay_correlation`, `new_cwv`, `abe`, the names a scenario's
/// `layer_order` uses); the layer's tag (`dc`, `cwv`) is read too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LayerKind {
    #[serde(rename = "delay_correlation", alias = "dc")]
    DelayCorrelation,
    #[serde(rename = "new_cwv", alias = "cwv")]
    NewCwv,
    #[serde(rename = "abe")]
    Abe,
}

impl LayerKind {
    /// Every kind, in the default order.
    pub const ALL: [LayerKind; 3] = [
        LayerKind::DelayCorrelation,
        LayerKind::NewCwv,
        LayerKind::Abe,
    ];

    pub fn tag(self) -> &'static str {
        match self {
            LayerKind::DelayCorrelation => super::delay_corr::TAG,
            LayerKind::NewCwv => super::new_cwv::TAG,
            LayerKind::Abe => super::abe::TAG,
        }
    }

    /// The scenario knob that switches this layer on, which is also its name in a
    /// layer order.
    pub fn key(self) -> &'static str {
        match self {
            LayerKind::DelayCorrelation => "delay_correlation",
            LayerKind::NewCwv => "new_cwv",
            LayerKind::Abe => "abe",
        }
    }

    /// The kind with this tag ("dc", "cwv", "abe").
    pub fn from_tag(tag: &str) -> Option<LayerKind> {
        LayerKind::ALL.into_iter().find(|k| k.tag() == tag)
    }
}

/// The order in which layers wrap the base controller, innermost first: the data a
/// scenario gives to say, for example, that ABE sits inside new-CWV. A spec built
/// with [`CcSpec::with_layer_in`] places each layer by it. Kinds a list leaves out
/// follow the listed ones in the default order.
///
/// Default: delay correlation, then new-CWV, then ABE (`cubic+dc+cwv+abe`), the order
/// the scenario builder has always used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Vec<LayerKind>", into = "Vec<LayerKind>")]
pub struct LayerOrder([LayerKind; 3]);

impl Default for LayerOrder {
    fn default() -> Self {
        LayerOrder(LayerKind::ALL)
    }
}

/// A layer order that names a kind twice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("layer \"{0}\" is listed more than once (each of dc, cwv, abe at most once)")]
pub struct LayerOrderError(pub &'static str);

impl LayerOrder {
    /// `kinds` innermost first, each at most once.
    pub fn new(kinds: &[LayerKind]) -> Result<Self, LayerOrderError> {
        let mut order = [LayerKind::DelayCorrelation; 3];
        let mut n = 0;
        for &k in kinds.iter().chain(LayerKind::ALL.iter()) {
            let seen = order[..n].contains(&k);
            if seen && n < kinds.len() {
                return Err(LayerOrderError(k.tag()));
            }
            if !seen {
                order[n] = k;
                n += 1;
            }
        }
        Ok(LayerOrder(order))
    }

    /// The kinds, innermost first.
    pub fn kinds(&self) -> &[LayerKind; 3] {
        &self.0
    }

    /// Where `kind` sits: 0 innermost.
    pub fn position(&self, kind: LayerKind) -> usize {
        self.0
            .iter()
            .position(|&k| k == kind)
            .unwrap_or(self.0.len())
    }
}

impl TryFrom<Vec<LayerKind>> for LayerOrder {
    type Error = LayerOrderError;
    fn try_from(v: Vec<LayerKind>) -> Result<Self, Self::Error> {
        LayerOrder::new(&v)
    }
}

impl From<LayerOrder> for Vec<LayerKind> {
    fn from(o: LayerOrder) -> Self {
        o.0.to_vec()
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
    /// The Flow State Exchange (`fse/tcp.rs`): couples this flow's window with its
    /// group's. Always the outermost layer (it writes the share the layers inside
    /// computed towards); the endpoint puts the flow in the group it names.
    pub fse: Option<super::fse::tcp::FseConfig>,
}

/// Linux's module parameters of the base controllers that have them, with Linux's
/// defaults.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BaseTuning {
    pub cdg: CdgConfig,
    pub dctcp: DctcpConfig,
    /// The coupled controllers' option (LISA), read by `lia`, `olia` and `balia`.
    pub coupled: super::coupled::CoupledConfig,
    /// Copa's δ and mode switch (`[flow.tcp.copa]`).
    pub copa: super::copa::CopaConfig,
    /// Linux's module parameters of the Vegas, Hybla, Illinois, H-TCP and BIC ports
    /// (`[flow.tcp.vegas]` … `[flow.tcp.bic]`); Westwood+, Scalable, HighSpeed, Veno,
    /// YeAH and LP have none (their constants are `#define`s in Linux).
    pub vegas: super::vegas::VegasConfig,
    /// Which TCP-LP `lp` builds: Linux's (default) or the corrected one
    /// (`[flow.tcp.lp] variant`; `lp_corrected.rs`).
    pub lp: super::lp_corrected::LpVariant,
    pub hybla: super::hybla::HyblaConfig,
    pub illinois: super::illinois::IllinoisConfig,
    pub htcp: super::htcp::HtcpConfig,
    pub bic: super::bic::BicConfig,
}

impl From<CcAlgorithm> for CcSpec {
    fn from(base: CcAlgorithm) -> Self {
        CcSpec {
            base,
            layers: Vec::new(),
            tuning: BaseTuning::default(),
            fse: None,
        }
    }
}

impl CcSpec {
    /// `self` with `layer` added outermost.
    pub fn with_layer(mut self, layer: LayerSpec) -> Self {
        self.layers.push(layer);
        self
    }

    /// `self` with `layer` placed among the present layers where `order` puts its
    /// kind (after any layer of the same kind already there).
    pub fn with_layer_in(mut self, layer: LayerSpec, order: &LayerOrder) -> Self {
        let p = order.position(layer.kind());
        let at = self
            .layers
            .iter()
            .position(|l| order.position(l.kind()) > p)
            .unwrap_or(self.layers.len());
        self.layers.insert(at, layer);
        self
    }

    /// The label the built controller reports: "cubic", "cubic+dc", "lia+lisa", ...
    pub fn name(&self) -> String {
        let mut s = self.base.name().to_string();
        if self.base == CcAlgorithm::Lp
            && self.tuning.lp == super::lp_corrected::LpVariant::Corrected
        {
            s.push_str("-corrected");
        }
        if self.base.coupling().is_some() && self.tuning.coupled.lisa {
            s.push_str("+lisa");
        }
        for l in &self.layers {
            s.push('+');
            s.push_str(l.tag());
        }
        if self.fse.is_some() {
            s.push('+');
            s.push_str(super::fse::tcp::TAG);
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

/// What a factory gets besides the spec: the connection's seed, the path the
/// controller will run on (its flow and group in the host), and the host's state, to
/// read or to prepare a group for the new flow.
#[derive(Debug)]
pub struct CcContext<'a> {
    /// The connection's seed (from the endpoint's RNG): the only source of randomness
    /// a controller may use.
    pub seed: u64,
    pub path: &'a PathInfo,
    pub host: &'a mut HostCc,
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
        ctx.host.count_built();
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
        if let Some(fse) = &spec.fse {
            cc = Box::new(super::fse::tcp::FseLayer::new(cc, fse.clone()));
        }
        cc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(host: &mut HostCc) -> PathInfo {
        let any = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
        let (flow, group) = host.join(any, any, None);
        PathInfo {
            local: any,
            remote: any,
            mss: 1448,
            initial_cwnd: 10,
            initial_rto: brisk_time::Duration::from_secs(1),
            now: brisk_time::Instant::ZERO,
            flow,
            group,
        }
    }

    #[test]
    fn names_compose_from_the_spec_and_match_the_built_label() {
        let mut host = HostCc::default();
        let p = path(&mut host);
        let mut build = |spec: &CcSpec| {
            let ctx = CcContext {
                seed: 7,
                path: &p,
                host: &mut host,
            };
            StandardCcFactory.build(spec, ctx).label()
        };
        for base in [CcAlgorithm::Reno, CcAlgorithm::Cubic] {
            let plain = CcSpec::from(base);
            assert_eq!(plain.name(), base.name());
            assert_eq!(build(&plain), plain.name());
            let dc = plain.with_layer(LayerSpec::DelayCorrelation(DelayCorrConfig::default()));
            assert_eq!(dc.name(), format!("{}+dc", base.name()));
            assert_eq!(build(&dc), dc.name());
            assert!(dc.delay_correlation().is_some());
            let cwv = dc.with_layer(LayerSpec::NewCwv(NewCwvConfig::default()));
            assert_eq!(cwv.name(), format!("{}+dc+cwv", base.name()));
            assert_eq!(build(&cwv), cwv.name());
            assert!(cwv.new_cwv().is_some() && cwv.delay_correlation().is_some());
        }
        assert_eq!(host.controllers_built(), 6);
    }

    #[test]
    fn layer_order_is_data_and_defaults_to_dc_cwv_abe() {
        let dc = LayerSpec::DelayCorrelation(DelayCorrConfig::default());
        let cwv = LayerSpec::NewCwv(NewCwvConfig::default());
        let abe = LayerSpec::Abe(AbeConfig::default());
        let build = |order: &LayerOrder, added: &[&LayerSpec]| {
            let mut s = CcSpec::from(CcAlgorithm::Cubic);
            for l in added {
                s = s.with_layer_in((*l).clone(), order);
            }
            s.name()
        };
        let default = LayerOrder::default();
        // Whatever order the layers are added in, the default order gives today's
        // composition, which `with_layer` in scenario order also gives.
        assert_eq!(build(&default, &[&abe, &dc, &cwv]), "cubic+dc+cwv+abe");
        assert_eq!(build(&default, &[&dc, &cwv, &abe]), "cubic+dc+cwv+abe");
        let plain = CcSpec::from(CcAlgorithm::Cubic)
            .with_layer(dc.clone())
            .with_layer(cwv.clone())
            .with_layer(abe.clone());
        assert_eq!(plain.name(), "cubic+dc+cwv+abe");
        let inner_abe = LayerOrder::new(&[LayerKind::Abe, LayerKind::DelayCorrelation]).unwrap();
        assert_eq!(
            inner_abe.kinds(),
            &[
                LayerKind::Abe,
                LayerKind::DelayCorrelation,
                LayerKind::NewCwv
            ]
        );
        assert_eq!(build(&inner_abe, &[&dc, &cwv, &abe]), "cubic+abe+dc+cwv");
        assert_eq!(build(&inner_abe, &[&cwv]), "cubic+cwv");
        let e = LayerOrder::new(&[LayerKind::NewCwv, LayerKind::NewCwv]).unwrap_err();
        assert!(
            e.to_string().contains("\"cwv\" is listed more than once"),
            "{e}"
        );
        for k in LayerKind::ALL {
            assert_eq!(LayerKind::from_tag(k.tag()), Some(k));
        }
        assert_eq!(LayerKind::from_tag("bbr"), None);
    }
}
