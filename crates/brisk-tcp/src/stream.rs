//! A byte stream as an application sees it, whatever carries it: brisk's sans-IO
//! [`Connection`] in the simulator, brisk's real-packet socket, or the kernel's TCP.
//! Applications (the records app now, the Minion protocols later) are written once
//! against [`ByteStream`] and run over all of them.
//!
//! Blocking and non-blocking implementations share the trait, so its results are read
//! the same way by both: `Ok(0)` from [`ByteStream::write`] means "no room now"
//! (non-blocking; a blocking stream waits instead), and `Ok(0)` from
//! [`ByteStream::read`] means "nothing now" for a non-blocking stream and end of
//! stream for a blocking one. Errors are `std::io::Error`s, the vocabulary every
//! implementation already speaks; an operation a stream cannot do at all is
//! `ErrorKind::Unsupported`.

use std::io;

use crate::conn::{Connection, UnorderedRead};
use crate::SharedBytes;

/// Write, prioritised write, in-order and unordered read, and half-close.
pub trait ByteStream {
    /// Queues up to `data.len()` bytes; returns how many were taken.
    fn write(&mut self, data: &[u8]) -> io::Result<usize>;

    /// [`write`](Self::write) with a scheduling priority (higher is more urgent).
    /// Streams without priorities ignore it, which is also the default.
    fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
        let _ = priority;
        self.write(data)
    }

    /// [`write`](Self::write) of `src.at(off, len)`: the same bytes and the same result,
    /// but a stream that can hold periodic bytes by reference may keep the reference
    /// instead of a copy (brisk's [`Connection`] does: a bulk sender in the simulator
    /// then copies its payload once, into the packet, not twice). The default copies.
    fn write_shared(&mut self, src: &SharedBytes, off: u64, len: usize) -> io::Result<usize> {
        self.write(&src.at(off, len))
    }

    /// Reads in-order bytes into `buf`; returns how many.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;

    /// [`read`](Self::read), handing the bytes read (if any) to `f` as one slice: up to
    /// `buf.len()` of them, exactly those `read` would return. A stream that holds
    /// them contiguously may pass them in place and leave `buf` alone (brisk's
    /// [`Connection`] does, saving the copy); the default reads into `buf`.
    fn read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<usize> {
        let n = self.read(buf)?;
        if n > 0 {
            f(&buf[..n]);
        }
        Ok(n)
    }

    /// [`read_in_place`](Self::read_in_place) until nothing more is readable now,
    /// handing `f` each slice in stream order; returns the bytes read. An error ends
    /// it (the bytes before it were handed to `f`). The default calls `read_in_place`
    /// until it returns 0; a stream that knows when it is drained stops without that
    /// last, empty call (brisk's [`Connection`] does: in the simulator's bulk
    /// receiver nearly every readable event took one full and one empty read).
    fn read_all_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let mut total = 0;
        loop {
            match self.read_in_place(buf, f)? {
                0 => return Ok(total),
                n => total += n as u64,
            }
        }
    }

    /// Reads one contiguous run with its 0-based stream offset, in order or (where the
    /// stream supports it, see [`supports_unordered`](Self::supports_unordered)) ahead
    /// of a hole. `Ok(None)`: nothing to read now (or end of stream).
    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>>;

    /// Whether [`read_unordered`](Self::read_unordered) may return out-of-order data
    /// (otherwise it returns in-order data only).
    fn supports_unordered(&self) -> bool {
        false
    }

    /// Sends FIN after the queued data; reading goes on (half-close).
    fn shutdown_write(&mut self) -> io::Result<()>;

    /// Writes all of `data`, for blocking streams; a stream that takes nothing (a
    /// non-blocking one that is full) gives `ErrorKind::WriteZero`.
    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            match self.write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n.min(data.len())..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A borrowed stream is a stream (as for `std::io::Write`), so generic apps can be
/// handed `&mut s` and the caller keeps `s`.
impl<S: ByteStream + ?Sized> ByteStream for &mut S {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        (**self).write(data)
    }
    fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
        (**self).write_with_priority(data, priority)
    }
    fn write_shared(&mut self, src: &SharedBytes, off: u64, len: usize) -> io::Result<usize> {
        (**self).write_shared(src, off, len)
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read(buf)
    }
    fn read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<usize> {
        (**self).read_in_place(buf, f)
    }
    fn read_all_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        (**self).read_all_in_place(buf, f)
    }
    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        (**self).read_unordered(buf)
    }
    fn supports_unordered(&self) -> bool {
        (**self).supports_unordered()
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        (**self).shutdown_write()
    }
}

/// The simulator's (and any sans-IO driver's) stream: non-blocking, never fails.
impl ByteStream for Connection {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        Ok(Connection::write(self, data))
    }

    fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
        // A prioritised write is taken whole: one that can never fit is an error, not
        // a "no room now" the caller would retry forever.
        self.check_whole_write(data.len())?;
        Ok(Connection::write_with_priority(self, data, priority))
    }

    fn write_shared(&mut self, src: &SharedBytes, off: u64, len: usize) -> io::Result<usize> {
        Ok(Connection::write_shared(self, src, off, len))
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(Connection::read(self, buf))
    }

    fn read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<usize> {
        Ok(Connection::read_in_place(self, buf, f))
    }

    fn read_all_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        Ok(Connection::read_all_in_place(self, buf, f))
    }

    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        Ok(Connection::read_unordered(self, buf))
    }

    fn supports_unordered(&self) -> bool {
        self.unordered()
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        Connection::shutdown_write(self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that takes at most `room` bytes per write, to exercise `write_all`.
    struct Trickle {
        room: usize,
        got: Vec<u8>,
        prio: Vec<u8>,
    }

    impl ByteStream for Trickle {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            let n = data.len().min(self.room);
            self.got.extend_from_slice(&data[..n]);
            Ok(n)
        }
        fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
            Ok(0)
        }
        fn read_unordered(&mut self, _buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
            Ok(None)
        }
        fn shutdown_write(&mut self) -> io::Result<()> {
            self.prio.push(0xff);
            Ok(())
        }
    }

    #[test]
    fn write_all_loops_over_short_writes() {
        let mut t = Trickle {
            room: 3,
            got: Vec::new(),
            prio: Vec::new(),
        };
        t.write_all(b"hello world").unwrap();
        assert_eq!(t.got, b"hello world");
        assert_eq!(
            t.write_with_priority(b"ab", 7).unwrap(),
            2,
            "default ignores it"
        );
        assert!(!t.supports_unordered());
        t.shutdown_write().unwrap();
        assert_eq!(t.prio, [0xff]);
    }

    /// A stream that reads at most 3 bytes at a time from `data`.
    struct Dribble {
        data: Vec<u8>,
    }

    impl ByteStream for Dribble {
        fn write(&mut self, _data: &[u8]) -> io::Result<usize> {
            Ok(0)
        }
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(3).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data.drain(..n);
            Ok(n)
        }
        fn read_unordered(&mut self, _buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
            Ok(None)
        }
        fn shutdown_write(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The default `read_all_in_place` goes on past short reads until a read finds
    /// nothing, and hands each piece over in order (also through `&mut S`).
    #[test]
    fn read_all_in_place_reads_past_short_reads() {
        let mut d = Dribble {
            data: b"hello, world".to_vec(),
        };
        let (mut got, mut calls) = (Vec::new(), 0);
        let mut buf = [0u8; 8];
        let n = <&mut Dribble as ByteStream>::read_all_in_place(&mut &mut d, &mut buf, &mut |b| {
            calls += 1;
            got.extend_from_slice(b);
        })
        .unwrap();
        assert_eq!((n, calls, &got[..]), (12, 4, &b"hello, world"[..]));
        assert_eq!(d.read_all_in_place(&mut buf, &mut |_| panic!()).unwrap(), 0);
    }

    #[test]
    fn write_all_reports_a_full_stream() {
        let mut t = Trickle {
            room: 0,
            got: Vec::new(),
            prio: Vec::new(),
        };
        let e = t.write_all(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WriteZero);
        assert!(t.write_all(b"").is_ok());
    }

    #[test]
    fn a_shared_write_is_a_write_of_the_same_bytes() {
        let src = SharedBytes::periodic(b"abcdefg");
        // The default copies, and takes what `write` would.
        let mut t = Trickle {
            room: 5,
            got: Vec::new(),
            prio: Vec::new(),
        };
        assert_eq!(t.write_shared(&src, 5, 4).unwrap(), 4);
        assert_eq!(t.write_shared(&src, 9, 9).unwrap(), 5);
        assert_eq!(t.got, b"fgabcdefg");
        // brisk's connection, through the trait: the peer reads the same bytes.
        let mut p = crate::tests::harness::Pair::new(brisk_time::Duration::from_millis(5));
        let (c, s) = p.establish();
        let mut k = p.client.conn_mut(c).unwrap();
        assert_eq!(ByteStream::write_shared(&mut k, &src, 5, 4).unwrap(), 4);
        assert_eq!(ByteStream::write_shared(&mut k, &src, 9, 3).unwrap(), 3);
        let mut got = Vec::new();
        assert!(p.run_until(brisk_time::Duration::from_secs(1), |p| {
            crate::tests::harness::Pair::read_all(&mut p.server, s, &mut got);
            got.len() == 7
        }));
        assert_eq!(got, b"fgabcde");
    }
}
