//! RFC 3168 ECN on the wire, read back from the emulator's two pcaps (one per side):
//! for one flow, whether the handshake negotiated ECN (SYN with ECE + CWR, SYN-ACK
//! with ECE), new data went out ECT(0) and retransmissions and pure ACKs Not-ECT, the
//! bottleneck's CE marks reached the receiver, the receiver echoed ECE, the sender
//! answered with CWR only after an ECE, and how far apart the CWRs (one per
//! reduction) were. Used by the real-packet ECN test and the `real-ecn` experiment.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use brisk_wire::tcp::Flags;
use brisk_wire::{parse_tcp_packet, Ecn};
use serde::Serialize;

use crate::tools::pcapread;

/// One captured TCP segment.
#[derive(Clone, Debug)]
pub struct Seg {
    pub ts_ns: u64,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
    pub flags: Flags,
    pub ecn: Ecn,
    pub seq: u32,
    pub len: u32,
}

/// The TCP segments of a pcap, and how many packets failed to parse or verify
/// (brisk-wire checks the IPv4 header checksum, which CE marking rewrites).
pub fn segments(path: &Path) -> std::io::Result<(Vec<Seg>, usize)> {
    let recs = pcapread::read(path)?;
    let bad = pcapread::check_well_formed(&recs).len();
    let segs = recs
        .iter()
        .filter_map(|r| {
            let (ip, tcp) = parse_tcp_packet(&r.data).ok()?;
            let (IpAddr::V4(src), IpAddr::V4(dst)) = (ip.src(), ip.dst()) else {
                return None;
            };
            Some(Seg {
                ts_ns: r.ts_ns,
                src,
                dst,
                sport: tcp.src_port,
                dport: tcp.dst_port,
                flags: tcp.flags,
                ecn: ip.ecn(),
                seq: tcp.seq.0,
                len: tcp.payload.len() as u32,
            })
        })
        .collect();
    Ok((segs, bad))
}

/// What one flow's captures show.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EcnAudit {
    /// The sender's SYN: ECE + CWR, no ACK, Not-ECT.
    pub syn_ok: bool,
    /// The receiver's SYN-ACK: ECE without CWR.
    pub synack_ok: bool,
    pub new_data: u64,
    pub new_data_ect0: u64,
    pub retrans: u64,
    pub retrans_ect: u64,
    /// The receiver's pure ACKs (no data, SYN or FIN).
    pub pure_acks: u64,
    pub pure_acks_ect: u64,
    /// Data segments that reached the receiver marked CE.
    pub ce_at_receiver: u64,
    /// ACKs with ECE that reached the sender.
    pub ece_acks: u64,
    /// Data segments with CWR (each one reduction).
    pub cwr: u64,
    /// CWRs sent with no ECE received since the previous CWR (should be none).
    pub cwr_unprompted: u64,
    /// Smallest gap between successive CWRs, ms (infinite with fewer than two).
    pub min_cwr_gap_ms: f64,
}

impl EcnAudit {
    /// The flow whose data goes from `sender` to port `rport` (one such flow per
    /// sender address in the captures), from the capture on
    /// the sender's side (`at_sender`: what it sent, the ACKs it got) and on the
    /// receiver's side (`at_receiver`: what crossed the path, the receiver's ACKs).
    pub fn judge(at_sender: &[Seg], at_receiver: &[Seg], sender: Ipv4Addr, rport: u16) -> Self {
        let fwd = |s: &Seg| s.src == sender && s.dport == rport;
        let rev = |s: &Seg| s.dst == sender && s.sport == rport;
        let mut d = EcnAudit {
            min_cwr_gap_ms: f64::INFINITY,
            ..EcnAudit::default()
        };
        let (mut high, mut isn, mut ece_since, mut last_cwr) = (0u64, None, false, None::<u64>);
        for s in at_sender {
            if fwd(s) {
                if s.flags.syn() {
                    d.syn_ok = !s.flags.ack()
                        && s.flags.contains(Flags::ECE.union(Flags::CWR))
                        && s.ecn == Ecn::NotEct;
                    isn = Some(s.seq);
                    continue;
                }
                if s.len == 0 {
                    continue;
                }
                let rel = u64::from(s.seq.wrapping_sub(isn.unwrap_or(0)));
                let end = rel + u64::from(s.len);
                if end > high {
                    d.new_data += 1;
                    d.new_data_ect0 += u64::from(s.ecn == Ecn::Ect0);
                    high = end;
                } else {
                    d.retrans += 1;
                    d.retrans_ect += u64::from(s.ecn != Ecn::NotEct);
                }
                if s.flags.contains(Flags::CWR) {
                    d.cwr += 1;
                    d.cwr_unprompted += u64::from(!ece_since);
                    ece_since = false;
                    if let Some(prev) = last_cwr {
                        let gap = s.ts_ns.saturating_sub(prev) as f64 / 1e6;
                        d.min_cwr_gap_ms = d.min_cwr_gap_ms.min(gap);
                    }
                    last_cwr = Some(s.ts_ns);
                }
            } else if rev(s) {
                if s.flags.syn() {
                    d.synack_ok = s.flags.ack()
                        && s.flags.contains(Flags::ECE)
                        && !s.flags.contains(Flags::CWR);
                } else if s.flags.contains(Flags::ECE) {
                    d.ece_acks += 1;
                    ece_since = true;
                }
            }
        }
        for s in at_receiver {
            if fwd(s) && s.len > 0 {
                d.ce_at_receiver += u64::from(s.ecn == Ecn::Ce);
            } else if rev(s) && s.len == 0 && !s.flags.syn() && !s.flags.fin() {
                d.pure_acks += 1;
                d.pure_acks_ect += u64::from(s.ecn != Ecn::NotEct);
            }
        }
        d
    }

    /// Everything RFC 3168 asks that this flow did not show, given its base RTT:
    /// empty when ECN worked end to end (and CWRs were at least 0.9 RTT apart).
    pub fn problems(&self, base_rtt_ms: f64) -> Vec<String> {
        let mut p = Vec::new();
        let mut need = |ok: bool, what: String| {
            if !ok {
                p.push(what);
            }
        };
        need(self.syn_ok, "SYN without ECE + CWR (or ECT on it)".into());
        need(self.synack_ok, "SYN-ACK without ECE".into());
        need(self.new_data > 0, "no data".into());
        need(
            self.new_data_ect0 == self.new_data,
            format!(
                "{} of {} new data segments not ECT(0)",
                self.new_data - self.new_data_ect0,
                self.new_data
            ),
        );
        need(
            self.retrans_ect == 0,
            format!("{} retransmissions ECT", self.retrans_ect),
        );
        need(
            self.pure_acks_ect == 0,
            format!("{} pure ACKs ECT", self.pure_acks_ect),
        );
        need(
            self.ce_at_receiver > 0,
            "no CE mark reached the receiver".into(),
        );
        need(self.ece_acks > 0, "no ECE echoed".into());
        need(self.cwr > 0, "ECE never answered by CWR".into());
        need(
            self.cwr_unprompted == 0,
            format!("{} CWRs without a preceding ECE", self.cwr_unprompted),
        );
        need(
            self.min_cwr_gap_ms >= 0.9 * base_rtt_ms,
            format!(
                "two CWRs {:.1} ms apart (base RTT {base_rtt_ms} ms)",
                self.min_cwr_gap_ms
            ),
        );
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
    const R: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

    fn seg(ms: u64, fwd: bool, flags: Flags, ecn: Ecn, seq: u32, len: u32) -> Seg {
        let (src, dst, sport, dport) = if fwd {
            (S, R, 40000, 80)
        } else {
            (R, S, 80, 40000)
        };
        Seg {
            ts_ns: ms * 1_000_000,
            src,
            dst,
            sport,
            dport,
            flags,
            ecn,
            seq,
            len,
        }
    }

    /// A handshake, data with a CE mark, ECE, CWR; then a retransmission and ACKs.
    fn trace(cwr_gap_ms: u64, retrans_ecn: Ecn) -> (Vec<Seg>, Vec<Seg>) {
        let a = Flags::ACK;
        let mut at_s = vec![
            seg(
                0,
                true,
                Flags::SYN.union(Flags::ECE).union(Flags::CWR),
                Ecn::NotEct,
                100,
                0,
            ),
            seg(
                20,
                false,
                Flags::SYN.union(a).union(Flags::ECE),
                Ecn::NotEct,
                7,
                0,
            ),
            seg(20, true, a, Ecn::Ect0, 101, 1000),
            seg(40, false, a.union(Flags::ECE), Ecn::NotEct, 8, 0),
            seg(40, true, a.union(Flags::CWR), Ecn::Ect0, 1101, 1000),
            seg(
                40 + cwr_gap_ms / 2,
                false,
                a.union(Flags::ECE),
                Ecn::NotEct,
                8,
                0,
            ),
            seg(
                40 + cwr_gap_ms,
                true,
                a.union(Flags::CWR),
                Ecn::Ect0,
                2101,
                1000,
            ),
            seg(200, true, a, retrans_ecn, 1101, 1000),
        ];
        at_s.sort_by_key(|s| s.ts_ns);
        let mut ce = at_s[2].clone();
        ce.ecn = Ecn::Ce;
        let at_r = vec![ce, seg(31, false, a, Ecn::NotEct, 8, 0)];
        (at_s, at_r)
    }

    #[test]
    fn a_clean_exchange_has_no_problems_and_faults_are_named() {
        let (s, r) = trace(30, Ecn::NotEct);
        let d = EcnAudit::judge(&s, &r, S, 80);
        assert!(d.problems(20.0).is_empty(), "{:?} {d:?}", d.problems(20.0));
        assert_eq!(
            (d.new_data, d.retrans, d.cwr, d.ce_at_receiver),
            (3, 1, 2, 1)
        );
        assert_eq!((d.ece_acks, d.pure_acks), (2, 1));

        let (s, r) = trace(10, Ecn::Ect0);
        let p = EcnAudit::judge(&s, &r, S, 80).problems(20.0);
        assert!(p.iter().any(|x| x.contains("retransmissions ECT")), "{p:?}");
        assert!(
            p.iter().any(|x| x.contains("two CWRs 10.0 ms apart")),
            "{p:?}"
        );

        // A CWR with no ECE before it.
        let (mut s, r) = trace(30, Ecn::NotEct);
        s.retain(|x| !(x.src == R && x.flags.contains(Flags::ECE) && !x.flags.syn()));
        let p = EcnAudit::judge(&s, &r, S, 80).problems(20.0);
        assert!(
            p.iter().any(|x| x.contains("without a preceding ECE")),
            "{p:?}"
        );
    }
}
