//! inner-space, rows IS-5 and IS-7 (docs/mechanisms/inner-space.md).
//!
//! IS-5: brisk's dual handshake (`Endpoint::connect_dual`, brisk-tcp's
//! `conn/inspace.rs` and `endpoint/dual.rs`) run here between two brisk endpoints in
//! the test kit's discrete-event pair (real packets, virtual time): the time to the
//! client's `Connected` against a plain connect's, with an upgraded and a legacy
//! server, the implicit and explicit variants, at several one-way latencies; the
//! four arrival orders (one SYN/ACK delayed) each leaving exactly one established
//! server connection; both first SYNs lost leaving the SYN-U sent once.
//!
//! IS-7: a stated model, not tcpcrypt: each protocol is its message sequence, each
//! message sent as soon as what it depends on has arrived and taking half an RTT;
//! the rounds are when each side can first send secured (or, for plain TCP, any)
//! application data.

use brisk_tcp::config::Config;
use brisk_tcp::event::Event;
use brisk_tcp::inspace::{DualVariant, InSpaceConfig};
use brisk_tcp::testkit::{Action, Pair, PORT};
use brisk_tcp::Instant;
use brisk_time::Duration;

fn cfg(client: Option<DualVariant>, server: bool) -> Config {
    Config {
        inspace: Some(Box::new(InSpaceConfig {
            client,
            server,
            ..InSpaceConfig::default()
        })),
        ..Config::default()
    }
}

/// Time from the connect call to the client's first `Connected`, and the handles
/// that reported one.
fn connected_after(p: &mut Pair, start: Instant) -> (Option<Duration>, usize) {
    let mut at = None;
    p.run_until(Duration::from_secs(30), |p| {
        if at.is_none() && p.client_events.iter().any(|(_, e)| *e == Event::Connected) {
            at = Some(p.now - start);
        }
        false
    });
    let n = p
        .client_events
        .iter()
        .filter(|(_, e)| *e == Event::Connected)
        .count();
    (at, n)
}

fn established_at_server(p: &mut Pair) -> usize {
    let mut n = 0;
    while let Some(h) = p.server.accept(PORT) {
        if p.server
            .conn(h)
            .is_some_and(|c| c.state() == brisk_tcp::State::Established)
        {
            n += 1;
        }
    }
    n
}

/// A packet hook for the test kit's pair.
type Hook = Box<dyn FnMut(&brisk_tcp::testkit::Seen) -> Action>;

/// One dual handshake; panics (the row fails) on a broken rule. Returns the time
/// to `Connected` and whether the Upgraded connection survived.
fn dual(
    lat: Duration,
    upgraded_server: bool,
    variant: DualVariant,
    hook: Option<Hook>,
) -> (Duration, bool) {
    let mut p = Pair::with_configs(lat, Config::default(), cfg(None, upgraded_server));
    if let Some(mut h) = hook {
        p.set_hook(move |s| h(s));
    }
    let start = p.now;
    let pair = p
        .client
        .connect_dual(p.now, Pair::server_addr(), cfg(Some(variant), false))
        .expect("connect_dual");
    let (at, n) = connected_after(&mut p, start);
    let at = at.expect("a connection survived");
    assert_eq!(n, 1, "one Connected for the application");
    assert_eq!(
        established_at_server(&mut p),
        1,
        "one connection at the server"
    );
    let upgraded = p
        .client_events
        .iter()
        .any(|(h, e)| *h == pair.upgraded && *e == Event::Connected);
    assert_eq!(
        upgraded, upgraded_server,
        "the survivor matches the server kind"
    );
    (at, upgraded)
}

fn plain(lat: Duration) -> Duration {
    let mut p = Pair::new(lat);
    let start = p.now;
    p.connect();
    connected_after(&mut p, start).0.expect("plain connect")
}

/// IS-5's checks; the summary for the row.
pub fn is5(quick: bool) -> String {
    let lats: &[u64] = if quick {
        &[5, 50]
    } else {
        &[1, 5, 20, 50, 100, 300]
    };
    let mut cases = 0;
    for &ms in lats {
        let lat = Duration::from_millis(ms);
        let base = plain(lat);
        for upgraded_server in [true, false] {
            for variant in [DualVariant::Implicit, DualVariant::Explicit] {
                let (at, _) = dual(lat, upgraded_server, variant, None);
                assert_eq!(
                    at, base,
                    "{ms} ms one way, upgraded server {upgraded_server}, {variant:?}: dual {at:?} vs plain {base:?}"
                );
                cases += 1;
            }
        }
    }
    // The four arrival orders: one SYN/ACK held back 30 ms.
    let mut orders = Vec::new();
    for upgraded_server in [true, false] {
        for ordinary_first in [true, false] {
            let mut up_port = None;
            let hook = move |s: &brisk_tcp::testkit::Seen| {
                if s.to_server && s.flags.syn() && up_port.is_none() {
                    up_port = Some(s.src_port);
                }
                let to_up = !s.to_server && Some(s.dst_port) == up_port;
                if !s.to_server && s.flags.syn() && to_up == ordinary_first {
                    Action::Delay(Duration::from_millis(30))
                } else {
                    Action::Deliver
                }
            };
            let (at, up) = dual(
                Duration::from_millis(20),
                upgraded_server,
                DualVariant::Implicit,
                Some(Box::new(hook)),
            );
            orders.push(format!(
                "{} server, {} first: {} survives at {} ms",
                if upgraded_server {
                    "upgraded"
                } else {
                    "legacy"
                },
                if ordinary_first {
                    "Ordinary"
                } else {
                    "Upgraded"
                },
                if up { "Upgraded" } else { "Ordinary" },
                at.as_millis()
            ));
        }
    }
    // Both first SYNs lost: only the Ordinary one is retransmitted.
    let mut lost = 0;
    let mut p = Pair::with_configs(
        Duration::from_millis(20),
        Config::default(),
        cfg(None, true),
    );
    p.set_hook(move |s| {
        if s.to_server && s.flags.syn() && lost < 2 {
            lost += 1;
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let start = p.now;
    p.client
        .connect_dual(
            p.now,
            Pair::server_addr(),
            cfg(Some(DualVariant::Implicit), false),
        )
        .expect("connect_dual");
    let (at, _) = connected_after(&mut p, start);
    let syn_u = p
        .seen(true)
        .iter()
        .filter(|s| s.flags.syn() && s.len > 0)
        .count();
    let syns = p.seen(true).iter().filter(|s| s.flags.syn()).count();
    assert_eq!((syn_u, syns), (1, 3), "SYN-U once, the Ordinary SYN twice");
    format!(
        "{cases} dual handshakes ({} one-way latencies × upgraded/legacy server × implicit/explicit): \
         time to Connected equal to a plain connect's in every case (zero added RTT); \
         one survivor and one server connection in all four orders ({}); both first SYNs \
         lost: the SYN-U sent once, the Ordinary SYN retransmitted, connected after {} ms. \
         Over real packets against Linux (a legacy server): crates/brisk-emu/tests/inspace_linux.rs",
        lats.len(),
        orders.join("; "),
        at.map_or(0, |d| d.as_millis())
    )
}

/// Who sends a message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Party {
    Client,
    Server,
}

/// One message of a protocol's sequence: sent when `after` (indices of earlier
/// messages, all received by the sender) have arrived, at once otherwise.
struct Msg {
    name: &'static str,
    from: Party,
    after: &'static [usize],
}

/// A protocol: its messages, and after which received messages each side holds the
/// keys (or, plain TCP, may send data at all).
struct Protocol {
    name: &'static str,
    msgs: &'static [Msg],
    client_ready_after: &'static [usize],
    server_ready_after: &'static [usize],
}

/// When (in RTTs from the first SYN) each side can first send application data.
fn first_data(p: &Protocol) -> (f64, f64) {
    let mut arrive = vec![0.0f64; p.msgs.len()];
    for (i, m) in p.msgs.iter().enumerate() {
        let send = m.after.iter().map(|&j| arrive[j]).fold(0.0, f64::max);
        arrive[i] = send + 0.5;
        let _ = (m.name, m.from);
    }
    let ready = |after: &[usize]| after.iter().map(|&j| arrive[j]).fold(0.0, f64::max);
    (ready(p.client_ready_after), ready(p.server_ready_after))
}

// The sequences (RFC 8548 tcpcrypt over RFC 8547 TCP-ENO; the draft's INIT1+ /
// INIT2+ in the SYN-U / SYN/ACK-U, D.3 §4). Indices are the messages' positions.
const TCP: Protocol = Protocol {
    name: "TCP",
    msgs: &[
        Msg {
            name: "SYN",
            from: Party::Client,
            after: &[],
        },
        Msg {
            name: "SYN-ACK",
            from: Party::Server,
            after: &[0],
        },
        Msg {
            name: "ACK",
            from: Party::Client,
            after: &[1],
        },
    ],
    // The client may send with its ACK; the server once the ACK arrives.
    client_ready_after: &[1],
    server_ready_after: &[2],
};
const TCPCRYPT: Protocol = Protocol {
    name: "tcpcrypt",
    msgs: &[
        Msg {
            name: "SYN+ENO",
            from: Party::Client,
            after: &[],
        },
        Msg {
            name: "SYN-ACK+ENO",
            from: Party::Server,
            after: &[0],
        },
        Msg {
            name: "ACK+INIT1",
            from: Party::Client,
            after: &[1],
        },
        Msg {
            name: "INIT2",
            from: Party::Server,
            after: &[2],
        },
    ],
    // Keys: the server after INIT1, the client after INIT2.
    client_ready_after: &[3],
    server_ready_after: &[2],
};
const TCPCRYPT_INSPACE: Protocol = Protocol {
    name: "tcpcrypt in Inner Space",
    msgs: &[
        Msg {
            name: "SYN-U+INIT1+",
            from: Party::Client,
            after: &[],
        },
        Msg {
            name: "SYN/ACK-U+INIT2+",
            from: Party::Server,
            after: &[0],
        },
        Msg {
            name: "ACK",
            from: Party::Client,
            after: &[1],
        },
    ],
    client_ready_after: &[1],
    server_ready_after: &[0],
};
const TCPCRYPT_RESUME: Protocol = Protocol {
    name: "tcpcrypt resumption",
    msgs: &[
        Msg {
            name: "SYN+ENO(resume)",
            from: Party::Client,
            after: &[],
        },
        Msg {
            name: "SYN-ACK+ENO(resume)",
            from: Party::Server,
            after: &[0],
        },
        Msg {
            name: "ACK",
            from: Party::Client,
            after: &[1],
        },
    ],
    // Resumed keys, but data only after the handshake (no SYN data).
    client_ready_after: &[1],
    server_ready_after: &[0],
};
const TCPCRYPT_RESUME_INSPACE_TFO: Protocol = Protocol {
    name: "tcpcrypt resumption in Inner Space with Fast Open",
    msgs: &[
        Msg {
            name: "SYN-U+resume+TFO cookie (inner)+data",
            from: Party::Client,
            after: &[],
        },
        Msg {
            name: "SYN/ACK-U",
            from: Party::Server,
            after: &[0],
        },
    ],
    client_ready_after: &[],
    server_ready_after: &[0],
};

/// IS-7's model and its checks; the summary for the row.
pub fn is7() -> String {
    let rows = [
        &TCP,
        &TCPCRYPT,
        &TCPCRYPT_INSPACE,
        &TCPCRYPT_RESUME,
        &TCPCRYPT_RESUME_INSPACE_TFO,
    ];
    let t: Vec<(f64, f64)> = rows.iter().map(|p| first_data(p)).collect();
    // Client-sends-first: secured data leaves at (client ready); stock tcpcrypt is
    // one round later than TCP; in Inner Space, the same round as TCP.
    assert_eq!(t[0].0, 1.0, "TCP: the client sends with its ACK");
    assert_eq!(t[1].0 - t[0].0, 1.0, "stock tcpcrypt adds one round");
    assert_eq!(
        t[2].0, t[0].0,
        "Inner Space: secured data in the first round"
    );
    // Server-sends-first in Inner Space: after half a round (INIT1+ on the SYN-U).
    assert_eq!(t[2].1, 0.5, "Inner Space: the server after ½ round");
    assert_eq!(t[1].1, 1.5);
    // Resumption: stock in the first round (1 RTT), with Inner Space + TFO 0.
    assert_eq!(t[3].0, 1.0, "stock resumption: one round");
    assert_eq!(t[4].0, 0.0, "Inner Space + TFO resumption: zero rounds");
    // A one-RTT request/response: FCT = client ready + 1 RTT; +1 round is +50 %
    // (2 → 3 RTT) without Fast Open and +100 % (1 → 2) with it.
    let fct = 1.0 + t[0].0;
    let stock = 1.0 + t[1].0;
    assert_eq!((stock - fct) / fct, 0.5);
    assert_eq!((stock - 1.0 - (fct - 1.0)) / (fct - 1.0), 1.0);
    rows.iter()
        .zip(&t)
        .map(|(p, (c, s))| format!("{}: client {c} RTT, server {s} RTT", p.name))
        .collect::<Vec<_>>()
        .join("; ")
}
