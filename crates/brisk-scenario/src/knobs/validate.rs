//! Range checks of the TCP knobs that serde cannot express: each names the field
//! and gives the range. The one place these checks live (dumbbell flows, network
//! workloads and their classes all call it).

use super::*;
use brisk_tcp::cc::CcAlgorithm;
use brisk_time::Duration;

/// Range checks of one TCP knob set with controller `cc`. Returns (field relative to
/// the knob set's owner, e.g. `tcp.mss`; message).
pub fn validate_tcp(t: &TcpKnobs, cc: CcAlgorithm) -> Result<(), (String, String)> {
    let p = |k: &str| k.to_string();
    if t.mss.is_some_and(|m| !(88..=9000).contains(&m)) {
        return Err((p("tcp.mss"), "must be between 88 and 9000".into()));
    }
    if t.rto_restart.is_some_and(|n| n == 0 || n > 1000) {
        return Err((
            p("tcp.rto_restart"),
            "rrthresh must be between 1 and 1000 segments (RFC 7765 uses 4)".into(),
        ));
    }
    if t.initial_cwnd.is_some_and(|c| c == 0 || c > 1000) {
        return Err((p("tcp.initial_cwnd"), "must be between 1 and 1000".into()));
    }
    if !t.delay_correlation_on()
        && (t.dc_window.is_some() || t.dc_threshold.is_some() || t.dc_passive.is_some())
    {
        return Err((
            p("tcp.delay_correlation"),
            "dc_window, dc_threshold and dc_passive need delay_correlation = true".into(),
        ));
    }
    if let Some(Err(e)) = t.delay_correlation_config().map(|c| c.validate()) {
        let k = match e {
            brisk_tcp::cc::delay_corr::DelayCorrConfigError::Window(_) => "tcp.dc_window",
            brisk_tcp::cc::delay_corr::DelayCorrConfigError::Threshold(_) => "tcp.dc_threshold",
            _ => "tcp.delay_correlation",
        };
        return Err((p(k), e.to_string()));
    }
    validate_rdb(t).map_err(|(k, m)| (p(&format!("tcp.{k}")), m))?;
    if let Some(m) = &t.mptcp {
        // An `index` is checked against the host where the simulator builds it.
        m.validate()?;
    }
    if t.lisa == Some(true) && cc.coupling().is_none() {
        return Err((
            p("tcp.lisa"),
            format!(
                "needs a coupled cc (lia, olia or balia), not \"{}\"",
                cc.name()
            ),
        ));
    }
    if let Some(Err((k, m))) = t.fse_config().map(|c| c.validate()) {
        return Err((p(&format!("tcp.fse.{k}")), m));
    }
    if let Some(Err((k, m))) = t.fastopen_config() {
        return Err((p(&format!("tcp.fastopen.{k}")), m));
    }
    if let Some(Err(m)) = t.rc3_config() {
        return Err((p("tcp.rc3.levels"), m));
    }
    if let Some(d) = t.dscp {
        if d > 63 {
            return Err((
                p("tcp.dscp"),
                format!("must be between 0 and 63 (six bits), got {d}"),
            ));
        }
        if t.rc3_config().is_some() && d != 0 {
            return Err((
                p("tcp.dscp"),
                "cannot be set with rc3, which sets each packet's DSCP to its priority".into(),
            ));
        }
    }
    let rack_on = t.rack.unwrap_or(t.linux_profile.is_none());
    if rack_on && t.fack == Some(true) {
        return Err((
            p("tcp.fack"),
            "needs rack = false (RACK replaced FACK, Linux 4.15)".into(),
        ));
    }
    if rack_on && t.early_retransmit.is_some_and(|e| e != ErKnob::Off) {
        return Err((
            p("tcp.early_retransmit"),
            "needs rack = false (RACK subsumes early retransmit, RFC 8985 §9.3)".into(),
        ));
    }
    if t.cwnd_limited_slack.is_some_and(|n| n > 1000) {
        return Err((
            p("tcp.cwnd_limited_slack"),
            "must be between 0 and 1000 segments (Linux before 3.16 used 3)".into(),
        ));
    }
    validate_layer_order(t).map_err(|m| (p("tcp.layer_order"), m))?;
    if t.new_cwv != Some(true) && t.new_cwv_nvp.is_some() {
        return Err((p("tcp.new_cwv_nvp"), "needs new_cwv = true".into()));
    }
    if t.new_cwv_nvp.is_some_and(|d| d.0.is_zero()) {
        return Err((p("tcp.new_cwv_nvp"), "must be > 0".into()));
    }
    for (k, v) in [("beta_ecn", t.beta_ecn), ("beta_loss", t.beta_loss)] {
        if t.abe != Some(true) && v.is_some() {
            return Err((p(&format!("tcp.{k}")), "needs abe = true".into()));
        }
        if v.is_some_and(|b| !(b.is_finite() && b > 0.0 && b <= 1.0)) {
            return Err((
                p(&format!("tcp.{k}")),
                "must be in (0, 1] (RFC 8511 recommends 0.8 for beta_ecn; the ABE paper 0.85 for CUBIC)"
                    .into(),
            ));
        }
    }
    for (key, base, set) in [
        ("cdg", CcAlgorithm::Cdg, t.cdg.is_some()),
        ("dctcp", CcAlgorithm::Dctcp, t.dctcp.is_some()),
    ] {
        if set && cc != base {
            return Err((p(&format!("tcp.{key}")), format!("needs cc = \"{key}\"")));
        }
    }
    let tuning = t.base_tuning();
    tuning
        .cdg
        .validate()
        .map_err(|(k, m)| (p(&format!("tcp.cdg.{k}")), m))?;
    tuning
        .dctcp
        .validate()
        .map_err(|(k, m)| (p(&format!("tcp.dctcp.{k}")), m))?;
    if cc == CcAlgorithm::Bbr || cc == CcAlgorithm::Bbr3 {
        let layer = [
            ("tcp.delay_correlation", t.delay_correlation_on()),
            ("tcp.new_cwv", t.new_cwv == Some(true)),
            ("tcp.abe", t.abe == Some(true)),
            ("tcp.fse", t.fse_config().is_some()),
        ]
        .into_iter()
        .find(|(_, on)| *on);
        if let Some((k, _)) = layer {
            return Err((
                p(k),
                format!(
                    "cannot wrap cc = \"{}\": BBR sets cwnd itself on every ACK (Linux \
                     cong_control), and this layer acts through cong_avoid and ssthresh, \
                     which BBR does not use",
                    cc.name()
                ),
            ));
        }
    }
    if t.copa.is_some() && cc != CcAlgorithm::Copa {
        return Err((p("tcp.copa"), "needs cc = \"copa\"".into()));
    }
    tuning
        .copa
        .validate()
        .map_err(|(k, m)| (p(&format!("tcp.copa.{k}")), m))?;
    if cc == CcAlgorithm::Copa {
        let layer = [
            ("tcp.delay_correlation", t.delay_correlation_on()),
            ("tcp.new_cwv", t.new_cwv == Some(true)),
            ("tcp.abe", t.abe == Some(true)),
            ("tcp.fse", t.fse_config().is_some()),
        ]
        .into_iter()
        .find(|(_, on)| *on);
        if let Some((k, _)) = layer {
            return Err((
                p(k),
                "cannot wrap cc = \"copa\": Copa sets cwnd itself on every ACK toward its \
                 delay target (cong_control), and this layer acts through cong_avoid and \
                 ssthresh, which Copa does not use"
                    .into(),
            ));
        }
    }
    validate_linux_modules(t, cc).map_err(|(k, m)| (p(&k), m))?;
    if cc == CcAlgorithm::Dctcp && t.ecn_switch() != Some(true) {
        return Err((
            p("cc"),
            "dctcp needs tcp.ecn = true: DCTCP reacts to the fraction of CE marks (RFC 8257)"
                .into(),
        ));
    }
    if t.abe == Some(true) && t.ecn_switch() != Some(true) {
        return Err((
            p("tcp.abe"),
            "needs ecn = true: ABE only changes the response to ECN marks".into(),
        ));
    }
    for (k, v) in [
        ("recv_buffer", t.recv_buffer),
        ("send_buffer", t.send_buffer),
    ] {
        if v.is_some_and(|s| s.0 < 1024 || s.0 > 1 << 30) {
            return Err((
                p(&format!("tcp.{k}")),
                "must be between 1KiB and 1GiB".into(),
            ));
        }
    }
    Ok(())
}

/// RDB's knobs: each needs `rdb`, and each limit has a meaning (a zero never does).
fn validate_rdb(t: &TcpKnobs) -> Result<(), (&'static str, String)> {
    let on = TcpKnobs::switch(&t.rdb) == Some(true);
    let knobs = [
        ("rdb_lim", t.rdb_lim.is_some()),
        ("rdb_spifl", t.rdb_spifl.is_some()),
        ("rdb_itt_min", t.rdb_itt_min.is_some()),
        ("rdb_max_bytes", t.rdb_max_bytes.is_some()),
        ("rdb_loss_inference", t.rdb_loss_inference.is_some()),
    ];
    if let Some((k, _)) = knobs.iter().find(|(_, set)| *set && !on) {
        return Err((k, "needs rdb = true".into()));
    }
    if let Some(RdbLim::Count(n)) = t.rdb_lim {
        if n == 0 || u64::from(brisk_tcp::rdb::MAX_BUNDLED_SEGMENTS) < n {
            return Err((
                "rdb_lim",
                format!(
                    "must be between 1 and {} earlier segments, or \"unlimited\"",
                    brisk_tcp::rdb::MAX_BUNDLED_SEGMENTS
                ),
            ));
        }
    }
    if t.rdb_spifl.is_some_and(|n| n == 0 || n > 100_000) {
        return Err((
            "rdb_spifl",
            "must be between 1 and 100000 packets in flight (the paper uses 3 and 7)".into(),
        ));
    }
    if t.rdb_spifl.is_some() && t.rdb_itt_min.is_some() {
        return Err((
            "rdb_itt_min",
            "is DPIFL's and rdb_spifl chooses SPIFL; set one of them".into(),
        ));
    }
    if t.rdb_itt_min
        .is_some_and(|d| d.0.is_zero() || d.0 > Duration::from_secs(10))
    {
        return Err((
            "rdb_itt_min",
            "must be greater than 0 and at most 10s (the paper uses 10ms and 20ms)".into(),
        ));
    }
    if t.rdb_max_bytes.is_some_and(|n| n == 0 || n > 65_535) {
        return Err(("rdb_max_bytes", "must be between 1 and 65535 bytes".into()));
    }
    Ok(())
}

/// `layer_order`: each name once, and each layer it names switched on.
fn validate_layer_order(t: &TcpKnobs) -> Result<(), String> {
    let Some(order) = &t.layer_order else {
        return Ok(());
    };
    for (k, l) in order.iter().enumerate() {
        if order[..k].contains(l) {
            return Err(format!(
                "names \"{}\" twice; each layer stacks once",
                l.key()
            ));
        }
        if !t.layer_names().contains(l) {
            return Err(format!(
                "names \"{}\", which is not switched on ({} = true)",
                l.key(),
                l.key()
            ));
        }
    }
    Ok(())
}

/// `[flow.tcp.vegas]` … `[flow.tcp.bic]` and `[flow.tcp.lp]`: each only with its controller, each key in
/// its range (the `validate` of the module's config names the key).
fn validate_linux_modules(t: &TcpKnobs, cc: CcAlgorithm) -> Result<(), (String, String)> {
    for (key, base, set) in [
        ("vegas", CcAlgorithm::Vegas, t.vegas.is_some()),
        ("hybla", CcAlgorithm::Hybla, t.hybla.is_some()),
        ("lp", CcAlgorithm::Lp, t.lp.is_some()),
        ("illinois", CcAlgorithm::Illinois, t.illinois.is_some()),
        ("htcp", CcAlgorithm::Htcp, t.htcp.is_some()),
        ("bic", CcAlgorithm::Bic, t.bic.is_some()),
    ] {
        if set && cc != base {
            return Err((format!("tcp.{key}"), format!("needs cc = \"{key}\"")));
        }
    }
    if let Some(r) = t.hybla.as_ref().and_then(|h| h.rtt0) {
        let whole_ms = r.0.as_nanos() % 1_000_000 == 0;
        if !whole_ms || !(Duration::from_millis(1)..=Duration::from_secs(10)).contains(&r.0) {
            return Err((
                "tcp.hybla.rtt0".into(),
                "must be a whole number of milliseconds from 1ms to 10s (Linux default 25ms)"
                    .into(),
            ));
        }
    }
    let b = t.base_tuning();
    fn at(m: &'static str) -> impl Fn((&'static str, String)) -> (String, String) {
        move |(k, e)| (format!("tcp.{m}.{k}"), e)
    }
    b.vegas.validate().map_err(at("vegas"))?;
    b.hybla.validate().map_err(at("hybla"))?;
    b.illinois.validate().map_err(at("illinois"))?;
    b.bic.validate().map_err(at("bic"))?;
    Ok(())
}
