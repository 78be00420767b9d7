//! The congestion controllers brisk's comparisons cover, in one list (issue 35).
//!
//! [`CONTROLLERS`] is the one place: `brisk repro cc-map` (every controller on
//! Pantheon's map), the flent tests' `--cc all`, `brisk bench sim`'s line per
//! controller and `brisk bench ns3-cc`'s table all read it. A controller enters
//! every one of them by one entry here: its `cc = "..."` name, a label, the
//! `[flow.tcp]` lines it needs (ECN for DCTCP) and ns-3's model of it, if ns-3 has one.
//!
//! The list names every controller issue 35 asks for, built or not: an entry whose
//! name the scenario parser does not know yet ([`Controller::algorithm`] is `None`)
//! is left out of the runs and shown as "not built here yet" where a table lists
//! controllers, so a controller merged later appears without touching the
//! experiments. Order: the order reports list them (the controllers brisk had first,
//! then issue 35's in its order).

use brisk_tcp::cc::CcAlgorithm;
use serde::Deserialize;

/// One controller of the comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Controller {
    /// As reports show it.
    pub label: &'static str,
    /// The scenario's `cc = "..."` name.
    pub cc: &'static str,
    /// Extra `[flow.tcp]` lines the controller needs (newline-terminated), e.g. ECN.
    pub tcp: &'static str,
    /// ns-3.44's model of it (`ns3::Tcp...` TypeId), if ns-3 has one.
    pub ns3: Option<&'static str>,
}

impl Controller {
    const fn new(label: &'static str, cc: &'static str, ns3: Option<&'static str>) -> Self {
        Controller {
            label,
            cc,
            tcp: "",
            ns3,
        }
    }

    /// brisk's controller of this name, or `None` when this build does not have it
    /// ("not built here yet").
    pub fn algorithm(&self) -> Option<CcAlgorithm> {
        use serde::de::value::{Error, StrDeserializer};
        CcAlgorithm::deserialize(StrDeserializer::<Error>::new(self.cc)).ok()
    }

    /// Whether it needs ECN (its `tcp` lines turn it on).
    pub fn ecn(&self) -> bool {
        self.tcp.contains("ecn = true")
    }
}

/// Every controller of the comparisons; see the module comment. Add a controller by
/// appending one entry.
pub const CONTROLLERS: &[Controller] = &[
    Controller::new("Reno", "reno", Some("ns3::TcpLinuxReno")),
    Controller::new("CUBIC", "cubic", Some("ns3::TcpCubic")),
    Controller::new("CDG", "cdg", None),
    Controller {
        tcp: "ecn = true\n",
        ..Controller::new("DCTCP", "dctcp", Some("ns3::TcpDctcp"))
    },
    Controller::new("LEDBAT", "ledbat", Some("ns3::TcpLedbat")),
    Controller::new("BBR", "bbr", Some("ns3::TcpBbr")),
    Controller::new("BBRv3", "bbr3", None),
    Controller::new("Copa", "copa", None),
    Controller::new("Vegas", "vegas", Some("ns3::TcpVegas")),
    Controller::new("Westwood+", "westwood", Some("ns3::TcpWestwoodPlus")),
    Controller::new("Hybla", "hybla", Some("ns3::TcpHybla")),
    Controller::new("Illinois", "illinois", Some("ns3::TcpIllinois")),
    Controller::new("HTCP", "htcp", Some("ns3::TcpHtcp")),
    Controller::new("BIC", "bic", Some("ns3::TcpBic")),
    Controller::new("HighSpeed", "highspeed", Some("ns3::TcpHighSpeed")),
    Controller::new("Scalable", "scalable", Some("ns3::TcpScalable")),
    Controller::new("Veno", "veno", Some("ns3::TcpVeno")),
    Controller::new("YeAH", "yeah", Some("ns3::TcpYeah")),
    Controller::new("LP", "lp", Some("ns3::TcpLp")),
];

/// ns-3 models compared with a brisk controller besides the entry's own `ns3`:
/// (brisk `cc` name, ns-3 TypeId). ns-3.44 has two Renos: `TcpLinuxReno` (the
/// entry's model, Linux's `tcp_reno_cong_avoid` with its `snd_cwnd_cnt` counter) and
/// `TcpNewReno` (RFC 5681's per-ACK increase of MSS²/cwnd, ns-3's default model);
/// brisk's `reno` is set beside both, so `brisk bench ns3-cc` covers all 17 of ns-3's
/// models that brisk has a controller for.
pub const NS3_ALSO: &[(&str, &str)] = &[("reno", "ns3::TcpNewReno")];

/// The controllers this build has, with their algorithm, in list order.
pub fn built() -> impl Iterator<Item = (&'static Controller, CcAlgorithm)> {
    CONTROLLERS
        .iter()
        .filter_map(|c| c.algorithm().map(|a| (c, a)))
}

/// The entry of `cc` (the scenario name), if listed.
pub fn by_name(cc: &str) -> Option<&'static Controller> {
    CONTROLLERS.iter().find(|c| c.cc == cc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_original_six_are_built() {
        for (i, c) in CONTROLLERS.iter().enumerate() {
            assert!(
                CONTROLLERS[..i]
                    .iter()
                    .all(|d| d.cc != c.cc && d.label != c.label),
                "{} listed twice",
                c.cc
            );
        }
        // Every controller issue 35 names is in this tree now.
        let names: Vec<&str> = built().map(|(c, _)| c.cc).collect();
        for c in CONTROLLERS {
            assert!(names.contains(&c.cc), "{} is in this build", c.cc);
        }
        // A built entry's name is the controller's own name.
        for (c, a) in built() {
            assert_eq!(a.name(), c.cc);
        }
        assert!(by_name("dctcp").is_some_and(|c| c.ecn()));
        assert!(by_name("no-such-cc").is_none());
    }

    #[test]
    fn every_base_controller_brisk_has_is_listed() {
        // A controller added to `CcAlgorithm::ALL` without an entry here would be
        // missing from every comparison.
        for a in CcAlgorithm::ALL {
            assert!(
                by_name(a.name()).is_some(),
                "{} not in CONTROLLERS",
                a.name()
            );
        }
    }
}
