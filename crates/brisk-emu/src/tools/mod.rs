//! Small traffic tools over any `Read`/`Write` stream (brisk's [`TcpStream`] or the
//! kernel's): a **source** writing a ChaCha8 byte stream, a **sink** reading to EOF,
//! both hashing with SHA-256 so that every lost, duplicated or corrupted byte shows,
//! and an **echo** that returns what it reads. `brisk lab` exposes them on the CLI.
//!
//! [`TcpStream`]: crate::TcpStream

pub mod bench;
pub mod brisklab;
pub mod ecn_audit;
pub mod hist;
pub mod http;
pub mod lab;
pub mod multipath;
pub mod pcapread;
pub mod shell;

use std::io::{self, ErrorKind, Read, Write};
use std::time::Instant as WallInstant;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Buffer size of the tools.
pub const CHUNK: usize = 64 * 1024;

/// What one end of a transfer saw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StreamDigest {
    pub bytes: u64,
    pub sha256: String,
}

/// What a timed transfer measured.
#[derive(Clone, Debug, Serialize)]
pub struct TransferReport {
    pub digest: StreamDigest,
    pub seconds: f64,
    pub goodput_bps: f64,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest `source(_, bytes, seed)` produces, without a network.
pub fn expected_digest(bytes: u64, seed: u64) -> StreamDigest {
    source(&mut io::sink(), bytes, seed).expect("writing to io::sink cannot fail")
    // NOTE(unwrap): io::sink never fails
}

/// Writes `bytes` bytes of the ChaCha8 stream for `seed`; returns their digest.
pub fn source<W: Write>(w: &mut W, bytes: u64, seed: u64) -> io::Result<StreamDigest> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = vec![0u8; CHUNK];
    let mut hash = Sha256::new();
    let mut sent = 0u64;
    while sent < bytes {
        let n = (bytes - sent).min(CHUNK as u64) as usize;
        rng.fill_bytes(&mut buf[..n]);
        w.write_all(&buf[..n])?;
        hash.update(&buf[..n]);
        sent += n as u64;
    }
    w.flush()?;
    Ok(StreamDigest {
        bytes: sent,
        sha256: hex(&hash.finalize()),
    })
}

/// Reads to EOF (at most `limit` bytes, then errors); returns the digest.
pub fn sink<R: Read>(r: &mut R, limit: u64) -> io::Result<StreamDigest> {
    let mut buf = vec![0u8; CHUNK];
    let mut hash = Sha256::new();
    let mut got = 0u64;
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hash.update(&buf[..n]);
                got += n as u64;
                if got > limit {
                    return Err(io::Error::new(
                        ErrorKind::InvalidData,
                        format!("more than {limit} bytes"),
                    ));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(StreamDigest {
        bytes: got,
        sha256: hex(&hash.finalize()),
    })
}

/// [`sink`] with its duration and goodput (from the call to EOF).
pub fn timed_sink<R: Read>(r: &mut R, limit: u64) -> io::Result<TransferReport> {
    let t0 = WallInstant::now();
    let digest = sink(r, limit)?;
    let seconds = t0.elapsed().as_secs_f64();
    Ok(TransferReport {
        goodput_bps: if seconds > 0.0 {
            digest.bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        digest,
        seconds,
    })
}

/// Most intervals [`interval_sink`] keeps (a day of 1-s intervals).
pub const MAX_INTERVALS: usize = 86_400;

/// One interval of a transfer as the receiver saw it (iperf3's `intervals[].sum`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// Seconds since the sink started.
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
}

/// [`timed_sink`], also counting the bytes read in each `interval` (from the call);
/// the last interval ends at EOF. At most [`MAX_INTERVALS`] are kept; later bytes go
/// into the last one.
pub fn interval_sink<R: Read>(
    r: &mut R,
    limit: u64,
    interval: std::time::Duration,
) -> io::Result<(TransferReport, Vec<Interval>)> {
    let t0 = WallInstant::now();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let (mut total, mut bin) = (0u64, 0u64);
    let mut next = interval;
    let mut out = Vec::new();
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let at = t0.elapsed();
        while at >= next && out.len() < MAX_INTERVALS - 1 {
            out.push(Interval {
                start: (next - interval).as_secs_f64(),
                end: next.as_secs_f64(),
                bytes: bin,
            });
            bin = 0;
            next += interval;
        }
        h.update(&buf[..n]);
        total += n as u64;
        bin += n as u64;
        if total > limit {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("more than {limit} bytes"),
            ));
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    out.push(Interval {
        start: (next - interval).as_secs_f64(),
        end: seconds.max((next - interval).as_secs_f64()),
        bytes: bin,
    });
    let digest = StreamDigest {
        bytes: total,
        sha256: hex(&h.finalize()),
    };
    Ok((
        TransferReport {
            goodput_bps: if seconds > 0.0 {
                total as f64 * 8.0 / seconds
            } else {
                0.0
            },
            digest,
            seconds,
        },
        out,
    ))
}

/// Echoes everything read back to the writer until EOF; returns bytes echoed.
pub fn echo<S: Read + Write>(s: &mut S, limit: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        s.write_all(&buf[..n])?;
        total += n as u64;
        if total > limit {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("more than {limit} bytes"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_and_sink_agree_and_seeds_differ() {
        let mut v = Vec::new();
        let d = source(&mut v, 200_000, 7).unwrap();
        assert_eq!(v.len(), 200_000);
        let got = sink(&mut &v[..], u64::MAX).unwrap();
        assert_eq!(d, got);
        assert_eq!(expected_digest(200_000, 7), d);
        assert_ne!(expected_digest(200_000, 8), d);
        v[1234] ^= 1;
        assert_ne!(sink(&mut &v[..], u64::MAX).unwrap(), d);
    }

    #[test]
    fn sink_refuses_more_than_its_limit() {
        let v = vec![0u8; 1000];
        assert!(sink(&mut &v[..], 999).is_err());
    }
}
