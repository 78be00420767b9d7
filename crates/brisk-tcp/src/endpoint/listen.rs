//! Passive opens: listeners, the SYN and SYN-queue paths (SYN cookies, RFC 4987),
//! accepting, and the RST for a segment to no socket (RFC 9293 §3.10.7.1).

use super::*;

impl Endpoint {
    /// Listens on `port`; the connections it accepts share one copy of `config`
    /// while they do not change it.
    pub fn listen(&mut self, port: u16, backlog: usize, config: Config) -> Result<(), ConnError> {
        self.listen_shared(port, backlog, Arc::new(config))
    }

    /// [`listen`](Self::listen) with a config the caller may share further.
    pub fn listen_shared(
        &mut self,
        port: u16,
        backlog: usize,
        config: Arc<Config>,
    ) -> Result<(), ConnError> {
        if port == 0 {
            return Err(ConnError::Unsupported);
        }
        if self.listeners.contains_key(&port) {
            return Err(ConnError::AddrInUse);
        }
        self.listeners.insert(
            port,
            Listener {
                backlog: backlog.max(1),
                config,
                syn_queue: 0,
                accept: VecDeque::new(),
                last_overflow: None,
                tfo_queue: None,
            },
        );
        Ok(())
    }

    /// A listener's configuration, for connections it accepts from now on.
    pub fn listen_config(&self, port: u16) -> Option<&Config> {
        self.listeners.get(&port).map(|l| &*l.config)
    }

    /// Replaces a listener's configuration (a socket option set on a listening
    /// socket): connections whose SYN arrives later take it; ones already in the SYN
    /// or accept queue keep theirs, as Linux's children copy the listener at SYN time.
    pub fn set_listen_config(&mut self, port: u16, config: Config) -> Result<(), ConnError> {
        let l = self
            .listeners
            .get_mut(&port)
            .ok_or(ConnError::Unsupported)?;
        l.config = Arc::new(config);
        Ok(())
    }

    /// Stops listening on `port` (Linux `inet_csk_listen_stop`, a listener's
    /// `close`): connections in the accept queue — established ones and Fast Open
    /// children in SYN-RECEIVED — are reset (`inet_child_forget` → `tcp_disconnect`
    /// sends RST), half-open ones in the SYN queue are dropped without a word (Linux's
    /// request socks). Their `Closed` events follow. False: no listener there.
    pub fn unlisten(&mut self, port: u16) -> bool {
        if self.listeners.remove(&port).is_none() {
            return false;
        }
        let children: Vec<(ConnHandle, bool)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let s = s.as_ref()?;
                (s.listener == Some(port)).then_some((ConnHandle(i as u32), s.queued))
            })
            .collect();
        for (h, queued) in children {
            if let Some(slot) = self.slot_mut(h) {
                slot.listener = None;
                slot.queued = false;
                slot.tfo_pending = None;
            }
            if let Some(c) = self.conn_mut(h) {
                c.listener_closed(queued);
            }
        }
        true
    }

    /// Takes the next established connection from `port`'s accept queue.
    pub fn accept(&mut self, port: u16) -> Option<ConnHandle> {
        let l = self.listeners.get_mut(&port)?;
        let h = l.accept.pop_front()?;
        if let Some(slot) = self.slot_mut(h) {
            slot.queued = false;
            slot.listener = None;
        }
        // Events that arrived before accept (data, FIN, close) are delivered now.
        self.touch(h);
        Some(h)
    }

    /// Linux `tcp_check_req` on a full accept queue (`listen_overflow`): the ACK that
    /// would complete a passive handshake is dropped, so the connection stays in
    /// SYN-RECEIVED and retransmits its SYN-ACK until the application makes room or
    /// the SYN-ACK retries run out. Keeps the accept queue within the backlog.
    pub(super) fn accept_overflow(&self, h: ConnHandle, tcp: &TcpRepr<'_>) -> bool {
        let Some(slot) = self.slots.get(h.0 as usize).and_then(|s| s.as_ref()) else {
            return false;
        };
        let f = tcp.flags;
        let completes = f.ack() && !f.rst() && !f.syn();
        completes
            && !slot.queued
            && slot.conn.state() == State::SynReceived
            && slot
                .listener
                .and_then(|port| self.listeners.get(&port))
                .is_some_and(|l| l.accept.len() >= l.backlog)
    }

    /// RFC 9293 §3.10.7.2: a SYN to a listener creates a connection in SYN-RECEIVED,
    /// within the backlog and table limits.
    /// A SYN to a listener, sent to our address `local_ip`: the connection (and its
    /// SYN-ACK) answers from that address, as Linux's request sock takes `ir_loc_addr`
    /// from the SYN's destination (a multi-homed endpoint has several addresses).
    pub(super) fn on_listen_syn(
        &mut self,
        now: Instant,
        local_ip: IpAddr,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
    ) {
        let port = tcp.dst_port;
        let Some(l) = self.listeners.get(&port) else {
            return;
        };
        if l.config.mptcp.is_some() && super::join::is_mp_join(tcp) {
            self.on_join_syn(now, local_ip, remote, tcp, true);
            return;
        }
        if l.accept.len() >= l.backlog {
            self.stats.drop_backlog_full += 1;
            return;
        }
        let always = self.config.syncookies && self.config.syncookies_always;
        if l.syn_queue >= l.backlog || always {
            self.on_syn_queue_full(now, local_ip, remote, tcp);
            return;
        }
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return;
        }
        // Inner Space (`dual.rs`): a SYN-O is reset, a SYN-U read past its InSpace.
        let mut role = None;
        let shifted;
        let mut tcp = tcp;
        if let Some(c) = l.config.inspace.as_deref().filter(|c| c.server).copied() {
            match self.inspace_listen_syn(tcp, &c) {
                super::dual::ListenSyn::Reset => {
                    self.reply_rst(local_ip, port, remote, tcp);
                    return;
                }
                super::dual::ListenSyn::Upgraded(s) => {
                    shifted = s;
                    tcp = &shifted;
                    role = Some(c);
                }
                super::dual::ListenSyn::Ordinary => {}
            }
        }
        let Some(l) = self.listeners.get(&port) else {
            return;
        };
        let config = l.config.clone();
        let local = SocketAddr::new(local_ip, port);
        let setup = self.setup(now, local, remote, config);
        let mut conn = Connection::accept(now, setup, tcp);
        if let Some(c) = role {
            conn.set_inspace(crate::conn::InSpaceRole::Server, &c);
            conn.inspace_server_data(&tcp.extra, tcp.payload.len());
        }
        if conn.config.fastopen.is_some() && self.tfo_listen_syn(now, port, &mut conn, tcp) {
            self.tfo_accept_child(port, conn);
            return;
        }
        if let Some(l) = self.listeners.get_mut(&port) {
            l.syn_queue += 1;
        }
        let h = self.insert(conn, Some(port));
        self.mp_register(h);
        self.touch(h);
    }

    /// A Fast Open child (its SYN's data accepted): on the accept queue at once,
    /// readable in SYN-RECEIVED, as Linux's `tcp_fastopen_create_child` with
    /// `inet_csk_reqsk_queue_add`. It takes no SYN-queue place; it holds a slot
    /// of the listener's Fast Open queue until its handshake completes.
    fn tfo_accept_child(&mut self, port: u16, conn: Connection) {
        let h = self.insert(conn, Some(port));
        if let Some(slot) = self.slot_mut(h) {
            slot.queued = true;
            slot.tfo_pending = Some(port);
        }
        if let Some(l) = self.listeners.get_mut(&port) {
            l.accept.push_back(h);
            self.events.push_back((h, Event::Incoming { port }));
        }
        self.touch(h);
    }

    /// Linux `tcp_conn_request` with `want_cookie`: a SYN that finds the SYN queue full
    /// gets a cookie SYN-ACK (no state kept), or with cookies off is dropped.
    pub(super) fn on_syn_queue_full(
        &mut self,
        now: Instant,
        local_ip: IpAddr,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
    ) {
        let port = tcp.dst_port;
        let local = SocketAddr::new(local_ip, port);
        let Some(l) = self.listeners.get_mut(&port) else {
            return;
        };
        if !self.config.syncookies {
            self.stats.drop_backlog_full += 1;
            return;
        }
        l.last_overflow = Some(now);
        if self
            .cookies
            .queue_synack(now, local, remote, &l.config, tcp)
        {
            self.stats.syncookies_sent += 1;
        } else {
            self.stats.drop_backlog_full += 1;
        }
    }

    /// Linux `cookie_v4_check`: an ACK (no SYN, no RST) for no connection, to a
    /// listener whose SYN queue overflowed lately, is checked as a SYN cookie. Valid:
    /// the connection is created and handed the ACK (and its data), unless the accept
    /// queue or table is full (dropped; the peer's retransmission may find room).
    /// Invalid: counted and answered with an RST. False if not checked at all.
    pub(super) fn on_cookie_ack(
        &mut self,
        now: Instant,
        ecn: Ecn,
        dscp: u8,
        local_ip: IpAddr,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
    ) -> bool {
        let f = tcp.flags;
        let port = tcp.dst_port;
        let Some(l) = self.listeners.get(&port) else {
            return false;
        };
        let recent = l
            .last_overflow
            .is_some_and(|t| now.saturating_duration_since(t) <= syncookie::COOKIE_VALID);
        if !self.config.syncookies || !recent || !f.ack() || f.syn() || f.rst() {
            return false;
        }
        let local = SocketAddr::new(local_ip, port);
        let opts = match self.cookies.validate(now, local, remote, &l.config, tcp) {
            Ok(o) => o,
            Err(_) => {
                self.stats.syncookies_failed += 1;
                self.reply_rst(local_ip, port, remote, tcp);
                return true;
            }
        };
        self.stats.syncookies_validated += 1;
        if l.accept.len() >= l.backlog {
            self.stats.drop_backlog_full += 1;
            return true;
        }
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return true;
        }
        let config = l.config.clone();
        let ts_offset = self.cookies.ts_offset(local.ip(), remote.ip());
        let mut setup = self.setup(now, local, remote, config);
        setup.iss = tcp.ack.0.wrapping_sub(1);
        let conn = Connection::accept_cookie(now, setup, tcp, &opts, ts_offset);
        if let Some(l) = self.listeners.get_mut(&port) {
            l.syn_queue += 1;
        }
        let h = self.insert(conn, Some(port));
        self.deliver(now, h, ecn, dscp, remote, tcp);
        // The ACK acknowledges the cookie exactly and sits at RCV.NXT, so it always
        // completes the handshake. Were that ever not so, the connection would wait
        // in SYN-RECEIVED with no SYN-ACK to retransmit: remove it rather than leak.
        if self
            .conn(h)
            .is_some_and(|c| c.state() == State::SynReceived)
        {
            self.reap(h);
        }
        true
    }

    /// RFC 9293 §3.10.7.1: never answer an RST; an ACK gets `<SEQ=SEG.ACK><CTL=RST>`,
    /// anything else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`.
    pub(super) fn reply_rst(
        &mut self,
        local_ip: IpAddr,
        local_port: u16,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
    ) {
        if tcp.flags.rst() {
            return;
        }
        if self.replies.len() >= MAX_PENDING_RSTS {
            return;
        }
        let reply = if tcp.flags.ack() {
            Reply {
                local_ip,
                remote,
                local_port,
                seq: tcp.ack,
                ack: None,
                mp_reset: None,
            }
        } else {
            Reply {
                local_ip,
                remote,
                local_port,
                seq: SeqNum(0),
                ack: Some(tcp.seq + tcp.seg_len()),
                mp_reset: None,
            }
        };
        self.replies.push_back(reply);
    }
}
