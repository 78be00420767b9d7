//! An MPTCP connection's memory, charged to its endpoint (`conn::mp_mem`,
//! `crate::mem`). The outer connection's own buffers stay dormant; what it holds is
//! its subflows' buffers and the data level's. Before, the endpoint read only the
//! dormant ones, and an MPTCP connection holding megabytes was charged nothing.
//!
//! Two subflows (ndiffports), a client that writes 3 MiB by copy and a server that
//! reads nothing for 2 s: at every step each endpoint's account agrees with its
//! connection, the server is charged at least what the application could read and
//! the client at least what it wrote and was not data-acknowledged. Then the server
//! reads and every byte arrives intact.

use super::harness::*;
use super::mptcp_join::{cfg, establish_joined, sha};
use crate::endpoint::{Endpoint, EndpointConfig};
use crate::mem::MemLimits;
use crate::mptcp::pm::PmMode;
use brisk_time::Duration;

#[test]
fn mptcp_connection_is_charged_for_its_subflows_and_data_level() {
    let server_cfg = cfg(PmMode::Fullmesh, 8, Vec::new());
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        cfg(PmMode::NDiffPorts { n: 2 }, 8, Vec::new()),
        server_cfg.clone(),
    );
    // A limit far above what the connection may hold: the account is checked, not
    // the pressure response.
    let high = 64 << 20;
    p.server = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            mem: MemLimits::new(high / 2, high * 3 / 4, high).unwrap(),
            ..EndpointConfig::seeded([2; 16], 2)
        },
    );
    p.server.listen(PORT, 128, server_cfg).unwrap();
    let (c, s) = establish_joined(&mut p, 2);
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);

    let data = crate::testkit::pattern(3 << 20, 11);
    let mut sent = 0;
    let (mut max_server, mut max_client) = (0, 0);
    for _ in 0..200 {
        sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        p.advance(Duration::from_millis(10));
        let sc = p.server.conn(s).unwrap();
        let su = sc.mem_usage();
        assert_eq!(
            su.charged() as u64,
            p.server.stats().mem_charged,
            "the server's account agrees with its connection"
        );
        assert!(
            su.ready >= sc.readable(),
            "the server is charged {su:?}, at least the {} bytes it can read",
            sc.readable()
        );
        let cc = p.client.conn(c).unwrap();
        let cu = cc.mem_usage();
        assert_eq!(cu.charged() as u64, p.client.stats().mem_charged);
        assert!(
            cu.send >= cc.send_buffered(),
            "the client is charged {cu:?}, at least the {} bytes it holds to send",
            cc.send_buffered()
        );
        max_server = max_server.max(su.charged());
        max_client = max_client.max(cu.send);
    }
    let readable = p.server.conn(s).unwrap().readable();
    eprintln!(
        "server charged at most {max_server} B, readable {readable}; client send {max_client} B"
    );
    assert!(
        readable > 256 << 10,
        "the receiver's buffer filled: {readable}"
    );
    assert!(max_server >= readable && max_client > 256 << 10);

    // The server reads: every byte arrives.
    let ok = p.run_until(Duration::from_secs(30), |p| {
        if sent < data.len() {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == data.len()
    });
    assert!(ok, "all {} bytes arrived ({} got)", data.len(), got.len());
    assert_eq!(sha(&got), sha(&data));
    let su = p.server.conn(s).unwrap().mem_usage();
    assert_eq!(su.charged() as u64, p.server.stats().mem_charged);
    assert_eq!(p.server.conn(s).unwrap().readable(), 0);
}
