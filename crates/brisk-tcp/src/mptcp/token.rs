//! The token table (RFC 8684 §3.2): which connection a SYN's MP_JOIN token names.
//!
//! A token is the top 32 bits of SHA-256 of the *local* key, so every token in the
//! table came from a key this host drew at random: the slots they land in are
//! uniform whatever the peer does, and a lookup of a token the peer made up probes
//! a short run like any other. Open addressing with linear probing and
//! backward-shift deletion (no tombstones, so removals never slow lookups), in one
//! array that doubles as tokens are inserted (at connection creation), up to twice the
//! limit: no allocation and O(1) expected work per packet.
//!
//! # The limit
//! Linux has no count limit: `mptcp_token_init` sizes its hash (`token_hash`) from
//! the machine's memory with `alloc_large_system_hash`, and every MPTCP socket
//! holds one token. brisk bounds it explicitly: a table holds at most `limit`
//! tokens, which the endpoint sets to its `max_connections` (one token per MPTCP
//! connection; a half-open MP_CAPABLE server connection takes its token when the
//! third ACK arrives, as `mptcp_token_new_request` only checks the token at SYN time
//! and `mptcp_token_accept` inserts it later). [`DEFAULT_LIMIT`] is
//! `EndpointConfig::max_connections`'s default; [`MAX_LIMIT`] caps what a
//! configuration can ask (16 Mi slots of 12 bytes: 200 MB). The array grows to at
//! most twice the limit's slots (rounded up to a power of two), keeping the load at
//! most 1/2.
//!
//! # Collisions
//! Two connections with one token would make joins ambiguous, so an insert of a token
//! present is refused ([`TokenError::Collision`]) and the caller draws another key:
//! [`TokenTable::insert_new_key`] does that up to [`MAX_RETRIES`] times, as
//! `mptcp_token_new_connect` (net/mptcp/token.c, `TOKEN_MAX_RETRIES` 4); a server's
//! `mptcp_token_new_request` retries the same way in `subflow_init_req`.

use brisk_wire::mptcp::crypto;
use std::fmt;

/// `EndpointConfig::max_connections`'s default: one token per possible connection.
pub const DEFAULT_LIMIT: usize = 65_536;
/// The largest limit a table accepts (its array is at most twice this).
pub const MAX_LIMIT: usize = 1 << 23;
/// Slots a new table starts with (it doubles as tokens arrive, up to twice the limit):
/// an endpoint with few MPTCP connections keeps a small table.
pub const INITIAL_SLOTS: usize = 64;
/// Keys drawn before giving up on a free token (Linux `TOKEN_MAX_RETRIES`).
pub const MAX_RETRIES: usize = 4;

/// Why a token was not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// Another connection holds this token: draw another key.
    Collision { token: u32 },
    /// The table holds its limit of tokens [Linux: `-ENOMEM`, counted by brisk].
    Full { limit: usize },
    /// [`TokenTable::insert_new_key`] drew [`MAX_RETRIES`] keys, all colliding.
    Exhausted,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Collision { token } => {
                write!(f, "MPTCP token {token:#010x} is held by another connection")
            }
            TokenError::Full { limit } => {
                write!(f, "MPTCP token table full: at most {limit} connections")
            }
            TokenError::Exhausted => write!(
                f,
                "MPTCP token table: {MAX_RETRIES} keys drawn, every token taken"
            ),
        }
    }
}

impl std::error::Error for TokenError {}

/// Token → connection handle `H`, bounded. See the module doc.
#[derive(Clone, Debug)]
pub struct TokenTable<H> {
    slots: Box<[Option<(u32, H)>]>,
    mask: usize,
    len: usize,
    limit: usize,
    /// Inserts refused because the table was full.
    pub full_refusals: u64,
    /// Inserts refused because the token was taken.
    pub collisions: u64,
}

impl<H: Copy> TokenTable<H> {
    /// A table for at most `limit` tokens (clamped to `1..=MAX_LIMIT`). The array
    /// starts at [`INITIAL_SLOTS`] and doubles as tokens arrive (at connection
    /// creation, never per packet), up to twice the limit.
    pub fn new(limit: usize) -> TokenTable<H> {
        let limit = limit.clamp(1, MAX_LIMIT);
        let cap = (limit * 2).next_power_of_two().min(INITIAL_SLOTS);
        TokenTable {
            slots: vec![None; cap].into_boxed_slice(),
            mask: cap - 1,
            len: 0,
            limit,
            full_refusals: 0,
            collisions: 0,
        }
    }

    fn home(&self, token: u32) -> usize {
        token as usize & self.mask
    }

    /// The slot holding `token`, probing from its home slot to the first empty one.
    fn find(&self, token: u32) -> Option<usize> {
        let mut i = self.home(token);
        loop {
            match self.slots[i] {
                None => return None,
                Some((t, _)) if t == token => return Some(i),
                Some(_) => i = (i + 1) & self.mask,
            }
        }
    }

    /// Stores `token` → `h`; refused if the token is held (the caller draws another
    /// key) or the table is full.
    pub fn insert(&mut self, token: u32, h: H) -> Result<(), TokenError> {
        if self.find(token).is_some() {
            self.collisions += 1;
            return Err(TokenError::Collision { token });
        }
        if self.len >= self.limit {
            self.full_refusals += 1;
            return Err(TokenError::Full { limit: self.limit });
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        // The load is at most 1/2, so an empty slot exists.
        let mut i = self.home(token);
        while self.slots[i].is_some() {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = Some((token, h));
        self.len += 1;
        Ok(())
    }

    /// Doubles the array and places every token again.
    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![None; cap].into_boxed_slice());
        self.mask = cap - 1;
        for (t, h) in old.iter().flatten() {
            let mut i = self.home(*t);
            while self.slots[i].is_some() {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = Some((*t, *h));
        }
    }

    /// Draws keys from `draw` until one's token is free (at most [`MAX_RETRIES`]),
    /// stores it for `h` and returns `(key, token)`. A full table is reported at once.
    pub fn insert_new_key(
        &mut self,
        mut draw: impl FnMut() -> u64,
        h: H,
    ) -> Result<(u64, u32), TokenError> {
        for _ in 0..MAX_RETRIES {
            let key = draw();
            let token = crypto::token(key);
            match self.insert(token, h) {
                Ok(()) => return Ok((key, token)),
                Err(TokenError::Collision { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(TokenError::Exhausted)
    }

    /// The connection holding `token` (a SYN's MP_JOIN).
    pub fn get(&self, token: u32) -> Option<H> {
        self.find(token).and_then(|i| self.slots[i].map(|(_, h)| h))
    }

    pub fn contains(&self, token: u32) -> bool {
        self.find(token).is_some()
    }

    /// Forgets `token` (the connection closed); backward-shift deletion keeps every
    /// other token reachable from its home slot.
    pub fn remove(&mut self, token: u32) -> Option<H> {
        let mut hole = self.find(token)?;
        let h = self.slots[hole].take().map(|(_, h)| h);
        self.len -= 1;
        let mut i = (hole + 1) & self.mask;
        while let Some((t, _)) = self.slots[i] {
            let home = self.home(t);
            // Move the entry back into the hole unless its home lies cyclically in
            // (hole, i]: then it is already as close to home as it can be.
            let dist_i = i.wrapping_sub(home) & self.mask;
            let dist_hole = hole.wrapping_sub(home) & self.mask;
            if dist_hole < dist_i {
                self.slots[hole] = self.slots[i].take();
                hole = i;
            }
            i = (i + 1) & self.mask;
        }
        h
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes of the slot array (for the endpoint's memory accounting).
    pub fn memory(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }
}

#[cfg(test)]
mod tests;
