//! MPTCP at the endpoint (RFC 8684 §3.2): the token table, MP_JOIN SYNs handed to
//! the connection holding their token, and the 4-tuples of a connection's subflows in
//! the connection table (each pointing to the connection's handle, so every segment
//! of every subflow reaches its MPTCP connection, which finds the subflow by
//! 4-tuple). Linux: `mptcp_token_new_connect` / `mptcp_token_new_request` (token.c),
//! `subflow_check_req` and `subflow_v4_conn_request` (subflow.c).
//!
//! Limits: the token table holds at most `min(max_connections, token::DEFAULT_LIMIT)`
//! tokens (a connection whose token does not fit takes no joins, counted in
//! `EndpointStats::mptcp_tokens_full`); each connection holds at most its path
//! manager's `subflows` limit of joined subflows (at most 8); refusals are RSTs in the
//! bounded reply queue.

use super::*;
use crate::cc::host::GroupKey;
use crate::mptcp::join::{find_join, JoinError};
use crate::mptcp::token::{TokenError, TokenTable, DEFAULT_LIMIT};
use brisk_wire::mptcp::{MpJoin, MpTcpRst, MptcpOption};

/// Whether a SYN carries MP_JOIN (any form; a malformed MPTCP option is not one).
pub(super) fn is_mp_join(tcp: &TcpRepr<'_>) -> bool {
    !tcp.extra.is_empty()
        && brisk_wire::mptcp::options(&tcp.extra).any(|o| matches!(o, Ok(MptcpOption::MpJoin(_))))
}

impl Endpoint {
    /// Enters a new MPTCP connection's token (a collision draws a new key, as Linux
    /// `mptcp_token_new_connect` does; the key has not been sent yet).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_register_slow(&mut self, h: ConnHandle) {
        let limit = self.config.max_connections.clamp(1, DEFAULT_LIMIT);
        let tokens = self
            .tokens
            .get_or_insert_with(|| Box::new(TokenTable::new(limit)));
        let Some(slot) = self
            .slots
            .get_mut(h.0 as usize)
            .and_then(|s| s.as_deref_mut())
        else {
            return;
        };
        let Some(token) = slot.conn.mptcp_token() else {
            return;
        };
        match tokens.insert(token, h) {
            Ok(()) => slot.mp_token = Some(token),
            Err(TokenError::Collision { .. }) => {
                let rng = &mut self.rng;
                match tokens.insert_new_key(|| rng.gen(), h) {
                    Ok((key, token)) => {
                        slot.conn.mp_set_local_key(key);
                        slot.mp_token = Some(token);
                    }
                    Err(_) => self.stats.mptcp_tokens_full += 1,
                }
            }
            Err(_) => self.stats.mptcp_tokens_full += 1,
        }
    }

    #[inline]
    pub(super) fn mp_register(&mut self, h: ConnHandle) {
        if self.conn(h).is_some_and(|c| c.is_mptcp()) {
            self.mp_register_slow(h);
        }
    }

    /// A reaped connection: its token and its subflows' 4-tuples and host flows go.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_forget(&mut self, h: ConnHandle, slot: &mut Slot) {
        if let (Some(t), Some(tokens)) = (slot.mp_token, self.tokens.as_deref_mut()) {
            if tokens.get(t) == Some(h) {
                tokens.remove(t);
            }
        }
        for r in slot.conn.mp_subflow_keys() {
            self.mp_remove_subflow(h, r);
        }
    }

    fn mp_remove_subflow(&mut self, h: ConnHandle, r: crate::mptcp::meta::RemovedSubflow) {
        if self.table.get(&r.key) == Some(&h) {
            self.table.remove(&r.key);
            self.last_hit = None;
        }
        if let Some(flow) = r.flow {
            self.host_cc.get_mut().leave(flow);
        }
    }

    /// After a call into an MPTCP connection: subflows it removed leave the table,
    /// subflows its path manager wants are opened (port, ISN, seed and controller
    /// from the endpoint, as for any connection).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_service(&mut self, now: Instant, h: ConnHandle) {
        let Some(slot) = self.slot_mut(h) else {
            return;
        };
        let removed = slot.conn.mp_take_removed();
        for r in removed {
            self.mp_remove_subflow(h, r);
        }
        loop {
            let Some(slot) = self.slot_mut(h) else {
                return;
            };
            let Some(open) = slot.conn.mp_poll_open() else {
                break;
            };
            let Some(cfg) = slot.conn.mp_sub_config() else {
                break;
            };
            let remote = open.remote;
            let local_ip = open.local.ip();
            let ok_addr = self.is_local(local_ip)
                && local_ip.is_ipv4() == remote.ip().is_ipv4()
                && !self.martian_source(remote.ip());
            let port = if !ok_addr {
                None
            } else if open.local.port() == 0 {
                self.pick_ephemeral(remote).ok()
            } else {
                Some(open.local.port()).filter(|p| !self.table.contains_key(&(*p, remote)))
            };
            let Some(port) = port else {
                self.stats.mptcp_join_open_failed += 1;
                if let Some(slot) = self.slot_mut(h) {
                    slot.conn.mp_open_failed(open);
                }
                continue;
            };
            let local = SocketAddr::new(local_ip, port);
            let setup = self.setup(now, local, remote, cfg);
            self.mp_couple(h, &setup);
            let Some(slot) = self.slot_mut(h) else {
                return;
            };
            slot.conn.mp_open_subflow(now, setup, open);
            self.table.insert((port, remote), h);
            self.last_hit = None;
        }
        self.mark_ready(h);
    }

    /// Coupled congestion control (RFC 6356 §3, `cc/coupled/`): with a coupled `cc`
    /// (lia, olia, balia, with or without LISA) the subflows of connection `h` are one
    /// group of the host room, [`GroupKey::Subflows`] of its handle. The first subflow
    /// enters it with the first join; each joining subflow enters before its
    /// controller starts (`init` at its establishment), so LISA's join step finds its
    /// siblings. Other controllers stay ungrouped (an FSE flow keeps its FSE group).
    fn mp_couple(&mut self, h: ConnHandle, setup: &Setup) {
        let spec = &setup.config.congestion.controller;
        if spec.base.coupling().is_none() || spec.fse.is_some() {
            return;
        }
        let Some(new) = setup.cc.flow() else {
            return;
        };
        let first = self.slot_mut(h).and_then(|s| s.conn.flow_cc_mut().flow());
        let key = Some(GroupKey::Subflows(h.0));
        let host = self.host_cc.get_mut();
        if let Some(first) = first {
            host.regroup(first, key);
        }
        host.regroup(new, key);
    }

    /// A SYN with MP_JOIN to our `local_ip` (to a listener's port when `listener`):
    /// resolved by its token to a connection, admitted by it (Linux
    /// `subflow_check_req`), or refused with a RST carrying MP_TCPRST and the reason
    /// Linux gives (`JoinError::reset_reason`), counted.
    pub(super) fn on_join_syn(
        &mut self,
        now: Instant,
        local_ip: IpAddr,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
        listener: bool,
    ) {
        self.stats.mptcp_join_syns += 1;
        let opt = match find_join(&tcp.extra, "SYN") {
            Ok(o @ MptcpOption::MpJoin(MpJoin::Syn { .. })) => o,
            Ok(_) => {
                return self.refuse_join(
                    local_ip,
                    remote,
                    tcp,
                    JoinError::WrongForm {
                        step: "SYN",
                        expected: "12",
                    },
                )
            }
            Err(e) => return self.refuse_join(local_ip, remote, tcp, e),
        };
        let MptcpOption::MpJoin(MpJoin::Syn { token, .. }) = opt else {
            return;
        };
        let h = self.tokens.as_deref().and_then(|t| t.get(token));
        let port = tcp.dst_port;
        // Without a listener, only a connection on that port takes the join.
        let h = h.filter(|&h| listener || self.conn(h).is_some_and(|c| c.local().port() == port));
        let Some(h) = h else {
            return self.refuse_join(local_ip, remote, tcp, JoinError::UnknownToken { token });
        };
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return;
        }
        let local = SocketAddr::new(local_ip, port);
        let Some(slot) = self.slot_mut(h) else {
            return;
        };
        let admit = match slot.conn.mp_join_admit(local, remote, &opt) {
            Ok(a) => a,
            Err(e) => return self.refuse_join(local_ip, remote, tcp, e),
        };
        let Some(cfg) = slot.conn.mp_sub_config() else {
            return;
        };
        let setup = self.setup(now, local, remote, cfg);
        self.mp_couple(h, &setup);
        let Some(slot) = self.slot_mut(h) else {
            return;
        };
        slot.conn.mp_add_passive_subflow(now, setup, tcp, admit);
        self.table.insert((port, remote), h);
        self.last_hit = None;
        self.stats.mptcp_joins_accepted += 1;
        self.touch(h);
    }

    /// A refused MP_JOIN SYN: a RST with MP_TCPRST (RFC 8684 §3.6) and the reason
    /// Linux sends, "MPTCP-specific error" for an unknown token (Linux
    /// `MPJoinNoTokenFound`), "administratively prohibited" at the subflow limit
    /// (`MPJoinRejected`). The reply queue's bound (`MAX_PENDING_RSTS`) holds.
    fn refuse_join(
        &mut self,
        local_ip: IpAddr,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
        why: JoinError,
    ) {
        self.stats.mptcp_joins_refused += 1;
        match why {
            JoinError::UnknownToken { .. } => self.stats.mptcp_join_no_token += 1,
            JoinError::LimitReached => self.stats.mptcp_join_rejected += 1,
            _ => {}
        }
        if self.replies.len() >= MAX_PENDING_RSTS {
            return;
        }
        self.replies.push_back(Reply {
            local_ip,
            remote,
            local_port: tcp.dst_port,
            seq: SeqNum(0),
            ack: Some(tcp.seq + tcp.seg_len()),
            mp_reset: Some(MpTcpRst {
                transient: false,
                reason: why.reset_reason(),
            }),
        });
    }
}
