//! Several sides behind one: the senders' end of the mixed-stack dumbbell is brisk's
//! [`StackSide`](crate::StackSide) *and* a TUN device leading to the Linux senders'
//! namespace, and the emulator loop takes one [`Side`] per end.
//!
//! * `recv` takes from the members in turn (starting one further each call, so a
//!   busy member cannot starve the others);
//! * `send` routes by the IPv4 destination: each member owns a set of addresses;
//!   packets for no member are refused (counted by the loop as `write_refused`);
//! * `poll_fd` is an epoll set holding the members' fds (an epoll fd is readable while
//!   any fd in it is), or the only member's fd when there is one;
//! * `poll_timeout` is the earliest of the members'.

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};

use brisk_time::Instant;

use crate::emu::side::Side;
use crate::error::{EmuError, Result};
use crate::os::poll::Epoll;
use crate::os::vnet::VnetHdr;

/// Most members (epoll tokens are bits of a u64).
pub const MAX_MEMBERS: usize = 16;

struct Member {
    side: Box<dyn Side + Send>,
    addrs: Vec<Ipv4Addr>,
}

/// See the module docs.
pub struct MuxSide {
    members: Vec<Member>,
    epoll: Option<Epoll>,
    next: usize,
}

impl MuxSide {
    /// Members with the addresses each owns. At least one member is required, and
    /// members without a `poll_fd` are not supported (they would need polling every
    /// iteration, which would turn the others' readiness into busy polling).
    pub fn new(members: Vec<(Box<dyn Side + Send>, Vec<Ipv4Addr>)>) -> Result<MuxSide> {
        if members.is_empty() || members.len() > MAX_MEMBERS {
            return Err(EmuError::Config(format!(
                "a multiplexed side needs 1..={MAX_MEMBERS} members"
            )));
        }
        if members.iter().any(|(s, _)| s.poll_fd().is_none()) {
            return Err(EmuError::Config(
                "every member of a multiplexed side needs a poll fd".into(),
            ));
        }
        let epoll = if members.len() > 1 {
            let ep = Epoll::new()?;
            for (i, (s, _)) in members.iter().enumerate() {
                if let Some(fd) = s.poll_fd() {
                    ep.add(fd, i as u64)?;
                }
            }
            Some(ep)
        } else {
            None
        };
        Ok(MuxSide {
            members: members
                .into_iter()
                .map(|(side, addrs)| Member { side, addrs })
                .collect(),
            epoll,
            next: 0,
        })
    }
}

impl MuxSide {
    fn member_for(&self, pkt: &[u8]) -> Option<&Member> {
        let dst = brisk_wire::peek::ipv4_dst(pkt)?;
        self.members.iter().find(|m| m.addrs.contains(&dst))
    }
}

impl Side for MuxSide {
    fn poll_fd(&self) -> Option<RawFd> {
        match &self.epoll {
            Some(ep) => Some(ep.as_raw_fd()),
            None => self.members.first().and_then(|m| m.side.poll_fd()),
        }
    }

    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        let n = self.members.len();
        let start = self.next;
        self.next = (self.next + 1) % n;
        let mut err = None;
        for k in 0..n {
            let m = &mut self.members[(start + k) % n];
            match m.side.recv(now, buf) {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                // One member failing must not hide the others' packets.
                Err(e) => err = Some(e),
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(false),
        }
    }

    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool> {
        let Some(dst) = brisk_wire::peek::ipv4_dst(pkt) else {
            return Ok(false);
        };
        match self.members.iter_mut().find(|m| m.addrs.contains(&dst)) {
            Some(m) => m.side.send(now, pkt),
            None => Ok(false),
        }
    }

    /// Whether the member owning `pkt`'s destination takes super-packets.
    fn takes_gso(&self, pkt: &[u8]) -> bool {
        self.member_for(pkt).is_some_and(|m| m.side.takes_gso(pkt))
    }

    /// To the member owning the destination of the merged header (every member of a
    /// run has the same addresses).
    fn send_gso(
        &mut self,
        now: Instant,
        hdr: &VnetHdr,
        head: &[u8],
        payloads: &[&[u8]],
    ) -> io::Result<bool> {
        let Some(dst) = brisk_wire::peek::ipv4_dst(head) else {
            return Err(io::Error::from(io::ErrorKind::Unsupported));
        };
        match self.members.iter_mut().find(|m| m.addrs.contains(&dst)) {
            Some(m) => m.side.send_gso(now, hdr, head, payloads),
            None => Ok(false),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.members
            .iter()
            .filter_map(|m| m.side.poll_timeout())
            .min()
    }

    /// The sum over the members that can tell (`None` if none can).
    fn kernel_drops(&self) -> Option<u64> {
        self.members
            .iter()
            .filter_map(|m| m.side.kernel_drops())
            .reduce(|a, b| a.saturating_add(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A member backed by an eventfd (for readiness) and a queue of packets.
    struct Fake {
        fd: OwnedFd,
        out: Vec<Vec<u8>>,
        got: std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    }

    impl Side for Fake {
        fn poll_fd(&self) -> Option<RawFd> {
            Some(self.fd.as_raw_fd())
        }
        fn recv(&mut self, _: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
            match self.out.pop() {
                Some(p) => {
                    buf.clear();
                    buf.extend_from_slice(&p);
                    Ok(true)
                }
                None => Ok(false),
            }
        }
        fn send(&mut self, _: Instant, pkt: &[u8]) -> io::Result<bool> {
            self.got.lock().unwrap().push(pkt.to_vec());
            Ok(true)
        }
    }

    fn fake(out: Vec<Vec<u8>>) -> (Fake, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>) {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
        assert!(raw >= 0);
        let got = std::sync::Arc::default();
        (
            Fake {
                // SAFETY: fresh fd.
                fd: unsafe { OwnedFd::from_raw_fd(raw) },
                out,
                got: std::sync::Arc::clone(&got),
            },
            got,
        )
    }

    fn to(dst: [u8; 4], tag: u8) -> Vec<u8> {
        let mut p = vec![0u8; 20];
        p[0] = 0x45;
        p[16..20].copy_from_slice(&dst);
        p[1] = tag;
        p
    }

    #[test]
    fn routes_by_destination_and_takes_from_every_member() {
        let (a, got_a) = fake(vec![to([1, 1, 1, 1], 1), to([1, 1, 1, 1], 2)]);
        let (b, got_b) = fake(vec![to([1, 1, 1, 1], 3)]);
        let mut m = MuxSide::new(vec![
            (Box::new(a), vec![Ipv4Addr::new(198, 18, 0, 1)]),
            (Box::new(b), vec![Ipv4Addr::new(198, 18, 0, 2)]),
        ])
        .unwrap();
        assert!(m.poll_fd().is_some());
        let mut tags = Vec::new();
        let mut buf = Vec::new();
        while m.recv(Instant::ZERO, &mut buf).unwrap() {
            tags.push(buf[1]);
        }
        tags.sort_unstable();
        assert_eq!(tags, vec![1, 2, 3]);
        assert!(m.send(Instant::ZERO, &to([198, 18, 0, 2], 9)).unwrap());
        assert!(m.send(Instant::ZERO, &to([198, 18, 0, 1], 8)).unwrap());
        assert!(!m.send(Instant::ZERO, &to([198, 18, 0, 3], 7)).unwrap());
        assert_eq!(got_b.lock().unwrap()[0][1], 9);
        assert_eq!(got_a.lock().unwrap()[0][1], 8);
        assert_eq!(got_a.lock().unwrap().len(), 1);
    }

    #[test]
    fn nested_epoll_fd_turns_readable_with_a_member() {
        let (a, _) = fake(vec![]);
        let (b, _) = fake(vec![]);
        let bfd = b.fd.as_raw_fd();
        let m = MuxSide::new(vec![(Box::new(a), vec![]), (Box::new(b), vec![])]).unwrap();
        let mut outer = Epoll::new().unwrap();
        outer.add(m.poll_fd().unwrap(), 5).unwrap();
        assert_eq!(outer.wait(0).unwrap(), 0);
        let one = 1u64;
        // SAFETY: writes 8 bytes to an eventfd.
        unsafe { libc::write(bfd, (&one as *const u64).cast(), 8) };
        assert_eq!(outer.wait(0).unwrap(), 1 << 5);
        let mut v = 0u64;
        // SAFETY: reads 8 bytes from an eventfd.
        unsafe { libc::read(bfd, (&mut v as *mut u64).cast(), 8) };
        assert_eq!(
            outer.wait(0).unwrap(),
            0,
            "readiness clears with the member's"
        );
    }
}
