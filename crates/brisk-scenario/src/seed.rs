//! Seeds of a run's components. One derivation for the simulator (brisk-sim) and
//! real runs (brisk-emu), so a component's random stream, such as a path model's
//! draw, is the same in both worlds for the same scenario seed.

use std::hash::Hasher;

use siphasher::sip::SipHasher13;

/// A derived 64-bit seed for the component called `name` (index `idx`).
pub fn derive_seed(seed: u64, name: &str, idx: u64) -> u64 {
    let mut h = SipHasher13::new_with_keys(seed, 0x6272_6973_6b2d_7369); // "brisk-si"
    h.write(name.as_bytes());
    h.write_u8(0);
    h.write_u64(idx);
    h.finish()
}
