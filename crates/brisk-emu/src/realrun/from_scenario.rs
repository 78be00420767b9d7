//! A scenario (brisk-scenario's vocabulary, validated there) as a real run: per-flow
//! stack, rtt, start and app; the scenario's `[bottleneck]`/`[reverse]` become the one
//! shared emulated bottleneck. What real runs cannot do (yet) is refused by field,
//! with the same `file: field: message` form as every scenario error.

use brisk_scenario::{AppSpec, IpVersion, Scenario, ScenarioError, Stack, TcpKnobs};
use brisk_time::Duration;

use super::{FlowStack, LinuxKnobs, RealApp, RealFlow, RealRun};
use crate::emu::dumbbell::MAX_FLOWS;
use crate::emu::path::EmuConfig;

impl LinuxKnobs {
    /// The kernel settings a Linux flow's `[flow.tcp]` asks for (see `linux_knobs`
    /// for where each goes). A knob Linux cannot take per flow is `Err((key, why))`:
    /// the knob table's Linux column (`TcpKnobs::linux_refusal`).
    pub fn from_knobs(t: &TcpKnobs) -> Result<LinuxKnobs, (&'static str, &'static str)> {
        if let Some(refused) = t.linux_refusal() {
            return Err(refused);
        }
        Ok(LinuxKnobs {
            ecn: t.ecn_switch(),
            sack: t.sack,
            timestamps: t.timestamps,
            window_scaling: t.window_scaling,
            rack: t.rack,
            tlp: t.tlp,
            max_retries: t.max_retries,
            initial_cwnd: t.initial_cwnd,
            min_rto: t.min_rto.map(|d| d.0),
            mss: t.mss,
            nagle: t.nagle,
            send_buffer: t.send_buffer.map(|s| s.0),
            recv_buffer: t.recv_buffer.map(|s| s.0),
            user_timeout: t.user_timeout.map(|d| d.0),
            // The kernel's IP_TOS is set after the handshake: the data carries it, the SYN
            // and the receiver's ACKs stay DSCP 0 (brisk marks every packet it sends).
            dscp: t.dscp,
        })
    }
}

/// `sc` (loaded from `file`, which labels errors) as a real run; `seed` overrides
/// the scenario's.
pub fn real_run(sc: &Scenario, file: &str, seed: Option<u64>) -> Result<RealRun, ScenarioError> {
    let err = |field: String, message: String| ScenarioError {
        file: file.to_string(),
        field,
        message,
    };
    let mut flows = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        if f.ip.unwrap_or(sc.ip) == IpVersion::V6 {
            let field = if f.ip.is_some() {
                format!("flow[{i}].ip")
            } else {
                "ip".into()
            };
            return Err(err(field, "real runs use IPv4 only (yet): the dumbbell's devices and multiplexer are IPv4; the brisk lab and its interop tests run over IPv6 (docs/emulator.md)".into()));
        }
        let app = real_app(&f.app).map_err(|(k, m)| err(format!("flow[{i}].{k}"), m))?;
        let (stack, cc) = match f.stack {
            Stack::Brisk => (FlowStack::Brisk, f.cc.name().to_string()),
            Stack::Linux => (FlowStack::Linux, f.kernel_cc().to_string()),
        };
        let linux = match stack {
            FlowStack::Linux => LinuxKnobs::from_knobs(&f.tcp).map_err(|(knob, why)| {
                err(
                    format!("flow[{i}].tcp.{knob}"),
                    format!("not available for stack = \"linux\": {why}"),
                )
            })?,
            // The receiver is Linux for brisk flows too: their receive buffer is its
            // SO_RCVBUF, as the simulated brisk receiver's is its `recv_buffer`.
            FlowStack::Brisk => LinuxKnobs {
                recv_buffer: f.tcp.recv_buffer.map(|s| s.0),
                ..LinuxKnobs::default()
            },
        };
        let tcp = f.tcp.to_config(f.cc);
        for _ in 0..f.count {
            flows.push(RealFlow {
                stack,
                cc: cc.clone(),
                linux: linux.clone(),
                tcp: tcp.clone(),
                start: f.start.0,
                rtt: f.rtt.0,
                app: app.clone(),
            });
        }
    }
    if flows.len() > MAX_FLOWS {
        return Err(err(
            "flow".into(),
            format!(
                "real runs take at most {MAX_FLOWS} flows (counting `count`), not {}",
                flows.len()
            ),
        ));
    }
    let seed = seed.unwrap_or(sc.seed);
    Ok(RealRun {
        name: sc.name.clone(),
        seed,
        duration: sc.duration.0,
        path: EmuConfig {
            rtt: None,
            bottleneck: sc.bottleneck.clone(),
            reverse: sc.reverse.clone(),
            seed,
        },
        flows,
        sample_interval: sc.sample_interval(),
        pcap_dir: None,
        link_log_dir: None,
    })
}

/// The real runs' app for a flow's `app`, or `(field, why not)`.
fn real_app(app: &AppSpec) -> Result<RealApp, (&'static str, String)> {
    let kind = |k: &str| {
        Err((
            "app",
            format!("real runs support kind = \"bulk\" and \"records\", not \"{k}\" (yet)"),
        ))
    };
    match app {
        AppSpec::Bulk {
            bytes,
            write_size: None,
        } => Ok(RealApp::Bulk {
            bytes: bytes.map(|b| b.0),
        }),
        AppSpec::Records {
            size,
            interval,
            jitter,
            jitter_sd: None,
            count,
            layers: None,
        } => Ok(RealApp::Records {
            size: size.0,
            interval: interval.0,
            jitter: jitter.map_or(Duration::ZERO, |j| j.0),
            count: *count,
        }),
        AppSpec::Bulk { .. } => Err((
            "app.write_size",
            "real runs write as much as the socket takes (a write size is simulator-only, yet)"
                .into(),
        )),
        AppSpec::Records {
            layers: Some(_), ..
        } => Err((
            "app.layers",
            "real runs do not run the layered source (yet)".into(),
        )),
        AppSpec::Records { .. } => Err((
            "app.jitter_sd",
            "real runs support only uniform `jitter` (yet)".into(),
        )),
        AppSpec::RequestResponse { .. } => kind("request_response"),
        AppSpec::Web { .. } => kind("web"),
        AppSpec::Datagrams { .. } => kind("datagrams"),
        AppSpec::Page { .. } => kind("page"),
        AppSpec::Udp { .. } => kind("udp"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every knob the table marks `kernel` reaches `LinuxKnobs` (so the Linux column
    /// and this mapping cannot drift apart).
    #[test]
    fn every_kernel_knob_reaches_the_linux_settings() {
        let base = "name = \"k\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nstack = \"linux\"\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n[flow.tcp]\n";
        for key in TcpKnobs::KERNEL_KEYS {
            let value = match *key {
                "mss" => "1200",
                "initial_cwnd" | "max_retries" | "dscp" => "4",
                "recv_buffer" | "send_buffer" => "\"64KiB\"",
                "min_rto" | "user_timeout" => "\"50ms\"",
                _ => "false",
            };
            let sc = Scenario::from_toml_str(&format!("{base}{key} = {value}\n")).unwrap();
            let k = LinuxKnobs::from_knobs(&sc.flows[0].tcp).unwrap();
            assert_ne!(k, LinuxKnobs::default(), "{key} does not reach LinuxKnobs");
        }
    }

    /// brisk-only knobs on a Linux flow are refused with the knob's name and a reason,
    /// not silently dropped; switched off, the on/off ones are accepted. (`new_cwv_nvp`
    /// and `layer_order` need a brisk layer switched on, which is refused first.)
    #[test]
    fn brisk_only_knobs_on_a_linux_flow_are_refused_by_name() {
        let base = "name = \"k\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nstack = \"linux\"\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n[flow.tcp]\n";
        for (line, key) in [
            ("unordered_send = true", "unordered_send"),
            ("rc3 = true", "rc3"),
            ("new_cwv = true", "new_cwv"),
            ("new_cwv = true\nnew_cwv_nvp = \"4s\"", "new_cwv"),
        ] {
            let sc = Scenario::from_toml_str(&format!("{base}{line}\n")).unwrap();
            let (named, why) = LinuxKnobs::from_knobs(&sc.flows[0].tcp).unwrap_err();
            assert_eq!(named, key, "{line}");
            assert!(!why.is_empty());
        }
        for line in ["unordered_send = false", "rc3 = false", "new_cwv = false"] {
            let sc = Scenario::from_toml_str(&format!("{base}{line}\n")).unwrap();
            assert!(LinuxKnobs::from_knobs(&sc.flows[0].tcp).is_ok(), "{line}");
        }
    }
}
