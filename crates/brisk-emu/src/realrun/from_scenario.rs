//! A scenario (brisk-scenario's vocabulary, validated there) as a real run: per-flow
//! stack, rtt, start and app; the scenario's `[bottleneck]`/`[reverse]` become the one
//! shared emulated bottleneck. What real runs cannot do (yet) is refused by field,
//! with the same `file: field: message` form as every scenario error.

use brisk_scenario::{AppSpec, IpVersion, Scenario, ScenarioError, Stack, TcpKnobs};
use brisk_time::Duration;

use super::{FlowStack, LinuxKnobs, RealApp, RealFlow, RealRun};
use crate::emu::dumbbell::MAX_FLOWS;
use crate::emu::path::EmuConfig;
use crate::stack::mptcp_kernel::KernelMptcp;

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
            // Filled by `with_mptcp`, whose errors are not static.
            mptcp: None,
        })
    }

    /// `self` with the flow's `[flow.tcp.mptcp]` (both stacks: the receiver is Linux
    /// for brisk flows too). Errors are `(key under tcp., why)`.
    fn with_mptcp(mut self, t: &TcpKnobs, stack: Stack) -> Result<LinuxKnobs, (String, String)> {
        let Some(m) = &t.mptcp else {
            return Ok(self);
        };
        if stack == Stack::Linux {
            if let Some((k, why)) = m.linux_refusal() {
                return Err((
                    k.into(),
                    format!("not available for stack = \"linux\": {why}"),
                ));
            }
        } else if !m.endpoints.is_empty() {
            return Err((
                "mptcp.endpoint".into(),
                "brisk's stack in a real run has one address (198.18.0.1), so no endpoints (yet)"
                    .into(),
            ));
        }
        let c = m
            .config_for(&[])
            .map_err(|(k, why)| (k.trim_start_matches("tcp.").to_string(), why))?;
        let k = KernelMptcp::from_config(&c).map_err(|why| ("mptcp".to_string(), why))?;
        for (n, e) in k.endpoints.iter().enumerate() {
            let [a, b, c3, d] = e.addr.octets();
            if (a, b, c3) != (198, 18, 0) || d < 3 || d == 255 {
                return Err((
                    format!("mptcp.endpoint[{n}].addr"),
                    format!("{}: a Linux sender's extra address is 198.18.0.3 to 198.18.0.254 (198.18.0.2 is its own, 198.18.0.1 brisk's)", e.addr),
                ));
            }
        }
        if let Some(b) = m.recv_buffer {
            if t.recv_buffer.is_some_and(|r| r.0 != b.0) {
                return Err((
                    "mptcp.recv_buffer".into(),
                    "the Linux receiver has one buffer (SO_RCVBUF) for both; set recv_buffer or mptcp.recv_buffer, or the same value".into(),
                ));
            }
            self.recv_buffer = Some(b.0);
        }
        self.mptcp = Some(k);
        Ok(self)
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
        let linux = linux
            .with_mptcp(&f.tcp, f.stack)
            .map_err(|(k, m)| err(format!("flow[{i}].tcp.{k}"), m))?;
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
            pause: None,
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
        AppSpec::Bulk { pause: Some(_), .. } => Err((
            "app.pause",
            "real runs do not pause a bulk sender (simulator-only, yet)".into(),
        )),
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

    /// What a Linux flow cannot take from `[flow.tcp.mptcp]` is refused by name before
    /// the run; what it can reaches the kernel settings, and a brisk flow's receiver
    /// gets them too (its listener is MPTCP).
    #[test]
    fn mptcp_tables_on_real_runs_are_taken_or_refused_by_name() {
        let sc = |stack: &str, table: &str| {
            Scenario::from_toml_str(&format!(
                "name = \"k\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nstack = \"{stack}\"\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp.mptcp]\n{table}"
            ))
            .unwrap()
        };
        for (stack, table, field, words) in [
            (
                "linux",
                "scheduler = \"roundrobin\"",
                "flow[0].tcp.mptcp.scheduler",
                "available_schedulers",
            ),
            (
                "linux",
                "path_manager = \"ndiffports\"\nndiffports = 2",
                "flow[0].tcp.mptcp.path_manager",
                "ndiffports",
            ),
            (
                "linux",
                "recv_wscale = 7",
                "flow[0].tcp.mptcp.recv_wscale",
                "SO_RCVBUF",
            ),
            (
                "linux",
                "add_addr_timeout = \"1500ms\"",
                "flow[0].tcp.mptcp",
                "whole seconds",
            ),
            (
                "linux",
                "[[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.2\"",
                "flow[0].tcp.mptcp.endpoint[0].addr",
                "198.18.0.3",
            ),
            (
                "linux",
                "[[flow.tcp.mptcp.endpoint]]\naddr = \"fd00::3\"",
                "flow[0].tcp.mptcp",
                "IPv4",
            ),
            (
                "brisk",
                "[[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.3\"",
                "flow[0].tcp.mptcp.endpoint",
                "one address",
            ),
        ] {
            let e = real_run(&sc(stack, table), "k.toml", None).unwrap_err();
            assert_eq!(e.field, field, "{table}: {e}");
            assert!(e.message.contains(words), "{table}: {e}");
        }
        let r = real_run(
            &sc("linux", "subflows = 3\nadd_addr_accepted = 1\nchecksum = true\nrecv_buffer = \"1MiB\"\n[[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.3\"\nsignal = true\nport = 7000"),
            "k.toml",
            None,
        )
        .unwrap();
        let k = r.flows[0].linux.mptcp.as_ref().unwrap();
        assert_eq!((k.subflows, k.add_addr_accepted, k.checksum), (3, 1, true));
        assert_eq!(k.endpoints[0].port, 7000);
        assert!(k.endpoints[0].signal && !k.endpoints[0].subflow);
        assert_eq!(r.flows[0].linux.recv_buffer, Some(1 << 20));
        let r = real_run(&sc("brisk", "subflows = 1"), "k.toml", None).unwrap();
        assert_eq!(r.flows[0].linux.mptcp.as_ref().unwrap().subflows, 1);
        assert!(r.flows[0].tcp.mptcp.is_some());
    }
}
