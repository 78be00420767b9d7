//! The kernel's TCP (`std::net::TcpStream`) as brisk-tcp's [`ByteStream`], so apps
//! written against the trait run unchanged over Linux's stack (the receivers of real
//! runs, Linux senders).
//!
//! Linux has no unordered receive: [`ByteStream::read_unordered`] returns in-order data
//! only (with its stream offset, counted here), and
//! [`ByteStream::supports_unordered`] is false. Priorities are ignored. Blocking, as
//! the socket is: `read` gives `Ok(0)` only at end of stream.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};

use brisk_tcp::stream::ByteStream;
use brisk_tcp::UnorderedRead;

/// A borrowed kernel socket and the count of bytes read through it.
#[derive(Debug)]
pub struct KernelStream<'a> {
    sock: &'a TcpStream,
    read_offset: u64,
}

impl<'a> KernelStream<'a> {
    pub fn new(sock: &'a TcpStream) -> KernelStream<'a> {
        KernelStream {
            sock,
            read_offset: 0,
        }
    }
}

impl ByteStream for KernelStream<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        (&mut &*self.sock).write(data)
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&mut &*self.sock).read(buf)?;
        self.read_offset += n as u64;
        Ok(n)
    }

    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        let offset = self.read_offset;
        let n = ByteStream::read(self, buf)?;
        Ok((n > 0).then_some(UnorderedRead {
            offset,
            len: n,
            in_order: true,
        }))
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.sock.shutdown(Shutdown::Write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn loopback_reads_are_in_order_with_offsets() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let mut tx = KernelStream::new(&a);
        tx.write_all(b"hello ").unwrap();
        tx.write_with_priority(b"world", 9).unwrap();
        tx.shutdown_write().unwrap();
        let mut rx = KernelStream::new(&b);
        assert!(!rx.supports_unordered());
        let (mut got, mut buf) = (Vec::new(), [0u8; 4]);
        while let Some(r) = rx.read_unordered(&mut buf).unwrap() {
            assert!(r.in_order);
            assert_eq!(r.offset, got.len() as u64);
            got.extend_from_slice(&buf[..r.len]);
        }
        assert_eq!(got, b"hello world");
        assert_eq!(
            ByteStream::read(&mut rx, &mut buf).unwrap(),
            0,
            "end of stream"
        );
    }
}
