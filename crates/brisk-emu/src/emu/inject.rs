//! Raw packets onto a lab device, for hostile-input tests: an `AF_PACKET`/`SOCK_DGRAM`
//! socket (packet(7)) bound to a TUN device inside a lab namespace. Sending puts the
//! bytes on the device exactly as given — random bytes, bad checksums, spoofed
//! segments — so they leave through the TUN into the emulator and on to brisk, with
//! no kernel TCP/IP processing on the way. Receiving sees the device's traffic in both
//! directions, which lets a test learn a live connection's sequence numbers.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::{cvt, cvt_size, EmuError, Result};
use crate::os::netns::Netns;

const ETH_P_IP: u16 = 0x0800;
/// Every protocol: only such sockets see a device's outgoing packets too.
const ETH_P_ALL: u16 = 0x0003;

/// A packet socket on one device.
#[derive(Debug)]
pub struct Injector {
    fd: OwnedFd,
    ifindex: i32,
}

impl Injector {
    /// Opens a packet socket on `ifname` inside `ns` (receive timeout 100 ms).
    pub fn open(ns: &Netns, ifname: &str) -> Result<Injector> {
        let name = CString::new(ifname).map_err(|e| EmuError::Config(e.to_string()))?;
        ns.run_in(move || -> Result<Injector> {
            // SAFETY: if_nametoindex reads a valid C string; resolves in this thread's netns.
            let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
            if ifindex == 0 {
                return Err(EmuError::io("if_nametoindex", io::Error::last_os_error()));
            }
            // SAFETY: plain syscall; the fd is owned below.
            let raw = cvt(unsafe {
                libc::socket(
                    libc::AF_PACKET,
                    libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                    i32::from(ETH_P_ALL.to_be()),
                )
            })
            .map_err(|e| EmuError::io("socket(AF_PACKET)", e))?;
            // SAFETY: fresh fd.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mut sll = sockaddr(ifindex);
            sll.sll_protocol = ETH_P_ALL.to_be();
            // SAFETY: binds to a valid sockaddr_ll of the right size.
            cvt(unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    (&sll as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                )
            })
            .map_err(|e| EmuError::io("bind(AF_PACKET)", e))?;
            let tv = libc::timeval {
                tv_sec: 0,
                tv_usec: 100_000,
            };
            // SAFETY: sets a timeval option from a live value.
            cvt(unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    (&tv as *const libc::timeval).cast(),
                    std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                )
            })
            .map_err(|e| EmuError::io("SO_RCVTIMEO", e))?;
            Ok(Injector { fd, ifindex })
        })?
    }

    /// Puts `pkt` (an IP packet, or any bytes) on the device.
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        let sll = sockaddr(self.ifindex);
        // SAFETY: sends from a live slice to a valid sockaddr_ll.
        cvt_size(unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                pkt.as_ptr().cast(),
                pkt.len(),
                0,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
        .map(drop)
    }

    /// The next packet seen on the device (either direction); `Ok(None)` after the
    /// 100 ms receive timeout.
    pub fn recv(&self, buf: &mut Vec<u8>) -> io::Result<Option<()>> {
        buf.clear();
        buf.reserve(2048);
        // SAFETY: reads at most `capacity` bytes into the Vec's allocation.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.capacity(),
                0,
            )
        };
        match cvt_size(n) {
            Ok(n) => {
                // SAFETY: the kernel initialised `n <= capacity` bytes.
                unsafe { buf.set_len(n) };
                Ok(Some(()))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn sockaddr(ifindex: i32) -> libc::sockaddr_ll {
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ETH_P_IP.to_be();
    sll.sll_ifindex = ifindex;
    sll
}
