//! MPTCP options (kind 30, every subtype, valid and mangled) on the segments the
//! `endpoint` and `conn` targets' peers send (issue 31 §4).
//!
//! A peer that speaks MPTCP has its own key and learns the endpoint's from the
//! MP_CAPABLE the endpoint sends, so its options can be *valid* (right tokens,
//! HMACs, keys, data ACKs, checksums) and reach deep into the endpoint's MPTCP
//! handling, or *mangled* (fields from the input, bytes cut, flipped or random).
//!
//! One rule keeps the harness's reference check sound: every DSS mapping the peer
//! sends maps subflow offset `o` to data sequence `idsn + 1 + o` (its own key's
//! IDSN), or lies far beyond any window (refused), so whatever the endpoint accepts,
//! the data stream equals the subflow stream and `tcp.rs`'s byte check still holds.
//! Mangled bytes that would parse as a mapping are not sent.

use crate::input::Input;
use brisk_wire::mptcp::checksum::dss_checksum;
use brisk_wire::mptcp::{
    crypto, AddAddr, DataSeq, Dss, Mapping, MpCapable, MpCapableForm, MpJoin, MpTcpRst,
    MptcpOption, RemoveAddr, ResetReason, MAX_DATA_LEN,
};
use brisk_wire::{ExtraOptions, Flags};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A DSN shift that puts a mapping beyond any receive window, in 64 and in 32 bits.
const FAR: u64 = (1 << 40) + (1 << 30);

/// A peer's MPTCP state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MpPeer {
    pub on: bool,
    pub key: u64,
    /// The endpoint's key, once seen in its MP_CAPABLE.
    pub ep_key: Option<u64>,
    /// Ask for DSS checksums.
    pub csum: bool,
}

impl MpPeer {
    pub fn new(on: bool, k: usize) -> MpPeer {
        MpPeer {
            on,
            key: 0x6b65_795f_0000_0000 | (k as u64 + 1),
            ep_key: None,
            csum: false,
        }
    }

    fn ep_key(&self, inp: &mut Input<'_>) -> u64 {
        self.ep_key
            .unwrap_or_else(|| (u64::from(inp.u32()) << 32) | u64::from(inp.u32()))
    }

    /// Learns the endpoint's key from an MP_CAPABLE it sent.
    pub fn learn(&mut self, extra: &ExtraOptions) {
        for o in brisk_wire::mptcp::options(extra).flatten() {
            if let MptcpOption::MpCapable(c) = o {
                match c.form {
                    MpCapableForm::SynAck { sender_key }
                    | MpCapableForm::Ack { sender_key, .. }
                    | MpCapableForm::AckData { sender_key, .. } => self.ep_key = Some(sender_key),
                    MpCapableForm::Syn => {}
                }
            }
        }
    }
}

/// Where a segment sits: its flags, its payload and the payload's subflow offset;
/// the data ACK offset into the endpoint's stream.
pub(crate) struct SegCtx<'a> {
    pub flags: Flags,
    pub sub_off: u64,
    pub payload: &'a [u8],
    pub ep_acked: u64,
    /// The peer has not completed MP_CAPABLE (its next ACK is the third ACK).
    pub handshake: bool,
}

fn data_base(key: u64) -> u64 {
    crypto::idsn(key).wrapping_add(1)
}

fn mapping(mp: &MpPeer, seg: &SegCtx<'_>, delta: i64, len: Option<u16>, far: bool) -> Mapping {
    let fin = u16::from(seg.flags.fin());
    let data_len = len.unwrap_or((seg.payload.len() as u16).saturating_add(fin));
    let sub = seg.sub_off.wrapping_add(delta as u64);
    let mut dsn = data_base(mp.key).wrapping_add(sub);
    if far {
        dsn = dsn.wrapping_add(FAR);
    }
    let ssn = sub.wrapping_add(1) as u32;
    let checksum = mp.csum.then(|| {
        let n = usize::from(data_len).min(seg.payload.len());
        dss_checksum(dsn, ssn, data_len, &seg.payload[..n])
    });
    Mapping {
        dsn: DataSeq::Bits64(dsn),
        subflow_seq: ssn,
        data_len,
        checksum,
    }
}

fn cap(mp: &MpPeer, form: MpCapableForm) -> MptcpOption {
    MptcpOption::MpCapable(MpCapable {
        checksum_required: mp.csum,
        deny_join_id0: false,
        form,
    })
}

/// The options a well-behaved MPTCP peer puts on a scripted segment.
pub(crate) fn scripted(mp: &MpPeer, seg: &SegCtx<'_>) -> ExtraOptions {
    let mut extra = ExtraOptions::new();
    if !mp.on {
        return extra;
    }
    let f = seg.flags;
    let opt = if f.syn() && !f.ack() {
        cap(mp, MpCapableForm::Syn)
    } else if f.syn() {
        cap(mp, MpCapableForm::SynAck { sender_key: mp.key })
    } else if seg.handshake && mp.ep_key.is_some() {
        cap(
            mp,
            MpCapableForm::Ack {
                sender_key: mp.key,
                receiver_key: mp.ep_key.unwrap_or(0),
            },
        )
    } else {
        let has_map = !seg.payload.is_empty() || f.fin();
        MptcpOption::Dss(Dss {
            data_ack: mp
                .ep_key
                .map(|k| DataSeq::Bits64(data_base(k).wrapping_add(seg.ep_acked))),
            mapping: has_map.then(|| mapping(mp, seg, 0, None, false)),
            data_fin: f.fin(),
        })
    };
    let _ = brisk_wire::mptcp::push(&mut extra, &opt);
    extra
}

/// Options decoded from the input: a count (0 to 3), then per option a selector
/// byte (low nibble: subtype 0-8 or 9 raw; bit 7: mangle) and its fields.
pub(crate) fn fuzzed(mp: &MpPeer, inp: &mut Input<'_>, seg: &SegCtx<'_>) -> ExtraOptions {
    let mut extra = ExtraOptions::new();
    for _ in 0..inp.u8() % 4 {
        let sel = inp.u8();
        let opt = build(mp, inp, seg, sel);
        let mut data = [0u8; MAX_DATA_LEN + 4];
        let n = match opt {
            Some(o) => {
                let n = o.data_len();
                let _ = o.emit_data(&mut data);
                n
            }
            None => {
                // Raw: up to 28 input bytes.
                let n = usize::from(inp.u8()) % (MAX_DATA_LEN + 1);
                let raw = inp.bytes(n);
                data[..raw.len()].copy_from_slice(raw);
                raw.len()
            }
        };
        let n = if sel & 0x80 != 0 {
            mangle(inp, &mut data, n)
        } else {
            n
        };
        let bytes = &data[..n];
        if (sel & 0x80 != 0 || opt.is_none()) && carries_mapping(bytes) {
            continue;
        }
        let _ = extra.push(brisk_wire::mptcp::KIND, bytes);
    }
    extra
}

/// A mangled or raw item that parses as a mapping could map bytes anywhere; such
/// items are left out (see the module doc).
fn carries_mapping(bytes: &[u8]) -> bool {
    match MptcpOption::parse(bytes) {
        Ok(MptcpOption::Dss(d)) => d.mapping.is_some(),
        Ok(MptcpOption::MpCapable(c)) => matches!(c.form, MpCapableForm::AckData { .. }),
        _ => false,
    }
}

fn mangle(inp: &mut Input<'_>, data: &mut [u8; MAX_DATA_LEN + 4], n: usize) -> usize {
    let at = usize::from(inp.u8());
    match inp.u8() % 4 {
        0 => at % (n + 1),
        1 if n > 0 => {
            data[at % n] ^= 1 << (at % 8);
            n
        }
        2 if n < MAX_DATA_LEN => {
            data[n] = at as u8;
            n + 1
        }
        _ => {
            if n > 0 {
                // The subtype nibble rewritten: another subtype's layout.
                data[0] = (data[0] & 0x0f) | ((at as u8) << 4);
            }
            n
        }
    }
}

fn addr(inp: &mut Input<'_>) -> IpAddr {
    let b = inp.u8();
    if b & 1 == 0 {
        IpAddr::V4(Ipv4Addr::new(198, 18, inp.u8(), inp.u8()))
    } else {
        IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            0,
            0,
            0,
            0,
            0,
            u16::from(inp.u8()),
        ))
    }
}

/// The option the selector names, fields from the segment and the input; `None` for
/// raw bytes.
fn build(mp: &MpPeer, inp: &mut Input<'_>, seg: &SegCtx<'_>, sel: u8) -> Option<MptcpOption> {
    let v = inp.u8(); // variant bits
    let f = seg.flags;
    Some(match sel & 0x0f {
        0 => {
            let form = match v % 4 {
                _ if f.syn() && !f.ack() => MpCapableForm::Syn,
                _ if f.syn() => MpCapableForm::SynAck { sender_key: mp.key },
                0 | 1 => MpCapableForm::Ack {
                    sender_key: mp.key,
                    receiver_key: mp.ep_key(inp),
                },
                2 => MpCapableForm::AckData {
                    sender_key: mp.key,
                    receiver_key: mp.ep_key(inp),
                    // The first data's mapping: offset 0, one to one by definition.
                    data_len: seg.payload.len() as u16,
                    checksum: mp.csum.then(|| {
                        dss_checksum(data_base(mp.key), 1, seg.payload.len() as u16, seg.payload)
                    }),
                },
                _ => MpCapableForm::Syn,
            };
            cap(mp, form)
        }
        1 => MptcpOption::MpJoin(match v % 3 {
            0 => MpJoin::Syn {
                backup: v & 8 != 0,
                address_id: inp.u8(),
                token: if v & 16 != 0 {
                    inp.u32()
                } else {
                    crypto::token(mp.ep_key(inp))
                },
                nonce: inp.u32(),
            },
            1 => MpJoin::SynAck {
                backup: v & 8 != 0,
                address_id: inp.u8(),
                truncated_hmac: (u64::from(inp.u32()) << 32) | u64::from(inp.u32()),
                nonce: inp.u32(),
            },
            _ => {
                let mut hmac = [0u8; 20];
                for (i, b) in inp.bytes(20).iter().enumerate() {
                    hmac[i] = *b;
                }
                MpJoin::Ack { hmac }
            }
        }),
        2 => {
            let ack = match v % 4 {
                0 => None,
                1 => Some(DataSeq::Bits32(inp.u32())),
                _ => mp.ep_key.map(|k| {
                    let off = seg.ep_acked.wrapping_sub(u64::from(inp.u8()));
                    DataSeq::Bits64(data_base(k).wrapping_add(off))
                }),
            };
            let map = match (v >> 2) % 4 {
                0 => None,
                1 => Some(mapping(mp, seg, 0, None, false)),
                2 => {
                    let delta = i64::from(inp.u16() as i16);
                    let len = if v & 64 != 0 { Some(inp.u16()) } else { None };
                    Some(mapping(mp, seg, delta, len, false))
                }
                _ => Some(mapping(mp, seg, 0, None, true)),
            };
            let map = map.map(|mut m| {
                if v & 128 != 0 {
                    // The 32-bit form: the receiver expands it near what it expects.
                    m.dsn = DataSeq::Bits32(m.dsn.value() as u32);
                }
                m
            });
            MptcpOption::Dss(Dss {
                data_ack: ack,
                mapping: map,
                data_fin: map.is_some() && (f.fin() || v & 32 != 0),
            })
        }
        3 => {
            let address_id = inp.u8();
            let a = addr(inp);
            let port = (v & 2 != 0).then(|| inp.u16());
            let hmac = match v % 4 {
                0 => None, // echo
                1 => Some((u64::from(inp.u32()) << 32) | u64::from(inp.u32())),
                _ => Some(crypto::add_addr_hmac(
                    mp.key,
                    mp.ep_key(inp),
                    address_id,
                    a,
                    port,
                )),
            };
            MptcpOption::AddAddr(AddAddr {
                address_id,
                addr: a,
                port,
                hmac,
            })
        }
        4 => {
            let n = 1 + usize::from(v % 8);
            let ids = inp.bytes(n);
            let mut buf = [0u8; 8];
            buf[..ids.len()].copy_from_slice(ids);
            MptcpOption::RemoveAddr(RemoveAddr::new(&buf[..n]).ok()?)
        }
        5 => MptcpOption::MpPrio { backup: v & 1 != 0 },
        6 => MptcpOption::MpFail {
            dsn: if v & 1 == 0 {
                data_base(mp.key).wrapping_add(seg.sub_off)
            } else {
                (u64::from(inp.u32()) << 32) | u64::from(inp.u32())
            },
        },
        7 => MptcpOption::MpFastclose {
            receiver_key: if v & 1 == 0 {
                mp.ep_key(inp)
            } else {
                (u64::from(inp.u32()) << 32) | u64::from(inp.u32())
            },
        },
        8 => MptcpOption::MpTcpRst(MpTcpRst {
            transient: v & 1 != 0,
            reason: ResetReason::from_code(inp.u8()),
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_tcp::mptcp::control::{AddAddrGate, AddAddrVerdict, Keys};
    use brisk_tcp::mptcp::counters::MptcpCounters;
    use brisk_tcp::mptcp::join::JoinResponder;

    const EP_KEY: u64 = 0x0123_4567_89ab_cdef;

    fn peer() -> MpPeer {
        MpPeer {
            ep_key: Some(EP_KEY),
            ..MpPeer::new(true, 2)
        }
    }

    fn ctx(flags: Flags, payload: &[u8]) -> SegCtx<'_> {
        SegCtx {
            flags,
            sub_off: 1000,
            payload,
            ep_acked: 50,
            handshake: false,
        }
    }

    fn opts(extra: &ExtraOptions) -> Vec<MptcpOption> {
        brisk_wire::mptcp::options(extra)
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn valid_options_verify_at_the_endpoint() {
        let mp = peer();
        // ADD_ADDR with a good HMAC, then an MP_JOIN SYN with the endpoint's token.
        let bytes = [2, 3, 2, 5, 0, 1, 2, 0x1f, 0x90, 1, 0, 1, 0, 0, 0, 9];
        let e = fuzzed(&mp, &mut Input::new(&bytes), &ctx(Flags::ACK, &[]));
        let o = opts(&e);
        let MptcpOption::AddAddr(a) = o[0] else {
            panic!("{o:?}")
        };
        let mut g = AddAddrGate::new(Keys {
            local: EP_KEY,
            remote: mp.key,
        });
        let v = g.on_add_addr(brisk_time::Instant::ZERO, &a, &mut MptcpCounters::default());
        assert!(matches!(v, AddAddrVerdict::Announce { .. }), "{v:?}");
        assert!(JoinResponder::on_syn(EP_KEY, mp.key, &o[1], 0, false, 1).is_ok());
    }

    #[test]
    fn mappings_stay_one_to_one_or_far() {
        let mp = MpPeer {
            csum: true,
            ..peer()
        };
        let payload = [7u8; 100];
        let c = ctx(Flags::ACK, &payload);
        let base = data_base(mp.key);
        // Exact, shifted (delta -3 and a length), far, 32-bit far.
        for bytes in [
            &[1u8, 2, 4][..],
            &[1, 2, 8 | 64, 0xff, 0xfd, 0, 50],
            &[1, 2, 12],
            &[1, 2, 12 | 128],
        ] {
            let o = opts(&fuzzed(&mp, &mut Input::new(bytes), &c));
            let MptcpOption::Dss(d) = o[0] else {
                panic!("{o:?}")
            };
            let m = d.mapping.unwrap();
            let sub = u64::from(m.subflow_seq) - 1;
            let off = brisk_tcp::mptcp::dsn::expand32(base + sub, m.dsn.value() as u32);
            let dsn = match m.dsn {
                DataSeq::Bits64(v) => v,
                DataSeq::Bits32(_) => off,
            };
            let rel = dsn.wrapping_sub(base).wrapping_sub(sub);
            assert!(rel == 0 || rel >= 1 << 30, "{bytes:?}: {rel}");
            assert!(m.checksum.is_some());
        }
        // Mangled or raw items that parse as mappings are left out.
        for seed in 0..200u8 {
            let bytes = [
                3,
                0x82,
                4,
                seed,
                seed % 4,
                0x89,
                14,
                0x20,
                0x04,
                0,
                0,
                0,
                1,
                9,
                2,
                0,
                5,
            ];
            let e = fuzzed(&mp, &mut Input::new(&bytes), &c);
            for o in brisk_wire::mptcp::options(&e).flatten() {
                if let MptcpOption::Dss(Dss {
                    mapping: Some(m), ..
                }) = o
                {
                    let sub = u64::from(m.subflow_seq) - 1;
                    assert_eq!(m.dsn.value(), base + sub, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn scripted_handshake_and_data() {
        let mut mp = MpPeer::new(true, 3);
        let syn = scripted(&mp, &ctx(Flags::SYN, &[]));
        assert!(matches!(
            opts(&syn)[0],
            MptcpOption::MpCapable(MpCapable {
                form: MpCapableForm::Syn,
                ..
            })
        ));
        let mut endpoint = ExtraOptions::new();
        brisk_wire::mptcp::push(
            &mut endpoint,
            &cap(
                &MpPeer::new(true, 9),
                MpCapableForm::SynAck { sender_key: EP_KEY },
            ),
        )
        .unwrap();
        mp.learn(&endpoint);
        assert_eq!(mp.ep_key, Some(EP_KEY));
        let third = SegCtx {
            handshake: true,
            ..ctx(Flags::ACK, &[])
        };
        assert!(matches!(
            opts(&scripted(&mp, &third))[0],
            MptcpOption::MpCapable(MpCapable {
                form: MpCapableForm::Ack { .. },
                ..
            })
        ));
        let data = scripted(&mp, &ctx(Flags::ACK.union(Flags::FIN), &[1, 2, 3]));
        let MptcpOption::Dss(d) = opts(&data)[0] else {
            panic!()
        };
        let m = d.mapping.unwrap();
        assert!(d.data_fin && m.data_len == 4);
        assert_eq!(m.dsn, DataSeq::Bits64(data_base(mp.key) + 1000));
        assert_eq!(d.data_ack, Some(DataSeq::Bits64(data_base(EP_KEY) + 50)));
    }
}
