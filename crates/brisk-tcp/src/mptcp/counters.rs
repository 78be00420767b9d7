//! MPTCP counters named as Linux's MIB (`/proc/net/netstat`, line `MPTcpExt`, the
//! strings of net/mptcp/mib.c; `nstat` prints them as `MPTcpExt<Name>`), so brisk's
//! endpoint statistics can be printed beside a Linux peer's and compared name by
//! name. Only the counters brisk has a cause for are here; a few brisk-only ones
//! (hostile input Linux drops without counting) are marked [`Counter::linux`] false.
//!
//! The decision pieces ([`super::join`], [`super::control`], [`super::dsn`]) return
//! verdicts; [`MptcpCounters`] has one `count_*` per verdict type so every caller
//! counts the same way.

use super::dsn::MapVerdict;
use super::join::JoinError;
use super::recv::Insert;

macro_rules! counters {
    ($( $(#[$doc:meta])* $field:ident = $name:literal, $linux:literal; )*) => {
        /// Per-connection (or, summed with [`MptcpCounters::add`], per-endpoint)
        /// MPTCP counters. Field docs give the Linux meaning.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct MptcpCounters {
            $( $(#[$doc])* pub $field: u64, )*
        }

        /// Every counter's name, in Linux's `MPTcpExt` order (brisk-only ones last).
        pub const COUNTERS: &[Counter] = &[ $( Counter { name: $name, linux: $linux }, )* ];

        impl MptcpCounters {
            /// (name, value) for every counter, in [`COUNTERS`] order.
            pub fn pairs(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
                let values = [ $( self.$field, )* ];
                COUNTERS.iter().map(|c| c.name).zip(values)
            }

            /// Adds `o` into `self` (endpoint totals over connections).
            pub fn add(&mut self, o: &MptcpCounters) {
                $( self.$field += o.$field; )*
            }

            /// The value of the counter called `name` (Linux's spelling).
            pub fn get(&self, name: &str) -> Option<u64> {
                match name {
                    $( $name => Some(self.$field), )*
                    _ => None,
                }
            }
        }
    };
}

/// A counter's name and whether Linux has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub name: &'static str,
    /// Linux 6.18 has a counter of this name (else it is brisk's own).
    pub linux: bool,
}

counters! {
    /// SYN with MP_CAPABLE received.
    mp_capable_syn_rx = "MPCapableSYNRX", true;
    /// SYN with MP_CAPABLE sent.
    mp_capable_syn_tx = "MPCapableSYNTX", true;
    /// SYN/ACK with MP_CAPABLE received.
    mp_capable_synack_rx = "MPCapableSYNACKRX", true;
    /// Third ACK with MP_CAPABLE received.
    mp_capable_ack_rx = "MPCapableACKRX", true;
    /// Server fell back: third ACK without MP_CAPABLE.
    mp_capable_fallback_ack = "MPCapableFallbackACK", true;
    /// Client fell back: SYN/ACK without MP_CAPABLE.
    mp_capable_fallback_synack = "MPCapableFallbackSYNACK", true;
    /// Data re-injected at the MPTCP level.
    mptcp_retrans = "MPTCPRetrans", true;
    /// SYN with MP_JOIN whose token names no connection.
    join_no_token_found = "MPJoinNoTokenFound", true;
    /// SYN with MP_JOIN received.
    join_syn_rx = "MPJoinSynRx", true;
    /// ... with the backup flag.
    join_syn_backup_rx = "MPJoinSynBackupRx", true;
    /// SYN/ACK with MP_JOIN received (and verified).
    join_synack_rx = "MPJoinSynAckRx", true;
    /// ... with the backup flag.
    join_synack_backup_rx = "MPJoinSynAckBackupRx", true;
    /// SYN/ACK with a wrong MP_JOIN HMAC.
    join_synack_hmac_failure = "MPJoinSynAckHMacFailure", true;
    /// Third ACK with MP_JOIN received (and verified).
    join_ack_rx = "MPJoinAckRx", true;
    /// Third ACK with a wrong MP_JOIN HMAC.
    join_ack_hmac_failure = "MPJoinAckHMacFailure", true;
    /// Join refused: subflow limit reached or the connection cannot take one.
    join_rejected = "MPJoinRejected", true;
    /// SYN with MP_JOIN sent.
    join_syn_tx = "MPJoinSynTx", true;
    /// A mapping that overlaps a held one but maps the bytes differently.
    dss_not_matching = "DSSNotMatching", true;
    /// Data checksum failed on a lone subflow: fell back.
    dss_corruption_fallback = "DSSCorruptionFallback", true;
    /// Data checksum failed with several subflows: the subflow was reset.
    dss_corruption_reset = "DSSCorruptionReset", true;
    /// Infinite mapping sent.
    infinite_map_tx = "InfiniteMapTx", true;
    /// Infinite mapping received.
    infinite_map_rx = "InfiniteMapRx", true;
    /// A mapping that does not cover the segment carrying it.
    dss_no_match_tcp = "DSSNoMatchTCP", true;
    /// DSS checksum wrong.
    data_csum_err = "DataCsumErr", true;
    /// Data stored out of order (Linux splits tail/other; brisk counts both here).
    ofo_queue = "OFOQueue", true;
    /// Data outside the data-level window.
    no_dss_in_window = "NoDSSInWindow", true;
    /// Data wholly duplicate at the data level.
    duplicate_data = "DuplicateData", true;
    /// ADD_ADDR (echo flag 0) received with a good HMAC.
    add_addr = "AddAddr", true;
    /// ADD_ADDR sent.
    add_addr_tx = "AddAddrTx", true;
    /// ADD_ADDR echo received.
    echo_add = "EchoAdd", true;
    /// ADD_ADDR echo sent.
    echo_add_tx = "EchoAddTx", true;
    /// ADD_ADDR received with a port.
    port_add = "PortAdd", true;
    /// ADD_ADDR dropped unprocessed (Linux: another one still pending; brisk: over
    /// the rate, see `control::AddAddrGate`).
    add_addr_drop = "AddAddrDrop", true;
    /// REMOVE_ADDR received.
    rm_addr = "RmAddr", true;
    /// REMOVE_ADDR dropped unprocessed.
    rm_addr_drop = "RmAddrDrop", true;
    /// REMOVE_ADDR sent.
    rm_addr_tx = "RmAddrTx", true;
    /// Subflows closed by a REMOVE_ADDR.
    rm_subflow = "RmSubflow", true;
    /// MP_PRIO sent.
    mp_prio_tx = "MPPrioTx", true;
    /// MP_PRIO received.
    mp_prio_rx = "MPPrioRx", true;
    /// MP_FAIL sent.
    mp_fail_tx = "MPFailTx", true;
    /// MP_FAIL received.
    mp_fail_rx = "MPFailRx", true;
    /// MP_FASTCLOSE sent.
    mp_fastclose_tx = "MPFastcloseTx", true;
    /// MP_FASTCLOSE received with our key.
    mp_fastclose_rx = "MPFastcloseRx", true;
    /// MP_TCPRST sent.
    mp_rst_tx = "MPRstTx", true;
    /// MP_TCPRST received.
    mp_rst_rx = "MPRstRx", true;
    /// Fell back: data without a DSS on the first subflow.
    mp_capable_data_fallback = "MPCapableDataFallback", true;
    /// Fell back at the DSS (infinite mapping or a missing DSS).
    dss_fallback = "DssFallback", true;
    /// brisk: ADD_ADDR with a wrong HMAC, dropped (Linux drops it uncounted).
    add_addr_hmac_failure = "AddAddrHMacFailure", false;
    /// brisk: MP_FASTCLOSE whose key is not ours, ignored (Linux: uncounted).
    fastclose_bad_key = "FastcloseBadKey", false;
    /// brisk: MP_FAIL ignored (several subflows: the peer resets the subflow itself).
    mp_fail_ignored = "MPFailIgnored", false;
    /// brisk: a new connection found the token table full.
    token_table_full = "TokenTableFull", false;
    /// brisk: data-level segments dropped at the reorder buffer's range limit.
    ofo_ranges_full = "OFORangesFull", false;
    /// brisk: mappings dropped at the per-subflow mapping table's limit.
    map_table_full = "MapTableFull", false;
}

impl MptcpCounters {
    /// Writes the counters as `nstat` prints Linux's (`MPTcpExt<Name>` and the value,
    /// one a line; `nstat -a` shows zeros too, as `zeros` does here), so the two can
    /// be diffed. brisk-only counters are written as `BriskMPTcp<Name>`.
    pub fn write_nstat(&self, out: &mut impl std::fmt::Write, zeros: bool) -> std::fmt::Result {
        for (c, (_, v)) in COUNTERS.iter().zip(self.pairs()) {
            if v == 0 && !zeros {
                continue;
            }
            let prefix = if c.linux { "MPTcpExt" } else { "BriskMPTcp" };
            writeln!(out, "{:<40}{v:<16}0.0", format!("{prefix}{}", c.name))?;
        }
        Ok(())
    }

    /// Counts a failed or refused join step.
    pub fn count_join_error(&mut self, e: &JoinError) {
        match e {
            JoinError::UnknownToken { .. } => self.join_no_token_found += 1,
            JoinError::LimitReached => self.join_rejected += 1,
            JoinError::BadSynAckHmac { .. } => self.join_synack_hmac_failure += 1,
            JoinError::BadAckHmac => self.join_ack_hmac_failure += 1,
            // Malformed or missing MP_JOIN: Linux resets without a dedicated counter.
            JoinError::Missing { .. }
            | JoinError::NotMpJoin { .. }
            | JoinError::WrongForm { .. }
            | JoinError::TokenMismatch { .. } => {}
        }
    }

    /// Counts a received mapping's verdict (`dsn::RecvMap::on_mapping`).
    pub fn count_mapping(&mut self, v: MapVerdict) {
        match v {
            MapVerdict::Inconsistent => self.dss_not_matching += 1,
            MapVerdict::NotCovering => self.dss_no_match_tcp += 1,
            MapVerdict::OutsideWindow => self.no_dss_in_window += 1,
            MapVerdict::Infinite => self.infinite_map_rx += 1,
            MapVerdict::TableFull => self.map_table_full += 1,
            MapVerdict::New
            | MapVerdict::Duplicate
            | MapVerdict::Extended
            | MapVerdict::DataFinOnly { .. } => {}
        }
    }

    /// Counts a data segment's fate in the data-level receive buffer
    /// (`recv::DataRecv::insert`).
    pub fn count_insert(&mut self, v: Insert) {
        match v {
            Insert::Stored { in_order: false } => self.ofo_queue += 1,
            Insert::Duplicate => self.duplicate_data += 1,
            Insert::OutsideWindow => self.no_dss_in_window += 1,
            Insert::RangesFull => self.ofo_ranges_full += 1,
            Insert::Stored { in_order: true } | Insert::AfterDataFin => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MPTcpExt header of this machine's kernel (6.18), `/proc/net/netstat`.
    const LINUX_6_18: &str = "MPCapableSYNRX MPCapableSYNTX MPCapableSYNACKRX MPCapableACKRX \
        MPCapableFallbackACK MPCapableFallbackSYNACK MPCapableSYNTXDrop MPCapableSYNTXDisabled \
        MPCapableEndpAttempt MPFallbackTokenInit MPTCPRetrans MPJoinNoTokenFound MPJoinSynRx \
        MPJoinSynBackupRx MPJoinSynAckRx MPJoinSynAckBackupRx MPJoinSynAckHMacFailure \
        MPJoinAckRx MPJoinAckHMacFailure MPJoinRejected MPJoinSynTx MPJoinSynTxCreatSkErr \
        MPJoinSynTxBindErr MPJoinSynTxConnectErr DSSNotMatching DSSCorruptionFallback \
        DSSCorruptionReset InfiniteMapTx InfiniteMapRx DSSNoMatchTCP DataCsumErr OFOQueueTail \
        OFOQueue OFOMerge NoDSSInWindow DuplicateData AddAddr AddAddrTx AddAddrTxDrop EchoAdd \
        EchoAddTx EchoAddTxDrop PortAdd AddAddrDrop MPJoinPortSynRx MPJoinPortSynAckRx \
        MPJoinPortAckRx MismatchPortSynRx MismatchPortAckRx RmAddr RmAddrDrop RmAddrTx \
        RmAddrTxDrop RmSubflow MPPrioTx MPPrioRx MPFailTx MPFailRx MPFastcloseTx MPFastcloseRx \
        MPRstTx MPRstRx SubflowStale SubflowRecover SndWndShared RcvWndShared \
        RcvWndConflictUpdate RcvWndConflict MPCurrEstab Blackhole MPCapableDataFallback \
        MD5SigFallback DssFallback SimultConnectFallback FallbackFailed WinProbe";

    #[test]
    fn names_are_linux_names_in_linux_order() {
        let linux: Vec<&str> = LINUX_6_18.split_whitespace().collect();
        let ours: Vec<&str> = COUNTERS
            .iter()
            .filter(|c| c.linux)
            .map(|c| c.name)
            .collect();
        let mut last = None;
        for n in &ours {
            let at = linux.iter().position(|l| l == n);
            assert!(at.is_some(), "{n} is not a Linux 6.18 MPTcpExt counter");
            assert!(at > last, "{n} out of Linux's order");
            last = at;
        }
        for c in COUNTERS.iter().filter(|c| !c.linux) {
            assert!(!linux.contains(&c.name), "{} is Linux's", c.name);
        }
        let mut all: Vec<&str> = COUNTERS.iter().map(|c| c.name).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), COUNTERS.len(), "names are unique");
    }

    #[test]
    fn pairs_get_and_add_agree() {
        let mut a = MptcpCounters::default();
        a.count_join_error(&JoinError::BadAckHmac);
        a.count_join_error(&JoinError::UnknownToken { token: 1 });
        a.count_mapping(MapVerdict::Inconsistent);
        a.count_mapping(MapVerdict::OutsideWindow);
        a.count_insert(Insert::OutsideWindow);
        a.count_insert(Insert::Stored { in_order: false });
        let mut b = a;
        b.add(&a);
        assert_eq!(b.get("MPJoinAckHMacFailure"), Some(2));
        assert_eq!(b.get("MPJoinNoTokenFound"), Some(2));
        assert_eq!(b.get("DSSNotMatching"), Some(2));
        assert_eq!(b.get("NoDSSInWindow"), Some(4));
        assert_eq!(b.get("OFOQueue"), Some(2));
        assert_eq!(b.get("NoSuchCounter"), None);
        let pairs: Vec<_> = b.pairs().collect();
        assert_eq!(pairs.len(), COUNTERS.len());
        assert_eq!(pairs.iter().map(|p| p.1).sum::<u64>(), 12);
        for (n, v) in pairs {
            assert_eq!(b.get(n), Some(v));
        }
        let mut out = String::new();
        b.write_nstat(&mut out, false).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert!(lines[0].starts_with("MPTcpExtMPJoinNoTokenFound") && lines[0].contains(" 2 "));
        assert!(out.contains("BriskMPTcpOFORangesFull") || !out.contains("OFORangesFull"));
        let mut all = String::new();
        b.write_nstat(&mut all, true).unwrap();
        assert_eq!(all.lines().count(), COUNTERS.len());
    }
}
