//! Initial sequence numbers, RFC 6528 §3: `ISN = M + F(localip, localport, remoteip,
//! remoteport, secretkey)`, with M a 4 µs clock (here derived from `now`) and F a
//! SipHash-2-4 keyed by the endpoint's injected secret.

use brisk_time::Instant;
use siphasher::sip::SipHasher24;
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;

pub fn initial_seq(now: Instant, local: SocketAddr, remote: SocketAddr, secret: &[u8; 16]) -> u32 {
    let mut h = SipHasher24::new_with_key(secret);
    local.ip().hash(&mut h);
    local.port().hash(&mut h);
    remote.ip().hash(&mut h);
    remote.port().hash(&mut h);
    let f = h.finish() as u32;
    let m = (now.as_micros() / 4) as u32;
    m.wrapping_add(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn isn_depends_on_tuple_secret_and_advances_with_clock() {
        let (l, r) = (addr("10.0.0.1:1000"), addr("10.0.0.2:80"));
        let k = [7u8; 16];
        let a = initial_seq(Instant::ZERO, l, r, &k);
        assert_ne!(a, initial_seq(Instant::ZERO, addr("10.0.0.1:1001"), r, &k));
        assert_ne!(a, initial_seq(Instant::ZERO, l, r, &[8u8; 16]));
        assert_eq!(
            initial_seq(Instant::from_micros(400), l, r, &k),
            a.wrapping_add(100)
        );
    }
}
