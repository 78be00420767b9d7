//! The pieces together: two subflows carry one stream, mapped on the send side,
//! checked and mapped back on the receive side, reordered at the data level.

use super::dsn::{MapVerdict, RecvMap, SendMap, WindowCtx};
use super::recv::{DataRecv, FinVerdict, RecvConfig};
use super::sched::{Pick, SchedKind, Scheduler, SubflowView};
use super::*;
use brisk_time::Duration;

fn view(rtt_ms: u64) -> SubflowView {
    SubflowView {
        srtt: Duration::from_millis(rtt_ms),
        cwnd: 1 << 30,
        mss: 1_000,
        usable: true,
        ca_open: true,
        ..SubflowView::default()
    }
}

#[test]
fn two_subflows_carry_one_stream_intact() {
    let idsn = 0xFFFF_FFFF_FFFF_F000u64; // the DSN wraps during the transfer
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    // Sender: round-robin cuts the stream into 700-byte segments over two subflows.
    let mut sched = Scheduler::new(SchedKind::RoundRobin);
    let views = [view(10), view(40)];
    let mut send = [SendMap::new(0, 64), SendMap::new(0, 64)];
    // Each subflow's wire: (subflow offset, payload, mapping).
    let mut wire: [Vec<(u64, Vec<u8>, dsn::Mapping)>; 2] = [Vec::new(), Vec::new()];
    let mut at = 0usize;
    while at < data.len() {
        let n = 700.min(data.len() - at);
        let Pick::One(i) = sched.pick(&views, n as u32, SubflowMask::EMPTY) else {
            panic!("round-robin has room")
        };
        let off = send[i].end();
        let m = send[i]
            .push(idsn.wrapping_add(at as u64), off, n as u64)
            .unwrap();
        wire[i].push((off, data[at..at + n].to_vec(), m));
        at += n;
    }
    let fin = send[1]
        .push_data_fin(idsn.wrapping_add(data.len() as u64))
        .unwrap();
    // The DATA_FIN joined subflow 1's last mapping only if that one ended the stream.
    let fin_on_1 = fin.payload() > 0;
    if let Some(last) = wire[1].last_mut().filter(|_| fin_on_1) {
        last.2 = fin;
    }
    // Receiver: subflow 1 (slower) delivers everything after subflow 0.
    let cfg = RecvConfig {
        capacity: 1 << 16,
        wscale: 2,
        ..RecvConfig::default()
    };
    let mut recv = DataRecv::new(cfg, idsn).unwrap();
    let mut maps = [RecvMap::new(64), RecvMap::new(64)];
    for i in [0usize, 1] {
        for (off, payload, m) in &wire[i] {
            let win = WindowCtx {
                data_ack: recv.data_ack(),
                right_edge: recv.right_edge(),
            };
            let v = maps[i].on_mapping(*m, *off, payload.len() as u64, win);
            assert!(
                matches!(v, MapVerdict::New | MapVerdict::Duplicate),
                "{v:?}"
            );
            let d = deliver(&mut maps[i], &mut recv, *off, payload);
            assert_eq!(d.consumed, payload.len() as u64);
        }
    }
    if !fin_on_1 {
        assert_eq!(recv.on_data_fin(fin.dsn), FinVerdict::Accepted);
    }
    let mut got = vec![0u8; data.len()];
    let mut n = 0;
    while n < data.len() {
        let k = recv.read(&mut got[n..]);
        assert!(k > 0);
        n += k;
    }
    assert_eq!(got, data);
    assert!(recv.is_finished());
    assert_eq!(
        recv.data_ack(),
        idsn.wrapping_add(data.len() as u64 + 1),
        "the Data ACK covers the DATA_FIN"
    );
    assert!(maps.iter().all(|m| m.is_empty()));
}

#[test]
fn unmapped_bytes_wait_on_the_subflow() {
    let mut map = RecvMap::new(4);
    let mut recv = DataRecv::new(RecvConfig::default(), 0).unwrap();
    let d = deliver(&mut map, &mut recv, 0, &[1, 2, 3]);
    assert_eq!(d, Delivered::default());
    let w = WindowCtx {
        data_ack: 0,
        right_edge: 1 << 20,
    };
    let m = dsn::Mapping {
        dsn: 0,
        sub_off: 0,
        len: 2,
        data_fin: false,
    };
    assert_eq!(map.on_mapping(m, 0, 3, w), MapVerdict::New);
    let d = deliver(&mut map, &mut recv, 0, &[1, 2, 3]);
    assert_eq!((d.consumed, d.stored), (2, 2));
}

#[test]
fn subflow_mask_iterates_members_in_order() {
    let m = SubflowMask(0b1_0000_0101);
    assert_eq!(m.iter().collect::<Vec<_>>(), vec![0, 2, 8]);
    assert_eq!(m.len(), 3);
    assert!(SubflowMask::one(MAX_SUBFLOWS).is_empty());
    // Bits beyond MAX_SUBFLOWS are not members.
    assert_eq!(SubflowMask(0xFFFF).iter().count(), MAX_SUBFLOWS);
    assert_eq!(SubflowMask(0xFFFF).len(), MAX_SUBFLOWS);
    assert!(SubflowMask(1 << 15).is_empty());
    assert_eq!(
        m.without(2).with(1).iter().collect::<Vec<_>>(),
        vec![0, 1, 8]
    );
}
