//! From knobs to `brisk_tcp::Config`: the plain fields come from the table
//! (`apply_fields`); here are the mechanisms, which read several knobs each, and the
//! controller's layers, stacked in the order the knobs give.

use super::*;
use brisk_tcp::cc::{CcAlgorithm, LayerKind, LayerOrder};

impl TcpKnobs {
    pub(super) fn switch<T>(k: &Option<SwitchOrTable<T>>) -> Option<bool> {
        match k {
            Some(SwitchOrTable::Switch(b)) => Some(*b),
            // Normalised away; a table alone means "on".
            Some(SwitchOrTable::Table(_)) => Some(true),
            None => None,
        }
    }

    /// `[flow.tcp.ecn]` with `enabled` becomes the switch (a table alone means on).
    pub(super) fn normalize_ecn(&mut self) {
        if let Some(SwitchOrTable::Table(t)) = self.ecn.clone() {
            self.ecn = t
                .enabled
                .map(SwitchOrTable::Switch)
                .or(Some(SwitchOrTable::Switch(true)));
        }
    }

    /// The ECN switch, if set (`ecn = true` or a `[flow.tcp.ecn]` table).
    pub fn ecn_switch(&self) -> Option<bool> {
        match &self.ecn {
            Some(SwitchOrTable::Table(t)) => Some(t.enabled.unwrap_or(true)),
            other => Self::switch(other),
        }
    }

    /// Whether delay correlation is switched on.
    pub fn delay_correlation_on(&self) -> bool {
        Self::switch(&self.delay_correlation) == Some(true)
    }

    /// The delay-correlation configuration these knobs ask for, if it is on.
    pub fn delay_correlation_config(&self) -> Option<brisk_tcp::cc::delay_corr::DelayCorrConfig> {
        if !self.delay_correlation_on() {
            return None;
        }
        let mut dc = brisk_tcp::cc::delay_corr::DelayCorrConfig::default();
        if let Some(w) = self.dc_window {
            dc.window = w;
        }
        if let Some(t) = self.dc_threshold {
            dc.threshold = t;
        }
        dc.passive = self.dc_passive == Some(true);
        Some(dc)
    }

    /// CDG's and DCTCP's parameters: Linux's defaults overridden by the tables.
    pub fn base_tuning(&self) -> brisk_tcp::cc::BaseTuning {
        let mut b = brisk_tcp::cc::BaseTuning::default();
        if let Some(t) = &self.cdg {
            let c = &mut b.cdg;
            c.window = t.window.unwrap_or(c.window);
            c.backoff_beta = t.backoff_beta.unwrap_or(c.backoff_beta);
            c.backoff_factor = t.backoff_factor.unwrap_or(c.backoff_factor);
            c.hystart_detect = t.hystart_detect.unwrap_or(c.hystart_detect);
            c.use_ineff = t.use_ineff.unwrap_or(c.use_ineff);
            c.use_shadow = t.use_shadow.unwrap_or(c.use_shadow);
            c.use_tolerance = t.use_tolerance.unwrap_or(c.use_tolerance);
        }
        if let Some(t) = &self.dctcp {
            let d = &mut b.dctcp;
            d.shift_g = t.shift_g.unwrap_or(d.shift_g);
            d.alpha_on_init = t.alpha_on_init.unwrap_or(d.alpha_on_init);
        }
        b.coupled.lisa = self.lisa == Some(true);
        if let Some(t) = &self.copa {
            let c = &mut b.copa;
            c.delta = t.delta.unwrap_or(c.delta);
            c.mode_switch = t.mode_switch.unwrap_or(c.mode_switch);
        }
        self.linux_module_tuning(&mut b);
        b
    }

    /// The Linux ports' module parameters (`[flow.tcp.vegas]` … `[flow.tcp.bic]`)
    /// over Linux's defaults.
    fn linux_module_tuning(&self, b: &mut brisk_tcp::cc::BaseTuning) {
        if let Some(t) = &self.vegas {
            let v = &mut b.vegas;
            v.alpha = t.alpha.unwrap_or(v.alpha);
            v.beta = t.beta.unwrap_or(v.beta);
            v.gamma = t.gamma.unwrap_or(v.gamma);
        }
        if let Some(r) = self.hybla.as_ref().and_then(|t| t.rtt0) {
            b.hybla.rtt0_ms = u32::try_from(r.0.as_millis()).unwrap_or(u32::MAX);
        }
        if let Some(v) = self.lp.as_ref().and_then(|t| t.variant) {
            b.lp = match v {
                LpVariantKnob::Linux => brisk_tcp::cc::lp_corrected::LpVariant::Linux,
                LpVariantKnob::Corrected => brisk_tcp::cc::lp_corrected::LpVariant::Corrected,
            };
        }
        if let Some(t) = &self.illinois {
            let i = &mut b.illinois;
            i.win_thresh = t.win_thresh.unwrap_or(i.win_thresh);
            i.theta = t.theta.unwrap_or(i.theta);
        }
        if let Some(t) = &self.htcp {
            let h = &mut b.htcp;
            h.use_rtt_scaling = t.use_rtt_scaling.unwrap_or(h.use_rtt_scaling);
            h.use_bandwidth_switch = t.use_bandwidth_switch.unwrap_or(h.use_bandwidth_switch);
        }
        if let Some(t) = &self.bic {
            let c = &mut b.bic;
            c.fast_convergence = t.fast_convergence.unwrap_or(c.fast_convergence);
            c.max_increment = t.max_increment.unwrap_or(c.max_increment);
            c.low_window = t.low_window.unwrap_or(c.low_window);
            c.beta = t.beta.unwrap_or(c.beta);
            c.initial_ssthresh = t.initial_ssthresh.unwrap_or(c.initial_ssthresh);
            c.smooth_part = t.smooth_part.unwrap_or(c.smooth_part);
        }
    }

    /// The TCP configuration for this flow: Linux defaults overridden by the knobs
    /// (call after [`TcpKnobs::normalize`], as scenario loading does).
    pub fn to_config(&self, cc: CcAlgorithm) -> brisk_tcp::Config {
        let mut c = brisk_tcp::Config::default();
        c.congestion.controller = cc.into();
        c.congestion.controller.tuning = self.base_tuning();
        if self.linux_profile == Some(LinuxProfile::Linux3_17) {
            // The tail-loss paper's sender (spec §1.0): no RACK (3.17 predates it),
            // delayed early retransmit with TLP (tcp_early_retrans = 3), the 2013
            // draft's PTO. Explicit knobs (applied next) override these.
            c.recovery.rack = false;
            c.recovery.early_retransmit = brisk_tcp::config::EarlyRetransmit::Delayed;
            c.recovery.tlp_pto = brisk_tcp::recovery::tlp::PtoFormula::Draft01;
            c.recovery.fack = true;
        }
        self.apply_fields(&mut c);
        if let Some(on) = Self::switch(&self.ecn) {
            c.ecn.enabled = on;
        }
        c.transmit.rdb = self.rdb_config();
        c.transmit.rc3 = self.rc3_config().and_then(Result::ok);
        c.mptcp = self.mptcp_config().map(Box::new);
        c.congestion.controller.fse = self.fse_config();
        c.fastopen = self.fastopen_config().and_then(Result::ok).map(Box::new);
        let order = self.layer_order();
        for layer in self.layers() {
            c.congestion.controller = c.congestion.controller.with_layer_in(layer, &order);
        }
        c
    }

    /// The order the layers stack in: `layer_order`'s list, then the layers it
    /// leaves out in the default order (brisk-tcp's `LayerOrder`). A list naming a
    /// layer twice is a validation error; here it falls back to the default.
    pub fn layer_order(&self) -> LayerOrder {
        LayerOrder::new(self.layer_order.as_deref().unwrap_or(&[])).unwrap_or_default()
    }

    /// The layers switched on, in stacking order (innermost first).
    pub fn layer_names(&self) -> Vec<LayerKind> {
        self.layer_order()
            .kinds()
            .iter()
            .copied()
            .filter(|l| self.layer_on(*l))
            .collect()
    }

    fn layer_on(&self, l: LayerKind) -> bool {
        match l {
            LayerKind::DelayCorrelation => self.delay_correlation_on(),
            LayerKind::NewCwv => self.new_cwv == Some(true),
            LayerKind::Abe => self.abe == Some(true),
        }
    }

    /// The controller layers these knobs ask for, innermost first.
    pub fn layers(&self) -> Vec<brisk_tcp::cc::LayerSpec> {
        use brisk_tcp::cc::LayerSpec;
        self.layer_names()
            .into_iter()
            .filter_map(|l| match l {
                LayerKind::DelayCorrelation => self
                    .delay_correlation_config()
                    .map(LayerSpec::DelayCorrelation),
                LayerKind::NewCwv => self.new_cwv_config().map(LayerSpec::NewCwv),
                LayerKind::Abe => Some(LayerSpec::Abe(brisk_tcp::cc::abe::AbeConfig {
                    beta_ecn: self.beta_ecn,
                    beta_loss: self.beta_loss,
                })),
            })
            .collect()
    }

    /// The RC3 configuration these knobs ask for, if it is on; `Err` names what is
    /// wrong with the levels (validation reports it).
    pub fn rc3_config(&self) -> Option<Result<brisk_tcp::rc3::Rc3Config, String>> {
        use brisk_tcp::rc3::{LevelRule, Rc3Config, Rc3Levels};
        match &self.rc3 {
            None | Some(SwitchOrTable::Switch(false)) => None,
            Some(SwitchOrTable::Switch(true)) => Some(Ok(Rc3Config::default())),
            Some(SwitchOrTable::Table(t)) => {
                let rule = match t.rule {
                    Some(Rc3RuleKnob::Linux) => LevelRule::LinuxCumulative,
                    _ => LevelRule::Design,
                };
                let sizes = t.levels.clone().unwrap_or_else(|| vec![40, 400, 4000]);
                Some(
                    Rc3Levels::new(sizes, rule)
                        .map(|levels| Rc3Config { levels })
                        .map_err(|e| e.to_string()),
                )
            }
        }
    }

    /// The RDB configuration these knobs ask for, if it is on (after validation, so
    /// the limits are in range).
    pub fn rdb_config(&self) -> Option<brisk_tcp::rdb::RdbConfig> {
        if Self::switch(&self.rdb) != Some(true) {
            return None;
        }
        let mut cfg = brisk_tcp::rdb::RdbConfig::default();
        match self.rdb_lim {
            Some(RdbLim::Count(n)) => cfg.lim = Some(n.min(1024) as u32),
            Some(RdbLim::Unlimited) => cfg.lim = None,
            None => {}
        }
        if let Some(n) = self.rdb_spifl {
            cfg.thin = brisk_tcp::rdb::ThinTest::Spifl(n);
        } else if let Some(d) = self.rdb_itt_min {
            cfg.thin = brisk_tcp::rdb::ThinTest::Dpifl { itt_min: d.0 };
        }
        cfg.max_bytes = self.rdb_max_bytes;
        if let Some(l) = self.rdb_loss_inference {
            cfg.loss_inference = match l {
                RdbLossInference::Ack => brisk_tcp::rdb::LossInference::Ack,
                RdbLossInference::Dsack => brisk_tcp::rdb::LossInference::Dsack,
                RdbLossInference::Off => brisk_tcp::rdb::LossInference::Off,
            };
        }
        Some(cfg)
    }

    /// The FSE settings these knobs ask for, if `fse` is set.
    pub fn fse_config(&self) -> Option<brisk_tcp::cc::fse::tcp::FseConfig> {
        use brisk_tcp::cc::fse::tcp::{FseConfig, Increase};
        use brisk_tcp::cc::fse::Algorithm;
        let t = self.fse.as_ref()?;
        let d = FseConfig::default();
        Some(FseConfig {
            group: t.group.clone(),
            priority: t.priority.unwrap_or(d.priority),
            algorithm: match t.algorithm {
                Some(FseAlgorithmKnob::Active) => Algorithm::Active,
                Some(FseAlgorithmKnob::Passive) => Algorithm::Passive,
                Some(FseAlgorithmKnob::Conservative) | None => d.algorithm,
            },
            increase: match t.increase {
                Some(FseIncreaseKnob::Sum) => Increase::Sum,
                Some(FseIncreaseKnob::OneFlow) | None => d.increase,
            },
            max_flows: t.max_flows.map_or(d.max_flows, |n| n as usize),
            sbd: t.sbd.unwrap_or(false),
        })
    }

    /// The Fast Open settings these knobs ask for, if `fastopen` is set; `Err`
    /// names the field and the range (`validate_tcp` reports it).
    pub fn fastopen_config(&self) -> Option<Result<brisk_tcp::tfo::TfoConfig, (String, String)>> {
        let t = self.fastopen.as_ref()?;
        let d = brisk_tcp::tfo::TfoConfig::default();
        let queue = t.queue.unwrap_or(16);
        if queue > 65_535 {
            return Some(Err((
                "queue".into(),
                format!("must be between 0 and 65535 pending requests, got {queue}"),
            )));
        }
        let entries = t.cache_entries.unwrap_or(d.cache_entries as u32);
        if !(1..=1_000_000).contains(&entries) {
            return Some(Err((
                "cache_entries".into(),
                format!("must be between 1 and 1000000 servers, got {entries}"),
            )));
        }
        let keys = match &t.key {
            None => None,
            Some(k) => match parse_key(k) {
                Some(key) => Some((key, None)),
                None => {
                    return Some(Err((
                        "key".into(),
                        format!("must be 32 hexadecimal digits (a 128-bit AES key), got \"{k}\""),
                    )))
                }
            },
        };
        Some(Ok(brisk_tcp::tfo::TfoConfig {
            client: t.client.unwrap_or(true),
            server: t.server.unwrap_or(true),
            max_pending: queue,
            keys,
            cache_entries: entries as usize,
            negative_cache: t.negative_cache.unwrap_or(d.negative_cache),
            ..d
        }))
    }

    /// The new-CWV configuration these knobs ask for, if it is on.
    pub fn new_cwv_config(&self) -> Option<brisk_tcp::cc::new_cwv::NewCwvConfig> {
        if self.new_cwv != Some(true) {
            return None;
        }
        let mut cfg = brisk_tcp::cc::new_cwv::NewCwvConfig::default();
        if let Some(nvp) = self.new_cwv_nvp {
            cfg.nvp = nvp.0;
        }
        Some(cfg)
    }
}

/// A 128-bit key written as 32 hexadecimal digits.
fn parse_key(s: &str) -> Option<[u8; 16]> {
    if s.len() != 32 || !s.is_ascii() {
        return None;
    }
    let mut key = [0u8; 16];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}
