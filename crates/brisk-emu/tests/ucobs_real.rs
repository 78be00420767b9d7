//! MN-12 with a kernel peer over real packets: uCOBS between brisk and Linux 6.18
//! through the emulated path with 1 % loss each way (issue 12, "uCOBS over kernel TCP
//! works today"). Linux's side is an ordinary socket read and written through
//! `KernelStream` (in order only, priorities ignored).
//! - brisk with prioritised send → Linux: every datagram once and intact, none out of
//!   order (Linux reads in order), the urgent ones ahead of their send order.
//! - Linux → brisk with unordered receive: every datagram once and intact, some out of
//!   order (the gain with only the receiver upgraded).
//!
//! Needs root and /dev/net/tun (skipped with a message otherwise).

mod common;

use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::kernel_stream::KernelStream;
use brisk_emu::{BriskLab, BRISK_ADDR, KERNEL_ADDR};
use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
use common::*;

const IO_TIMEOUT: Duration = Duration::from_secs(60);
const N: u32 = 3000;
const URGENT_EVERY: u32 = 50;

fn datagram(id: u32) -> Vec<u8> {
    let len = 100 + (id as usize * 53) % 1400;
    let mut d = id.to_be_bytes().to_vec();
    d.extend((0..len).map(|i| (id as usize * 29 + i * 3) as u8));
    d
}

fn lab(unordered: bool, prioritised: bool) -> BriskLab {
    lossy_lab(0.01, 40, 5, unordered, prioritised)
}

/// Sends all datagrams over `s` (urgent ones at priority 7), then half-closes.
fn send_all(s: &mut dyn brisk_tcp::stream::ByteStream) {
    let mut tx = UcobsSender::new();
    for id in 0..N {
        let prio = if (id + 1) % URGENT_EVERY == 0 { 7 } else { 1 };
        while !tx.send(s, &datagram(id), prio).expect("send") {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    while !tx.flush(s).expect("flush") {
        std::thread::sleep(Duration::from_millis(1));
    }
    s.shutdown_write().expect("shutdown");
}

/// Receives until the end of the stream; returns ids in delivery order and the number
/// delivered out of order.
fn receive_all(s: &mut dyn brisk_tcp::stream::ByteStream) -> (Vec<u32>, u64) {
    let mut rx = UcobsReceiver::new(Limits::default(), 16 * 1024).unwrap();
    let mut ids = Vec::new();
    rx.poll(s, &mut |d| {
        let id = u32::from_be_bytes(d.data[..4].try_into().unwrap());
        assert_eq!(d.data, &datagram(id)[..], "datagram {id} intact");
        ids.push(id);
    })
    .expect("receive");
    let c = *rx.counters();
    assert_eq!(c.malformed + c.oversized, 0, "{c:?}");
    (ids, c.delivered_out_of_order)
}

fn exactly_once(ids: &[u32]) {
    let mut v = ids.to_vec();
    v.sort_unstable();
    assert_eq!(v, (0..N).collect::<Vec<_>>(), "every datagram exactly once");
}

#[test]
fn ucobs_from_brisk_with_prioritised_send_to_a_linux_receiver() {
    if !lab_available("ucobs_from_brisk_with_prioritised_send_to_a_linux_receiver") {
        return;
    }
    let lab = lab(false, true);
    let port = 5011;
    let l = kernel_listen(lab.kernel(), port);
    let mut brisk = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, port)))
        .expect("brisk connects to Linux");
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let linux = kernel_accept(&l, IO_TIMEOUT);
    linux.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let (ids, ooo) = std::thread::scope(|s| {
        let rx = s.spawn(|| receive_all(&mut KernelStream::new(&linux)));
        send_all(&mut brisk);
        rx.join().unwrap()
    });
    exactly_once(&ids);
    assert_eq!(ooo, 0, "Linux reads in order");
    let ahead: i64 = ids
        .iter()
        .enumerate()
        .filter(|(_, &id)| (id + 1) % URGENT_EVERY == 0)
        .map(|(pos, &id)| i64::from(id) - pos as i64)
        .sum();
    eprintln!("brisk → Linux: {N} datagrams, urgent ones {ahead} places ahead in total");
    assert!(ahead > 0, "urgent datagrams overtook queued ones");
    drop((brisk, linux));
    let rep = lab.stop().expect("emulator report");
    assert!(rep.forward.dropped_loss > 0, "the path lost packets");
}

#[test]
fn ucobs_from_a_linux_sender_to_brisk_with_unordered_receive() {
    if !lab_available("ucobs_from_a_linux_sender_to_brisk_with_unordered_receive") {
        return;
    }
    let lab = lab(true, false);
    let port = 5012;
    let bl = lab.stack().listen(port).expect("brisk listens");
    let linux = kernel_connect(lab.kernel(), BRISK_ADDR, port, IO_TIMEOUT);
    set_cubic(&linux);
    let mut brisk = bl.accept().expect("brisk accepts").0;
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let (ids, ooo) = std::thread::scope(|s| {
        let rx = s.spawn(|| receive_all(&mut brisk));
        send_all(&mut KernelStream::new(&linux));
        rx.join().unwrap()
    });
    exactly_once(&ids);
    eprintln!("Linux → brisk: {N} datagrams, {ooo} delivered out of order");
    assert!(ooo > 0, "losses let brisk deliver datagrams out of order");
    linux.shutdown(Shutdown::Both).ok();
    drop((brisk, linux));
    lab.stop().expect("emulator report");
}
