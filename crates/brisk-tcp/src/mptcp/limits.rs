//! Every bound MPTCP puts on what a peer can make brisk hold, in one place, each
//! tested under hostile input in `limits/tests.rs` (issue 31 §4). The constants live
//! with the structures they bound; this module names them together, and
//! docs/security.md ("MPTCP") lists them with what each hostile input gets.
//!
//! | bound | value | what a peer meets past it |
//! | --- | --- | --- |
//! | [`MAX_SUBFLOWS`] subflows per connection | 9 (1 + Linux's largest `subflows` limit, 8) | join refused: RST with MP_TCPRST "administratively prohibited", `MPJoinRejected` |
//! | `Limits::subflows` (per connection, default 2, ≤ [`PM_ADDR_MAX`]) | Linux's `ip mptcp limits` | the same |
//! | [`PM_ADDR_MAX`] remote addresses kept, local endpoints, announcements awaiting echo | 8 (`MPTCP_PM_ADDR_MAX`) | ADD_ADDR echoed, not kept (`PmStats::add_addr_table_full`) |
//! | `Limits::add_addr_accepted` | default 0, ≤ 8 | ADD_ADDR echoed, not acted on |
//! | [`ADD_ADDR_BURST`] / [`ADD_ADDR_REFILL`] ADD_ADDR rate | 8, then one per 25 ms | dropped, not echoed, `AddAddrDrop` |
//! | [`PM_ACTION_QUEUE`] path-manager actions pending | 32 | action dropped, `PmStats::actions_dropped` |
//! | [`ADD_ADDR_RETRANS_MAX`] re-sends of our ADD_ADDR | 3 | stop re-sending |
//! | [`SIGNAL_QUEUE`] control options (ADD_ADDR, echo, REMOVE_ADDR) awaiting a pure ACK | 24 | option dropped, `signals_dropped` (an ADD_ADDR is re-sent by its timer) |
//! | [`MAX_REMOVE_IDS`] ids per REMOVE_ADDR | 8 (`MPTCP_RM_IDS_MAX`) | option ignored (parse error) |
//! | token table | `TokenTable::new(limit)`, [`TOKEN_DEFAULT_LIMIT`] = `max_connections`'s default, ≤ [`TOKEN_MAX_LIMIT`] | new MPTCP connection refused (`TokenError::Full`); a join's unknown token: RST, `MPJoinNoTokenFound` |
//! | token collisions | [`TOKEN_MAX_RETRIES`] key draws | connection opened without MPTCP (Linux `mptcp_token_new_connect` fails the same way) |
//! | `SendMap` / `RecvMap` mappings per subflow | `limit` at construction (the connection's choice) | send: `MapError::Full` (the sender waits); receive: `MapVerdict::TableFull`, segment dropped |
//! | mapping position | before the highest edge our segments promised: the data-level edge, or the Data ACK plus a subflow's receive capacity (a subflow advertises its own buffer; `conn/mp.rs` `mp_on_mapping`) | `MapVerdict::OutsideWindow`, subflow reset, `NoDSSInWindow` |
//! | [`MAX_MAP_LEN`] bytes per mapping | 65 535 (16-bit field) | `MapError::TooLong` |
//! | `RecvConfig::max_ranges` held out-of-order ranges | default 1024, ≤ 65 536 | segment dropped (`Insert::RangesFull`), re-sent by the peer's data-level timer |
//! | `RecvConfig::capacity` data-level buffer | default 4 MiB | data beyond the window dropped |
//! | [`MP_FAIL_TIMEOUT`] wait for an MP_FAIL answer | 120 s | subflow reset, "middlebox interference" |

pub use super::control::{ADD_ADDR_BURST, ADD_ADDR_REFILL, MP_FAIL_TIMEOUT};
pub use super::dsn::MAX_MAP_LEN;
pub use super::meta::SIGNAL_QUEUE;
pub use super::pm::{
    ACTION_QUEUE as PM_ACTION_QUEUE, ADDR_MAX as PM_ADDR_MAX, ADD_ADDR_RETRANS_MAX,
};
pub use super::token::{
    DEFAULT_LIMIT as TOKEN_DEFAULT_LIMIT, MAX_LIMIT as TOKEN_MAX_LIMIT,
    MAX_RETRIES as TOKEN_MAX_RETRIES,
};
pub use super::MAX_SUBFLOWS;
pub use brisk_wire::mptcp::MAX_REMOVE_IDS;

// Checked at compile time: the default fits the cap, and every subflow index fits
// `SubflowMask`'s 16 bits.
const _: () = assert!(TOKEN_DEFAULT_LIMIT <= TOKEN_MAX_LIMIT);
const _: () = assert!(MAX_SUBFLOWS <= 16);

#[cfg(test)]
mod tests;
