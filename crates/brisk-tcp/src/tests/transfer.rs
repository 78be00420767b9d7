use super::harness::*;
use crate::config::Config;
use crate::endpoint::ConnHandle;
use brisk_time::Duration;
use brisk_wire::WindowScale;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// Writes `data` from client to server as buffer space allows, reading on the server,
/// until everything arrived or `max` virtual time passed. Returns what was received.
pub fn transfer(p: &mut Pair, c: ConnHandle, s: ConnHandle, data: &[u8], max: Duration) -> Vec<u8> {
    let mut sent = 0;
    let mut got = Vec::new();
    let end = p.now + max;
    while got.len() < data.len() && p.now < end {
        if sent < data.len() {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        Pair::read_all(&mut p.server, s, &mut got);
        if !p.step_until(end) {
            break;
        }
    }
    Pair::read_all(&mut p.server, s, &mut got);
    got
}

pub use crate::testkit::pattern;

#[test]
fn bulk_transfer_delivers_exact_bytes() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let data = pattern(1 << 20, 1);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(30));
    assert_eq!(got.len(), data.len());
    assert!(got == data);
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.retransmits, 0);
    assert_eq!(info.bytes_acked, data.len() as u64);
    assert!(info.cwnd > 10, "slow start grew cwnd: {}", info.cwnd);
}

#[test]
fn window_scaling_lets_large_buffers_use_shifted_windows() {
    let cfg = Config {
        recv_buffer: 1 << 20,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(20), cfg.clone(), cfg);
    let (c, s) = p.establish();
    assert_eq!(p.logged_repr(1).window_scale, WindowScale::new(5)); // 1 MiB >> 5 = 32768
    let data = pattern(3 << 20, 2);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(60));
    assert!(got == data);
    // Server ACKs advertise (field << 5) well beyond 64 KiB, and the sender used it.
    let max_field = p
        .seen(false)
        .iter()
        .skip(1)
        .map(|x| x.window)
        .max()
        .unwrap();
    assert!(
        u64::from(max_field) << 5 > 65_535,
        "window field {max_field}"
    );
    assert!(u64::from(max_field) << 5 <= 1 << 20);
    let info = p.client.conn(c).unwrap().info();
    assert!(info.snd_wnd > 65_535, "snd_wnd {}", info.snd_wnd);
}

#[test]
fn random_loss_transfer_is_exact_by_sha256() {
    let mut p = Pair::new(Duration::from_millis(15));
    let (c, s) = p.establish();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    p.set_hook(move |_| {
        if rng.gen_bool(0.02) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = pattern(3 << 20, 3);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(600));
    assert_eq!(got.len(), data.len());
    assert_eq!(Sha256::digest(&got), Sha256::digest(&data));
    let info = p.client.conn(c).unwrap().info();
    assert!(info.retransmits > 0);
}

#[test]
fn same_script_gives_same_bytes() {
    fn run() -> Vec<Vec<u8>> {
        let mut p = Pair::new(Duration::from_millis(7));
        let (c, s) = p.establish();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        p.set_hook(move |_| {
            if rng.gen_bool(0.03) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        let data = pattern(300_000, 4);
        let got = transfer(&mut p, c, s, &data, Duration::from_secs(120));
        assert!(got == data);
        p.log.into_iter().map(|(_, b)| b).collect()
    }
    assert_eq!(run(), run());
}

/// `Connection::poll_exhausted` (the endpoint skips the poll after a pure ACK or a
/// data segment that ended it) and `Connection::poll_finds_nothing` (the proof the
/// data case and the endpoint's input path use): at every step of a lossy,
/// reordering transfer with data both ways, a connection whose last poll was so
/// ended finds nothing when polled again, and one for which the predicate holds
/// finds nothing and changes nothing it reports (its `TcpInfo`, its next timeout).
#[test]
fn a_poll_ended_by_an_ack_leaves_nothing_to_send() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    p.set_hook(move |_| match rng.gen_range(0..100) {
        0..=1 => Action::Drop,
        2..=5 => Action::Delay(Duration::from_millis(3)),
        _ => Action::Deliver,
    });
    let up = pattern(2 << 20, 5);
    let down = pattern(200_000, 6);
    let (mut sent_up, mut sent_down) = (0, 0);
    let (mut got_up, mut got_down) = (Vec::new(), Vec::new());
    let (mut checked, mut predicted, mut steps) = (0, 0, 0);
    let end = p.now + Duration::from_secs(300);
    while (got_up.len() < up.len() || got_down.len() < down.len()) && p.now < end {
        if sent_up < up.len() {
            sent_up += p.client.conn_mut(c).unwrap().write(&up[sent_up..]);
        }
        // The server answers in small pieces now and then.
        if sent_down < down.len() && steps % 7 == 0 {
            let n = (down.len() - sent_down).min(3000);
            sent_down += p
                .server
                .conn_mut(s)
                .unwrap()
                .write(&down[sent_down..sent_down + n]);
        }
        Pair::read_all(&mut p.server, s, &mut got_up);
        Pair::read_all(&mut p.client, c, &mut got_down);
        if !p.step_until(end) {
            break;
        }
        steps += 1;
        let now = p.now;
        for (ep, h) in [(&mut p.client, c), (&mut p.server, s)] {
            if ep.conn(h).is_some_and(|k| k.poll_exhausted()) {
                checked += 1;
                let again = ep.conn_mut(h).unwrap().poll_transmit(now);
                assert!(again.is_none(), "step {steps}: {again:?}");
            }
            if let Some(k) = ep.conn(h).filter(|k| k.poll_finds_nothing()) {
                predicted += 1;
                let (info, timeout) = (k.info(), k.poll_timeout());
                let k = ep.conn_mut(h).unwrap();
                let again = k.poll_transmit(now);
                assert!(again.is_none(), "step {steps}: {again:?}");
                assert_eq!(k.info(), info, "step {steps}");
                assert_eq!(k.poll_timeout(), timeout, "step {steps}");
            }
        }
    }
    assert!(got_up == up && got_down == down);
    assert!(checked > 100, "only {checked} exhausted polls checked");
    assert!(predicted > 100, "only {predicted} predicted polls checked");
}

/// `read_all_in_place` (the simulator's bulk receiver reads with it) hands over every
/// byte once, in order, across partial reads through a small buffer and the ring's
/// wrap, on a lossy path (out-of-order data joined later), and leaves nothing that a
/// further read would find: stopping at an empty buffer skips only an empty read.
#[test]
fn read_all_in_place_drains_exactly_what_reads_would() {
    use crate::stream::ByteStream;
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, s) = p.establish();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    p.set_hook(move |_| {
        if rng.gen_bool(0.03) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = pattern(1 << 20, 4);
    let (mut sent, mut got, mut calls) = (0, Vec::new(), 0u64);
    let mut scratch = [0u8; 1000];
    let end = p.now + Duration::from_secs(600);
    while got.len() < data.len() && p.now < end {
        if sent < data.len() {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        let conn = p.server.conn_mut(s).unwrap();
        let before = got.len();
        // Through the trait, as the simulator's apps call it.
        let n = ByteStream::read_all_in_place(conn, &mut scratch, &mut |d| {
            calls += 1;
            got.extend_from_slice(d);
        })
        .unwrap();
        assert_eq!(n as usize, got.len() - before);
        assert_eq!(conn.readable(), 0);
        assert_eq!(conn.read(&mut scratch), 0);
        if !p.step_until(end) {
            break;
        }
    }
    assert!(got == data);
    assert!(
        calls > (data.len() / scratch.len()) as u64,
        "reads were partial"
    );
    assert!(p.client.conn(c).unwrap().info().retransmits > 0);
}
