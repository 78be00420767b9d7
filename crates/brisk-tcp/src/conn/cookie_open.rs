//! A passive open from a valid SYN-cookie ACK (`crate::syncookie`; Linux
//! `cookie_v4_check` → `tcp_get_cookie_sock`): the connection is built as if it had
//! received the peer's SYN and sent the cookie SYN-ACK, and is left in SYN-RECEIVED
//! for the endpoint to hand it the ACK, which completes the handshake (and delivers any
//! data it carries) through the ordinary path.

use super::{Connection, Setup};
use crate::syncookie::{synack_window, CookieOpts};
use brisk_time::Instant;
use brisk_wire::{Flags, SeqNum, TcpRepr, Timestamps};

impl Connection {
    /// `setup.iss` must be the cookie (`ack.ack - 1`) and `ts_offset` the offset the
    /// cookie SYN-ACK's TSval was made with, so our TSvals continue from it.
    pub fn accept_cookie(
        now: Instant,
        setup: Setup,
        ack: &TcpRepr<'_>,
        opts: &CookieOpts,
        ts_offset: u32,
    ) -> Self {
        // The peer's SYN as far as the cookie remembers it. Its window is replaced by
        // the ACK's (scaled) on the ACK, as for any SYN-RECEIVED connection.
        let mut flags = Flags::SYN;
        if opts.ecn {
            flags.insert(Flags::ECE);
            flags.insert(Flags::CWR);
        }
        let syn = TcpRepr {
            src_port: ack.src_port,
            dst_port: ack.dst_port,
            seq: SeqNum(ack.seq.0.wrapping_sub(1)),
            flags,
            window: ack.window,
            mss: Some(opts.mss),
            window_scale: opts.wscale.map(brisk_wire::WindowScale::clamped),
            sack_permitted: opts.sack,
            // TS.Recent from the ACK itself (Linux `req->ts_recent = rcv_tsval`).
            timestamps: ack.timestamps.filter(|_| opts.ts).map(|t| Timestamps {
                tsval: t.tsval,
                tsecr: 0,
            }),
            ..TcpRepr::default()
        };
        let window = synack_window(&setup.config);
        let mut c = Connection::accept(now, setup, &syn);
        c.sub.opts.ts_offset = ts_offset;
        // The SYN-ACK went out, statelessly: SND.NXT = ISS + 1, nothing to
        // retransmit and no send time for an RTT sample (as Linux's `snt_synack = 0`).
        c.sub.hs.syn_pending = false;
        c.sub.snd.snd_nxt = 1;
        c.sub.rcv.rcv_adv = c.rcv_nxt() + u64::from(window);
        c.sub.rcv.last_ack_sent = c.rcv_nxt();
        c
    }
}

#[cfg(test)]
impl Connection {
    /// What the handshake settled: (peer MSS as our send MSS, the peer's window shift
    /// if scaling, SACK, timestamps, ECN).
    pub(crate) fn negotiated(&self) -> (u32, Option<u8>, bool, bool, bool) {
        let o = &self.sub.opts;
        (
            o.mss,
            o.ws_ok.then_some(o.snd_wscale),
            o.sack_ok,
            o.ts_ok,
            o.ecn_ok,
        )
    }
}
