//! Send buffers under the endpoint's memory limit (issue 29; `crate::mem`).
//!
//! The case: 400 peers connected to `brisk lab up --echo`, sent and never
//! read. The echo filled one 4 MiB send buffer per connection, uncharged, and the
//! process took 3.16 GB against a 1.5 GiB limit. Here in miniature: an echo server
//! endpoint with a 4 MiB hard limit, 12 clients that each send 1 MiB and do not read
//! (their 64 KiB windows close). Send and receive data together stay within the limit
//! at every step, the write policy shows in the counters, and once the clients read,
//! every byte comes back.

use super::harness::*;
use super::transfer::pattern;
use crate::config::Config;
use crate::endpoint::{ConnHandle, Endpoint, EndpointConfig};
use crate::mem::MemLimits;
use brisk_time::Duration;

const CONNS: usize = 12;
const EACH: usize = 1 << 20;

/// The echo application: what it read and could not yet write back waits in `pending`
/// (as `tools::echo`'s buffer), and it reads only when that is empty.
struct Echo {
    pending: Vec<u8>,
}

impl Echo {
    fn step(&mut self, ep: &mut Endpoint, h: ConnHandle) {
        let c = ep.conn_mut(h).unwrap();
        if !self.pending.is_empty() {
            let n = c.write(&self.pending);
            self.pending.drain(..n);
        }
        if self.pending.is_empty() {
            let mut buf = vec![0u8; 64 << 10];
            let n = c.read(&mut buf);
            self.pending.extend_from_slice(&buf[..n]);
            let m = c.write(&self.pending);
            self.pending.drain(..m);
        }
    }
}

/// Sum of what the server's connections hold, send and receive.
fn held(ep: &Endpoint, conns: &[(ConnHandle, ConnHandle)]) -> (usize, usize) {
    conns.iter().fold((0, 0), |(all, send), &(_, s)| {
        let u = ep.conn(s).unwrap().mem_usage();
        (all + u.ooo + u.ready + u.send, send + u.send)
    })
}

#[test]
fn peers_that_never_read_keep_send_and_receive_within_the_limit() {
    let high = 4 << 20;
    let limits = MemLimits::new(2 << 20, 3 << 20, high).unwrap();
    let client = Config {
        recv_buffer: 64 << 10,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), client, Config::default());
    p.server = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            mem: limits,
            ..EndpointConfig::seeded([2; 16], 2)
        },
    );
    p.server.listen(PORT, 128, Config::default()).unwrap();
    let pairs: Vec<_> = (0..CONNS).map(|_| p.establish()).collect();
    let data: Vec<Vec<u8>> = (0..CONNS).map(|i| pattern(EACH, i as u64)).collect();
    let mut sent = [0usize; CONNS];
    let mut echo: Vec<Echo> = (0..CONNS)
        .map(|_| Echo {
            pending: Vec::new(),
        })
        .collect();

    // Phase 1: the clients send and never read, for 20 s.
    let mut max_send = 0;
    for _ in 0..2000 {
        for (i, &(c, s)) in pairs.iter().enumerate() {
            let n = p.client.conn_mut(c).unwrap().write(&data[i][sent[i]..]);
            sent[i] += n;
            echo[i].step(&mut p.server, s);
        }
        p.advance(Duration::from_millis(10));
        let st = p.server.stats();
        let (all, send) = held(&p.server, &pairs);
        assert_eq!(
            all as u64, st.mem_charged,
            "the account agrees with the connections"
        );
        assert!(all <= high, "server holds {all} bytes, limit {high}");
        assert!(st.mem_peak <= high as u64, "{st:?}");
        max_send = max_send.max(send);
    }
    let st = p.server.stats().clone();
    eprintln!("phase 1: send held at most {max_send} B; {st:?}");
    assert!(
        sent.iter().all(|&n| n == EACH),
        "the clients wrote everything"
    );
    assert!(
        max_send > 1 << 20,
        "send buffers were charged ({max_send} at most)"
    );
    assert!(st.mem_send_limited > 0, "writes were limited: {st:?}");
    assert!(st.mem_pressure > 0, "{st:?}");

    // Phase 2: the clients read; every byte comes back, in order.
    let mut got: Vec<Vec<u8>> = vec![Vec::new(); CONNS];
    for _ in 0..60_000 {
        for (i, &(c, s)) in pairs.iter().enumerate() {
            Pair::read_all(&mut p.client, c, &mut got[i]);
            echo[i].step(&mut p.server, s);
        }
        if got.iter().all(|g| g.len() == EACH) {
            break;
        }
        p.advance(Duration::from_millis(10));
        assert!(held(&p.server, &pairs).0 <= high);
    }
    for i in 0..CONNS {
        assert_eq!(got[i].len(), EACH, "connection {i} echoed back in full");
        assert!(got[i] == data[i], "connection {i}: the echo is the data");
    }
    let st = p.server.stats();
    eprintln!("phase 2: {st:?}");
    assert!(st.mem_peak <= high as u64);
}
