//! SACK reneging (RFC 2018 §8): a receiver may discard data it has SACKed (brisk's
//! own does under memory pressure, `conn::recv::prune`). The sender must keep SACKed
//! data until it is cumulatively ACKed and retransmit it when the receiver reneges;
//! Linux detects it when the cumulative ACK stops at a SACKed segment
//! (`tcp_check_sack_reneging`) and clears the SACK marks on the timeout
//! (`tcp_timeout_mark_lost`).

use super::harness::*;
use super::transfer::pattern;
use brisk_time::Duration;
use brisk_wire::SeqNum;
use std::cell::Cell;
use std::rc::Rc;

/// The first data segment is held back while the rest of the flight is SACKed; the
/// receiver then prunes everything out of order; when the hole is filled, the
/// cumulative ACK stops at data the sender holds as SACKed. The transfer completes,
/// byte for byte.
#[test]
fn sender_retransmits_data_the_receiver_reneged_on() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let hole: Rc<Cell<Option<SeqNum>>> = Rc::new(Cell::new(None));
    let release = Rc::new(Cell::new(false));
    let (h2, r2) = (hole.clone(), release.clone());
    p.set_hook(move |seen| {
        if !seen.to_server || seen.len == 0 || r2.get() {
            return Action::Deliver;
        }
        let first = h2.get().unwrap_or(seen.seq);
        h2.set(Some(first));
        if seen.seq == first {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = pattern(60_000, 7);
    assert_eq!(p.client.conn_mut(c).unwrap().write(&data), data.len());
    p.advance(Duration::from_millis(150));
    let sacked = p.client.conn(c).unwrap().info().sacked;
    assert!(sacked > 0, "the flight after the hole is SACKed");
    let conn = p.server.conn_mut(s).unwrap();
    let held = conn.mem_usage().ooo;
    assert!(held > 0);
    let freed = conn.prune_ooo(usize::MAX);
    assert_eq!(freed, held);
    assert_eq!(conn.prune_stats().prunes, 1);
    release.set(true);
    // When the hole's retransmission arrives, and when the client next sends the data
    // after it (which the receiver no longer holds).
    let hole_seq = hole.get().unwrap();
    let revealed = Rc::new(Cell::new(None));
    let resent = Rc::new(Cell::new(None));
    let (rv, rs) = (revealed.clone(), resent.clone());
    p.set_hook(move |seen| {
        if seen.to_server && seen.len > 0 {
            if seen.seq == hole_seq && rv.get().is_none() {
                rv.set(Some(seen.at));
            } else if seen.seq != hole_seq && rv.get().is_some() && rs.get().is_none() {
                rs.set(Some(seen.at));
            }
        }
        Action::Deliver
    });
    let mut got = Vec::new();
    let done = p.run_until(Duration::from_secs(20), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == data.len()
    });
    assert!(
        done,
        "stalled after reneging: {} of {} bytes",
        got.len(),
        data.len()
    );
    assert!(got == data, "bytes differ");
    // The short reneging timeout (max(srtt/16, 10 ms)), not a full RTO (at least
    // 200 ms), resent the reneged data after the ACK that revealed it.
    let (revealed, resent) = (revealed.get().unwrap(), resent.get().unwrap());
    eprintln!("reneging revealed at {revealed:?}, data resent at {resent:?}");
    assert!(resent - revealed <= Duration::from_millis(40));
    assert!(p.client.conn(c).unwrap().counters().sack_reneging >= 1);
}
