//! `[flow.tcp.mptcp]`: a flow's MPTCP (RFC 8684) knobs, onto
//! `brisk_tcp::mptcp::MptcpConfig` (`Config::mptcp`). The table's presence asks for
//! MPTCP; every key defaults to `MptcpConfig::default()`, which is this machine's Linux
//! 6.18 (`sysctl net.mptcp`, `ip mptcp limits show` in a fresh namespace). The range
//! checks are `MptcpConfig::validate`'s own, so the messages are the ones the
//! connection would give; here each gets the key it came from.
//!
//! It is a table of `[flow.tcp]` (like `[flow.tcp.cdg]`), not a sibling `[flow.mptcp]`:
//! MPTCP is a TCP extension (option kind 30) set per connection in `brisk_tcp::Config`,
//! and every place a flow's `Config` is made (`TcpKnobs::to_config`: the simulator's
//! dumbbell, network workloads, real runs, the experiments) then carries it without a
//! second call that one of them could forget. The coupled controller stays the flow's
//! `cc` (`lia`, `olia`, `balia`, with `+lisa`).

use super::TcpKnobs;
use crate::units::{Dur, Size};
use brisk_tcp::mptcp::pm::{Addr, LocalEndpoint, PmConfigError, PmMode, ADDR_MAX};
use brisk_tcp::mptcp::recv::RecvConfigError;
use brisk_tcp::mptcp::sched::SchedKind;
use brisk_tcp::mptcp::{MptcpConfig, MptcpConfigError, MAX_SUBFLOWS};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Most addresses a host has ([`brisk_tcp::MAX_ADDRESSES`], Linux's
/// `MPTCP_PM_ADDR_MAX`): an endpoint's `index` is below it.
const MAX_HOST_ADDRESSES: usize = brisk_tcp::MAX_ADDRESSES;

/// `[flow.tcp.mptcp]`; see the module doc. Absent keys take Linux's defaults.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MptcpKnobs {
    /// `ip mptcp limits set subflows N`: additional subflows, 0..=8 (default 2).
    pub subflows: Option<u8>,
    /// `ip mptcp limits set add_addr_accepted N`: ADD_ADDRs acted on, 0..=8 (default 0).
    pub add_addr_accepted: Option<u8>,
    /// "fullmesh" (default: a subflow per address pair) or "ndiffports" (`ndiffports`
    /// subflows over the initial pair; brisk only, upstream Linux has no such manager).
    pub path_manager: Option<PathManagerKnob>,
    /// Subflows in all for `path_manager = "ndiffports"`, 1..=9; needs it.
    pub ndiffports: Option<u8>,
    /// minrtt, linger (default: Linux's), roundrobin, redundant, sttf.
    pub scheduler: Option<String>,
    /// Ask for DSS checksums (`net.mptcp.checksum_enabled`, default false).
    pub checksum: Option<bool>,
    /// Accept joins to the initial address and port
    /// (`net.mptcp.allow_join_initial_addr_port`, default true).
    pub allow_join_initial_addr_port: Option<bool>,
    /// The data-level receive buffer, 1 byte to 65535 << recv_wscale (at most 1 GiB;
    /// default 4 MiB).
    pub recv_buffer: Option<Size>,
    /// Window scale the subflows advertise the data-level window with, 0..=14
    /// (default 7).
    pub recv_wscale: Option<u8>,
    /// Out-of-order ranges the data-level buffer holds, 1..=65536 (default 1024).
    pub recv_max_ranges: Option<usize>,
    /// `net.mptcp.add_addr_timeout` (default 120s; "0s" never re-sends).
    pub add_addr_timeout: Option<Dur>,
    /// Local endpoints, as `ip mptcp endpoint add` (at most 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "endpoint")]
    pub endpoints: Vec<EndpointKnob>,
}

/// `path_manager`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PathManagerKnob {
    Fullmesh,
    Ndiffports,
}

/// `[[flow.tcp.mptcp.endpoint]]`: one local address to open subflows from and/or
/// announce, as `ip mptcp endpoint add ADDR [id ID] [port P] signal|subflow [backup]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndpointKnob {
    /// The address (IPv4 or IPv6 literal). Exactly one of `addr` and `index`.
    pub addr: Option<IpAddr>,
    /// The host's address by index (0 is its first, the initial subflow's), for
    /// multi-homed hosts. Exactly one of `addr` and `index`.
    pub index: Option<u8>,
    /// MPTCP address id, 1..=255, unique (default: the endpoint's position + 1).
    pub id: Option<u8>,
    /// Port to announce / join on (default 0: the connection's).
    pub port: Option<u16>,
    /// Announce it with ADD_ADDR (default false).
    pub signal: Option<bool>,
    /// Open subflows from it (default true unless `signal` is set, as Linux needs one
    /// of the two).
    pub subflow: Option<bool>,
    /// Subflows from it are backups (default false).
    pub backup: Option<bool>,
}

impl EndpointKnob {
    fn id(&self, k: usize) -> u8 {
        self.id.unwrap_or((k + 1).min(255) as u8)
    }
    fn signal(&self) -> bool {
        self.signal == Some(true)
    }
    fn subflow(&self) -> bool {
        self.subflow.unwrap_or(!self.signal())
    }
}

/// A field of `[flow.tcp.mptcp]` and its message, relative to the flow (`tcp.mptcp.x`).
pub type KnobError = (String, String);

fn key(k: &str) -> String {
    format!("tcp.mptcp.{k}")
}

impl MptcpKnobs {
    /// The scheduler asked for (default Linux's, `linger`).
    pub fn scheduler_kind(&self) -> Result<SchedKind, KnobError> {
        match &self.scheduler {
            None => Ok(MptcpConfig::default().scheduler),
            Some(s) => s
                .parse::<SchedKind>()
                .map_err(|e| (key("scheduler"), e.to_string())),
        }
    }

    /// The configuration these knobs ask for, with the endpoints given by index taken
    /// from `host_addrs` (the sender's addresses, index 0 first). Errors name the key.
    pub fn config_for(&self, host_addrs: &[IpAddr]) -> Result<MptcpConfig, KnobError> {
        self.build(Some(host_addrs), true)
    }

    /// As [`MptcpKnobs::config_for`] for one host of a network whose hosts differ in
    /// address count (a workload runs one class's knobs on all of them, as one
    /// `ip mptcp endpoint` list would be given to hosts with and without a second
    /// interface): an `index` this host lacks is left out for it. The simulator checks
    /// that some host has each index ([`MptcpKnobs::max_index`]).
    pub fn config_for_host(&self, host_addrs: &[IpAddr]) -> Result<MptcpConfig, KnobError> {
        self.build(Some(host_addrs), false)
    }

    /// The largest endpoint `index` and the endpoint's position, if any endpoint has one.
    pub fn max_index(&self) -> Option<(usize, u8)> {
        self.endpoints
            .iter()
            .enumerate()
            .filter_map(|(k, e)| e.index.map(|i| (k, i)))
            .max_by_key(|&(_, i)| i)
    }

    /// Whether an endpoint names the host's address by `index` (then only the host
    /// that runs the flow can resolve it: [`MptcpKnobs::config_for`] with its list).
    pub fn has_index_endpoints(&self) -> bool {
        self.endpoints.iter().any(|e| e.index.is_some())
    }

    /// The checks that need no host: every key as [`MptcpKnobs::config_for`] checks
    /// it, an `index` only against the most addresses a host can have
    /// ([`MAX_HOST_ADDRESSES`]); which host has how many is checked where the
    /// simulator builds the host.
    pub fn validate(&self) -> Result<(), KnobError> {
        for (k, e) in self.endpoints.iter().enumerate() {
            if let Some(i) = e.index.filter(|&i| usize::from(i) >= MAX_HOST_ADDRESSES) {
                return Err((
                    key(&format!("endpoint[{k}].index")),
                    format!(
                        "a host has at most {MAX_HOST_ADDRESSES} addresses (indices 0..={}); got {i}",
                        MAX_HOST_ADDRESSES - 1
                    ),
                ));
            }
        }
        // Indices against stand-ins for a host with every address (TEST-NET-1, which
        // no scenario host has), so ids, flags and limits are checked with them.
        let stand_ins: Vec<IpAddr> = (1..=MAX_HOST_ADDRESSES as u8)
            .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, i)))
            .collect();
        self.build(Some(&stand_ins), true).map(|_| ())
    }

    /// `config_for`; with `host_addrs = None` (no host known) endpoints given by
    /// `index` are left out, the others keep their ids; so is an index beyond
    /// `host_addrs` unless `strict`.
    fn build(&self, host_addrs: Option<&[IpAddr]>, strict: bool) -> Result<MptcpConfig, KnobError> {
        let mut c = MptcpConfig::default();
        if let Some(s) = self.subflows {
            c.pm.limits.subflows = s;
        }
        if let Some(a) = self.add_addr_accepted {
            c.pm.limits.add_addr_accepted = a;
        }
        match (self.path_manager, self.ndiffports) {
            (Some(PathManagerKnob::Ndiffports), Some(n)) => c.pm.mode = PmMode::NDiffPorts { n },
            (Some(PathManagerKnob::Ndiffports), None) => {
                return Err((
                    key("ndiffports"),
                    format!("path_manager = \"ndiffports\" needs ndiffports = N, the subflows in all (1..={MAX_SUBFLOWS})"),
                ))
            }
            (_, Some(_)) => {
                return Err((
                    key("ndiffports"),
                    "needs path_manager = \"ndiffports\"".into(),
                ))
            }
            _ => {}
        }
        c.scheduler = self.scheduler_kind()?;
        if let Some(b) = self.checksum {
            c.checksum = b;
        }
        if let Some(b) = self.allow_join_initial_addr_port {
            c.allow_join_initial_addr_port = b;
        }
        if let Some(s) = self.recv_buffer {
            // Anything above u32 is out of range anyway; validate names it.
            c.recv.capacity = u32::try_from(s.0).unwrap_or(u32::MAX);
        }
        if let Some(w) = self.recv_wscale {
            c.recv.wscale = w;
        }
        if let Some(n) = self.recv_max_ranges {
            c.recv.max_ranges = n;
        }
        if let Some(d) = self.add_addr_timeout {
            c.pm.add_addr_timeout = d.0;
        }
        if self.endpoints.len() > ADDR_MAX {
            let e = MptcpConfigError::Pm(PmConfigError::Endpoints {
                got: self.endpoints.len(),
            });
            return Err((key("endpoint"), e.to_string()));
        }
        for (k, e) in self.endpoints.iter().enumerate() {
            let ek = |f: &str| key(&format!("endpoint[{k}].{f}"));
            let ip = match (e.addr, e.index, host_addrs) {
                (Some(a), None, _) => Some(a),
                (None, Some(_), None) => None,
                (None, Some(i), Some(addrs)) if !strict => addrs.get(usize::from(i)).copied(),
                (None, Some(i), Some(addrs)) => Some(*addrs.get(usize::from(i)).ok_or_else(|| {
                    (
                        ek("index"),
                        format!(
                            "the flow's sender has {} address(es) (indices 0..={}); index {i} names none",
                            addrs.len(),
                            addrs.len().saturating_sub(1)
                        ),
                    )
                })?),
                _ => return Err((ek("addr"), "give exactly one of addr and index".into())),
            };
            if e.id == Some(0) {
                return Err((
                    ek("id"),
                    "0 is the initial subflow's address; endpoint ids are 1..=255".into(),
                ));
            }
            if !e.signal() && !e.subflow() {
                return Err((
                    ek("subflow"),
                    "an endpoint needs signal or subflow (Linux refuses one with neither)".into(),
                ));
            }
            let Some(ip) = ip else {
                continue;
            };
            c.pm.endpoints.push(LocalEndpoint {
                addr: Addr {
                    id: e.id(k),
                    ip,
                    port: e.port.unwrap_or(0),
                },
                signal: e.signal(),
                subflow: e.subflow(),
                backup: e.backup == Some(true),
            });
        }
        c.validate().map_err(|e| (self.key_of(&e), e.to_string()))?;
        Ok(c)
    }

    /// The key an `MptcpConfig::validate` error came from.
    fn key_of(&self, e: &MptcpConfigError) -> String {
        match e {
            MptcpConfigError::Pm(PmConfigError::Limit { field, .. }) => key(field),
            MptcpConfigError::Pm(PmConfigError::NDiffPorts { .. }) => key("ndiffports"),
            MptcpConfigError::Pm(PmConfigError::Endpoints { .. }) => key("endpoint"),
            MptcpConfigError::Pm(PmConfigError::DuplicateId { id }) => {
                let k = (0..self.endpoints.len())
                    .filter(|&k| self.endpoints[k].id(k) == *id)
                    .nth(1)
                    .unwrap_or(0);
                key(&format!("endpoint[{k}].id"))
            }
            MptcpConfigError::Recv(RecvConfigError::Capacity { .. }) => key("recv_buffer"),
            MptcpConfigError::Recv(RecvConfigError::MaxRanges { .. }) => key("recv_max_ranges"),
            MptcpConfigError::Recv(RecvConfigError::Wscale { .. }) => key("recv_wscale"),
        }
    }

    /// The first knob set here that Linux cannot honour, with why: `(key under
    /// tcp.mptcp, reason)`. Linux 6.18's in-kernel path manager has no ndiffports, and
    /// its only scheduler is the default (`net.mptcp.available_schedulers = default`
    /// in a fresh namespace), which is brisk's `linger`.
    pub fn linux_refusal(&self) -> Option<(&'static str, &'static str)> {
        if self.path_manager == Some(PathManagerKnob::Ndiffports) {
            return Some((
                "mptcp.path_manager",
                "upstream Linux has no ndiffports path manager (the seed's was the out-of-tree v0.89 kernel)",
            ));
        }
        if self.scheduler_kind().is_ok_and(|s| s != SchedKind::Linger) {
            return Some((
                "mptcp.scheduler",
                "this kernel offers only its default scheduler (net.mptcp.available_schedulers = default), brisk's \"linger\"",
            ));
        }
        if self.recv_wscale.is_some() || self.recv_max_ranges.is_some() {
            return Some((
                "mptcp.recv_wscale",
                "the kernel sizes its MPTCP window itself; recv_buffer (SO_RCVBUF) is what a Linux flow takes",
            ));
        }
        if self.endpoints.iter().any(|e| e.index.is_some()) {
            return Some((
                "mptcp.endpoint",
                "a Linux flow's endpoints are addresses (addr), added to its namespace",
            ));
        }
        None
    }
}

impl TcpKnobs {
    /// The MPTCP configuration of a flow, `None` without `[flow.tcp.mptcp]`.
    /// Endpoints given by `index` are left out: the simulator resolves them against
    /// the host that runs the flow (`MptcpKnobs::config_for`). Knobs that fail
    /// validation give `None` here: scenario loading reports them first.
    pub fn mptcp_config(&self) -> Option<MptcpConfig> {
        let m = self.mptcp.as_ref()?;
        m.build(None, true).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(toml_text: &str) -> MptcpKnobs {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn empty_table_is_linux_defaults() {
        assert_eq!(knobs("").config_for(&[]).unwrap(), MptcpConfig::default());
    }

    #[test]
    fn every_key_reaches_the_config() {
        let k = knobs(
            "subflows = 4\nadd_addr_accepted = 3\npath_manager = \"ndiffports\"\nndiffports = 5\n\
             scheduler = \"sttf\"\nchecksum = true\nallow_join_initial_addr_port = false\n\
             recv_buffer = 1048576\nrecv_wscale = 5\nrecv_max_ranges = 64\nadd_addr_timeout = \"2s\"\n\
             [[endpoint]]\naddr = \"198.18.0.3\"\nsignal = true\nport = 7000\n\
             [[endpoint]]\nindex = 1\nid = 9\nbackup = true\n",
        );
        let host: [IpAddr; 2] = ["198.18.0.1".parse().unwrap(), "198.18.1.1".parse().unwrap()];
        let c = k.config_for(&host).unwrap();
        assert_eq!(c.pm.limits.subflows, 4);
        assert_eq!(c.pm.limits.add_addr_accepted, 3);
        assert_eq!(c.pm.mode, PmMode::NDiffPorts { n: 5 });
        assert_eq!(c.scheduler, SchedKind::Sttf);
        assert!(c.checksum && !c.allow_join_initial_addr_port);
        assert_eq!(
            (c.recv.capacity, c.recv.wscale, c.recv.max_ranges),
            (1 << 20, 5, 64)
        );
        assert_eq!(c.pm.add_addr_timeout, brisk_time::Duration::from_secs(2));
        let e0 = c.pm.endpoints[0];
        assert_eq!(
            (e0.addr.id, e0.addr.port, e0.signal, e0.subflow),
            (1, 7000, true, false)
        );
        let e1 = c.pm.endpoints[1];
        assert_eq!(e1.addr.ip, host[1]);
        assert_eq!((e1.addr.id, e1.subflow, e1.backup), (9, true, true));
    }

    #[test]
    fn bad_values_name_their_key_and_range() {
        for (text, field, words) in [
            ("subflows = 9", "tcp.mptcp.subflows", &["0..=8"][..]),
            (
                "add_addr_accepted = 200",
                "tcp.mptcp.add_addr_accepted",
                &["0..=8"],
            ),
            (
                "path_manager = \"ndiffports\"\nndiffports = 0",
                "tcp.mptcp.ndiffports",
                &["1..="],
            ),
            (
                "path_manager = \"ndiffports\"",
                "tcp.mptcp.ndiffports",
                &["needs ndiffports"],
            ),
            ("ndiffports = 3", "tcp.mptcp.ndiffports", &["path_manager"]),
            (
                "scheduler = \"fastest\"",
                "tcp.mptcp.scheduler",
                &["minrtt", "linger", "sttf"],
            ),
            ("recv_wscale = 15", "tcp.mptcp.recv_wscale", &["0..=14"]),
            ("recv_buffer = 0", "tcp.mptcp.recv_buffer", &["1..="]),
            (
                "recv_wscale = 0\nrecv_buffer = 70000",
                "tcp.mptcp.recv_buffer",
                &["65535"],
            ),
            (
                "recv_max_ranges = 0",
                "tcp.mptcp.recv_max_ranges",
                &["1..=65536"],
            ),
            (
                "[[endpoint]]\nsignal = true",
                "tcp.mptcp.endpoint[0].addr",
                &["addr and index"],
            ),
            (
                "[[endpoint]]\nindex = 1",
                "tcp.mptcp.endpoint[0].index",
                &["index 1"],
            ),
            (
                "[[endpoint]]\naddr = \"198.18.0.3\"\nid = 0",
                "tcp.mptcp.endpoint[0].id",
                &["1..=255"],
            ),
            (
                "[[endpoint]]\naddr = \"198.18.0.3\"\nsubflow = false",
                "tcp.mptcp.endpoint[0].subflow",
                &["signal or subflow"],
            ),
            (
                "[[endpoint]]\naddr = \"198.18.0.3\"\n[[endpoint]]\naddr = \"198.18.0.4\"\nid = 1",
                "tcp.mptcp.endpoint[1].id",
                &["twice"],
            ),
        ] {
            let (k, m) = knobs(text).config_for(&[]).unwrap_err();
            assert_eq!(k, field, "{text}: {m}");
            for w in words {
                assert!(m.contains(w), "{text}: {m} lacks {w}");
            }
        }
        let nine: String = (0..9)
            .map(|i| format!("[[endpoint]]\naddr = \"198.18.0.{}\"\n", i + 3))
            .collect();
        let (k, m) = knobs(&nine).config_for(&[]).unwrap_err();
        assert_eq!(k, "tcp.mptcp.endpoint");
        assert!(m.contains("at most 8"), "{m}");
    }

    #[test]
    fn an_index_is_checked_against_a_host_where_the_host_is_known() {
        // At load: only the most addresses a host can have.
        let k = knobs("[[endpoint]]\nindex = 3\n[[endpoint]]\naddr = \"198.18.0.3\"\n");
        k.validate().unwrap();
        let (f, m) = knobs("[[endpoint]]\nindex = 8\n").validate().unwrap_err();
        assert_eq!(f, "tcp.mptcp.endpoint[0].index");
        assert!(m.contains("0..=7") && m.contains("got 8"), "{m}");
        // Ids stay checked with index endpoints in the set.
        let (f, _) =
            knobs("[[endpoint]]\nindex = 1\nid = 4\n[[endpoint]]\naddr = \"198.18.0.3\"\nid = 4\n")
                .validate()
                .unwrap_err();
        assert_eq!(f, "tcp.mptcp.endpoint[1].id");
        // Without a host the index endpoint is left out and the others keep their ids.
        let t: TcpKnobs = toml::from_str(
            "[mptcp]\n[[mptcp.endpoint]]\nindex = 3\n[[mptcp.endpoint]]\naddr = \"198.18.0.3\"\n",
        )
        .unwrap();
        let c = t.mptcp_config().unwrap();
        assert_eq!(c.pm.endpoints.len(), 1);
        assert_eq!(c.pm.endpoints[0].addr.id, 2);
        // With the host, index 3 is its fourth address; a host with two has none.
        let host: Vec<IpAddr> = (1..=4)
            .map(|i| format!("198.18.{i}.1").parse().unwrap())
            .collect();
        let c = k.config_for(&host).unwrap();
        assert_eq!(c.pm.endpoints[0].addr.ip, host[3]);
        let (f, m) = k.config_for(&host[..2]).unwrap_err();
        assert_eq!(f, "tcp.mptcp.endpoint[0].index");
        assert!(m.contains("indices 0..=1"), "{m}");
    }

    #[test]
    fn linux_refuses_what_it_lacks_by_name() {
        for (text, named) in [
            ("scheduler = \"roundrobin\"", "mptcp.scheduler"),
            (
                "path_manager = \"ndiffports\"\nndiffports = 2",
                "mptcp.path_manager",
            ),
            ("recv_wscale = 7", "mptcp.recv_wscale"),
            ("[[endpoint]]\nindex = 1", "mptcp.endpoint"),
        ] {
            assert_eq!(
                knobs(text).linux_refusal().map(|r| r.0),
                Some(named),
                "{text}"
            );
        }
        for text in [
            "",
            "scheduler = \"linger\"\nsubflows = 3\nchecksum = true\nrecv_buffer = 65536",
            "[[endpoint]]\naddr = \"198.18.0.3\"",
        ] {
            assert_eq!(knobs(text).linux_refusal(), None, "{text}");
        }
    }
}
