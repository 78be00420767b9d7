//! RFC 8382's OWD feed through real endpoints (`crate::cc::sbd::host`): the sender's
//! detector gets one sample per ACK that acknowledges new data, the peer's drifting
//! timestamp clock (`EndpointConfig::ts_clock_ppm`) shows up as the skew estimate, and
//! without `enable_sbd` a host holds no detector.

use super::harness::{Pair, PORT, SERVER_IP};
use crate::cc::sbd::SbdHostConfig;
use crate::endpoint::{Endpoint, EndpointConfig};
use crate::Config;
use brisk_time::Duration;

/// A client sending 8 KB every 50 ms for `secs` to a server whose TS clock runs
/// `ppm` fast; returns the pair and the client's connection.
fn paced_transfer(ppm: i32, secs: u64, sbd: bool) -> (Pair, crate::ConnHandle) {
    let mut p = Pair::new(Duration::from_millis(20));
    let mut s = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            isn_secret: [2; 16],
            rng_seed: 2,
            ts_clock_ppm: ppm,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    s.listen(PORT, 128, Config::default()).unwrap();
    p.server = s;
    if sbd {
        p.client.enable_sbd(SbdHostConfig::default()).unwrap();
    }
    let (c, srv) = p.establish();
    let chunk = vec![7u8; 8192];
    let mut sink = Vec::new();
    for _ in 0..secs * 20 {
        p.client.conn_mut(c).unwrap().write(&chunk);
        p.advance(Duration::from_millis(50));
        Pair::read_all(&mut p.server, srv, &mut sink);
        sink.clear();
        p.log.clear();
    }
    (p, c)
}

#[test]
fn acks_feed_the_detector_and_a_drifting_peer_clock_is_estimated() {
    for ppm in [300, -200, 0] {
        let (p, _) = paced_transfer(ppm, 90, true);
        let h = p.client.host_cc().sbd().expect("enabled");
        let (flow, _) = h.groups().next().expect("the flow is tracked");
        assert!(h.samples > 1000, "{} samples", h.samples);
        assert!(h.decisions() > 200, "{} decisions", h.decisions());
        let est = h.skew_ppm(flow).unwrap();
        // 1-ms timestamps over a 70-s horizon: ±15 ppm is one tick per window pair.
        assert!(
            (est - f64::from(ppm)).abs() < 15.0,
            "peer at {ppm} ppm, estimated {est}"
        );
        // An idle path: a flat OWD, never congested (skew_est not below c_s).
        let e = h.stats(flow).unwrap().estimates();
        assert!(e.pkt_loss == 0.0 && e.var_est < 1_500.0, "{e:?}");
    }
}

#[test]
fn the_ts_clock_drifts_by_the_configured_ppm_and_plain_hosts_hold_no_detector() {
    let (p, c) = paced_transfer(1000, 5, false);
    assert!(p.client.host_cc().sbd().is_none());
    assert!(p.client.conn(c).is_some());
    let ms = |s: u64| brisk_time::Instant::ZERO + Duration::from_secs(s);
    assert_eq!(crate::conn::ts_clock(ms(1000), 0), 1_000_000);
    assert_eq!(crate::conn::ts_clock(ms(1000), 100), 1_000_100);
    assert_eq!(crate::conn::ts_clock(ms(1000), -50), 999_950);
    assert_eq!(crate::conn::ts_clock(ms(1000), 5000), 1_001_000, "clamped");
}
