use super::*;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

#[test]
fn insert_lookup_remove() {
    let mut t: TokenTable<u32> = TokenTable::new(4);
    assert!(t.is_empty());
    t.insert(0xdead_beef, 7).unwrap();
    assert_eq!(t.get(0xdead_beef), Some(7));
    assert_eq!(t.get(0xdead_bee0), None);
    assert_eq!(t.remove(0xdead_beef), Some(7));
    assert_eq!(t.remove(0xdead_beef), None);
    assert_eq!(t.get(0xdead_beef), None);
    assert!(t.is_empty());
}

#[test]
fn a_collision_is_refused_and_counted() {
    let mut t: TokenTable<u32> = TokenTable::new(4);
    t.insert(5, 1).unwrap();
    assert_eq!(t.insert(5, 2), Err(TokenError::Collision { token: 5 }));
    assert_eq!(t.get(5), Some(1), "the first holder keeps its token");
    assert_eq!(t.collisions, 1);
    assert!(TokenError::Collision { token: 5 }
        .to_string()
        .contains("0x00000005"));
}

#[test]
fn a_full_table_refuses_and_recovers() {
    let mut t: TokenTable<u32> = TokenTable::new(3);
    for i in 0..3 {
        t.insert(i * 0x1000, i).unwrap();
    }
    assert_eq!(t.insert(99, 9), Err(TokenError::Full { limit: 3 }));
    assert_eq!(t.full_refusals, 1);
    assert_eq!(t.len(), 3);
    // A collision is reported before fullness (the caller's key retry is pointless
    // either way, but the reason is the precise one).
    assert_eq!(
        t.insert(0x1000, 9),
        Err(TokenError::Collision { token: 0x1000 })
    );
    t.remove(0x1000);
    t.insert(99, 9).unwrap();
    assert_eq!(t.get(99), Some(9));
    let e = TokenError::Full { limit: 3 }.to_string();
    assert!(e.contains("at most 3"), "{e}");
}

#[test]
fn new_key_retries_collisions_like_linux() {
    let mut t: TokenTable<u32> = TokenTable::new(8);
    // Hold the token of key 1, then offer key 1 again before key 2: the table draws
    // twice and keeps key 2.
    t.insert(crypto::token(1), 0).unwrap();
    let mut keys = [1u64, 2].into_iter();
    let (key, token) = t.insert_new_key(|| keys.next().unwrap(), 5).unwrap();
    assert_eq!((key, token), (2, crypto::token(2)));
    assert_eq!(t.get(token), Some(5));
    // Only colliding keys: given up after MAX_RETRIES draws, as TOKEN_MAX_RETRIES.
    let mut draws = 0;
    let r = t.insert_new_key(
        || {
            draws += 1;
            1
        },
        6,
    );
    assert_eq!(r, Err(TokenError::Exhausted));
    assert_eq!(draws, MAX_RETRIES);
}

#[test]
fn limits_are_clamped_and_memory_is_bounded() {
    let t: TokenTable<u32> = TokenTable::new(0);
    assert_eq!(t.limit(), 1);
    let t: TokenTable<u32> = TokenTable::new(usize::MAX);
    assert_eq!(t.limit(), MAX_LIMIT);
    drop(t);
    let mut t: TokenTable<u32> = TokenTable::new(DEFAULT_LIMIT);
    let m = t.memory();
    assert!(
        m <= INITIAL_SLOTS * 16,
        "{m} bytes: small until tokens arrive"
    );
    for i in 0..1000u32 {
        t.insert(i.wrapping_mul(0x9e37_79b9), i).unwrap();
    }
    assert!(
        t.memory() <= 2048 * 16,
        "{} bytes for 1000 tokens",
        t.memory()
    );
    for i in 0..1000u32 {
        assert_eq!(
            t.get(i.wrapping_mul(0x9e37_79b9)),
            Some(i),
            "found after growing"
        );
    }
    // Full: at most twice the limit's slots.
    let mut t: TokenTable<u32> = TokenTable::new(1000);
    for i in 0..1000u32 {
        t.insert(i.wrapping_mul(0x9e37_79b9), i).unwrap();
    }
    assert!(t.insert(7, 7).is_err());
    assert!(t.memory() <= 2048 * 16, "{} bytes", t.memory());
}

#[test]
fn a_flood_of_unknown_tokens_finds_nothing_in_a_full_table() {
    // The table full of this host's random tokens; a peer probing 100 000 made-up
    // tokens finds none of them except by the 2^-32 chance of a guess.
    let mut t: TokenTable<u32> = TokenTable::new(1024);
    let mut k = 0x1234_5678_9abc_def0u64;
    let mut draw = || {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        k
    };
    let mut held = HashSet::new();
    while t.len() < t.limit() {
        held.insert(t.insert_new_key(&mut draw, 0).unwrap().1);
    }
    assert_eq!(
        t.insert_new_key(&mut draw, 0),
        Err(TokenError::Full { limit: 1024 })
    );
    let found = (0..100_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .filter(|tok| !held.contains(tok))
        .filter(|&tok| t.get(tok).is_some())
        .count();
    assert_eq!(found, 0);
}

proptest! {
    /// The table against a HashMap, with tokens crowded onto few home slots (low bits
    /// from a small set) so probe runs and backward shifts are exercised.
    #[test]
    fn matches_a_map(ops in proptest::collection::vec((0u8..3, 0u32..64), 1..400)) {
        let mut t: TokenTable<u32> = TokenTable::new(40);
        let mut m: HashMap<u32, u32> = HashMap::new();
        for (i, (op, x)) in ops.into_iter().enumerate() {
            // Low 3 bits from x % 4, high bits from x: heavy clustering.
            let token = ((x / 4) << 8) | (x % 4);
            match op {
                0 => {
                    let r = t.insert(token, i as u32);
                    if m.contains_key(&token) {
                        prop_assert_eq!(r, Err(TokenError::Collision { token }));
                    } else if m.len() >= 40 {
                        prop_assert_eq!(r, Err(TokenError::Full { limit: 40 }));
                    } else {
                        prop_assert_eq!(r, Ok(()));
                        m.insert(token, i as u32);
                    }
                }
                1 => prop_assert_eq!(t.remove(token), m.remove(&token)),
                _ => prop_assert_eq!(t.get(token), m.get(&token).copied()),
            }
            prop_assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            prop_assert_eq!(t.get(*k), Some(*v));
        }
    }
}
