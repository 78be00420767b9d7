//! TUN devices (Linux `Documentation/networking/tuntap.rst`): `IFF_TUN | IFF_NO_PI`, so
//! every read or write is exactly one raw IP packet, no packet-info header. Without
//! offloads packets are never larger than the MTU. With offloads ([`Tun::open_with`],
//! or `BRISK_TUN_OFFLOAD=1` for [`Tun::open`]) the device is `IFF_VNET_HDR` with
//! `TUNSETOFFLOAD` (checksum, TSO4, TSO6, TSO-ECN; on by default, `BRISK_TUN_OFFLOAD=0`
//! turns them off): the kernel hands over TCP
//! super-packets of up to 64 KB in one read, and [`Tun::recv`] still returns one
//! MSS-sized IP packet per call, cut by [`crate::os::vnet::Segmenter`] as Linux's
//! `tcp_gso_segment` would; writes carry a zero virtio header, or a GSO one for a run
//! of packets the emulator coalesced ([`Tun::send_gso`], `os/gro.rs`).
//!
//! A TUN device is created in the namespace of the thread that opens `/dev/net/tun`,
//! so [`Tun::open`] opens it on a thread inside the target namespace
//! ([`Netns::run_in`]); the fd then works from any thread. The device lives as long as
//! the fd (it is not made persistent), so dropping the `Tun` or deleting its namespace
//! removes it. Addresses are confined to the lab range 198.18.0.0/15 (RFC 2544), and
//! IPv6 ones to 2001:db8::/32 (RFC 3849, documentation), inside the lab's namespaces.

use std::ffi::CString;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::error::{cvt, cvt_size, EmuError, Result};
use crate::os::gro;
use crate::os::netns::Netns;
use crate::os::vnet::{self, Segmenter, VnetHdr, F_NEEDS_CSUM, GSO_NONE, MAX_READ, VNET_HDR_LEN};

/// The environment switch for [`Tun::open`]'s offloads: `1`/`on` or `0`/`off`.
pub const OFFLOAD_ENV: &str = "BRISK_TUN_OFFLOAD";
/// Offloads are on unless turned off. With them and egress coalescing (os/gro.rs)
/// the emulator carries 2–3× more kernel to kernel; at 1 Gbit/s without them the
/// sending kernel overflows the TUN ring (hundreds of kernel drops in `bench real`, a
/// DISTORTED run) where with them both stacks reach 99 % of the path's payload
/// capacity, clean. Their cost, a coalesced packet waiting up to the coalescing
/// slack, stays within the delivery-error budget since the loop runs real-time
/// (os/sched.rs). The `brisk repro --quick` real-packet experiments give the same
/// verdicts with and without (docs/performance.md, "Emulator throughput").
pub const OFFLOAD_DEFAULT: bool = true;

/// The environment switch for `IFF_NAPI` on the lab's TUN devices (`1`: on; off by
/// default). With it a written skb is queued to the device's NAPI context and goes
/// up through GRO (`napi_gro_receive`) instead of straight to `netif_receive_skb`.
/// A plain `write(2)` passes `more = false` to `tun_get_user`, so the poll runs at
/// once on the writer's CPU; measured in docs/performance.md ("The TUN relay's
/// ceiling (§5, helper perfemu4)"). `IFF_NAPI_FRAGS` is for TAP devices only.
pub const NAPI_ENV: &str = "BRISK_TUN_NAPI";
/// `IFF_NAPI` from `include/uapi/linux/if_tun.h`.
const IFF_NAPI: libc::c_int = 0x0010;

fn napi_from_env() -> bool {
    matches!(std::env::var(NAPI_ENV).as_deref(), Ok("1" | "on" | "true"))
}

/// Whether [`Tun::open`] turns offloads on: [`OFFLOAD_ENV`], else [`OFFLOAD_DEFAULT`].
pub fn offload_from_env() -> Result<bool> {
    match std::env::var(OFFLOAD_ENV) {
        Err(_) => Ok(OFFLOAD_DEFAULT),
        Ok(v) => match v.as_str() {
            "1" | "on" | "true" => Ok(true),
            "0" | "off" | "false" => Ok(false),
            _ => Err(EmuError::Config(format!(
                "{OFFLOAD_ENV}={v:?}: use 1/on/true or 0/off/false"
            ))),
        },
    }
}

/// Receive state of an offloading device: the 64 KB read buffer and the
/// super-packet being cut into segments. Allocated once per device.
#[derive(Debug)]
struct VnetRx {
    scratch: Vec<u8>,
    seg: Segmenter,
    /// The last packet returned has a TCP checksum computed here (a segment, or a
    /// completed `NEEDS_CSUM` packet), not one taken on trust from the kernel.
    computed: bool,
}

/// The MTU the lab sets on its devices.
pub const DEFAULT_MTU: u32 = 1500;
/// Longest interface name (IFNAMSIZ minus the NUL).
const MAX_IFNAME: usize = 15;

/// `struct ifreq` as TUNSETIFF reads it: name, then the flags union member; 40 bytes.
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Whether `ip` is in 198.18.0.0/15, the only range the lab may use.
pub fn in_lab_range(ip: Ipv4Addr) -> bool {
    let [a, b, _, _] = ip.octets();
    a == 198 && (b & 0xfe) == 18
}

/// Whether `ip` is in 2001:db8::/32, the only IPv6 range the lab may use.
pub fn in_lab_range6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    s[0] == 0x2001 && s[1] == 0xdb8
}

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
    netns: String,
    vnet: Option<Box<VnetRx>>,
}

impl Tun {
    /// Creates TUN device `name` inside `ns`, nonblocking and close-on-exec, with
    /// offloads as [`offload_from_env`] says.
    pub fn open(ns: &Netns, name: &str) -> Result<Tun> {
        Tun::open_with(ns, name, offload_from_env()?)
    }

    /// [`Tun::open`] with offloads on or off.
    pub fn open_with(ns: &Netns, name: &str, offload: bool) -> Result<Tun> {
        if name.is_empty()
            || name.len() > MAX_IFNAME
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(EmuError::Config(format!(
                "interface name {name:?}: 1..={MAX_IFNAME} of [A-Za-z0-9_-]"
            )));
        }
        let fd = ns.run_in(|| open_tun(name, offload))??;
        Ok(Tun {
            fd,
            name: name.to_string(),
            netns: ns.name().to_string(),
            vnet: offload.then(|| {
                Box::new(VnetRx {
                    scratch: Vec::with_capacity(MAX_READ),
                    seg: Segmenter::default(),
                    computed: false,
                })
            }),
        })
    }

    /// Whether the device was opened with offloads.
    pub fn offload(&self) -> bool {
        self.vnet.is_some()
    }

    /// Sets MTU, brings the device up, gives it `local/32` and a `/32` route to `peer`
    /// through it. Both addresses must be in the lab range.
    pub fn configure(&self, ns: &Netns, local: Ipv4Addr, peer: Ipv4Addr, mtu: u32) -> Result<()> {
        for ip in [local, peer] {
            if !in_lab_range(ip) {
                return Err(EmuError::Config(format!(
                    "address {ip} is outside the lab range 198.18.0.0/15"
                )));
            }
        }
        self.check_netns(ns)?;
        let mtu = mtu.to_string();
        ns.ip(&["link", "set", "dev", &self.name, "mtu", &mtu, "up"])?;
        ns.ip(&["addr", "add", &format!("{local}/32"), "dev", &self.name])?;
        ns.ip(&["route", "add", &format!("{peer}/32"), "dev", &self.name])?;
        Ok(())
    }

    /// Adds IPv6 to a device [`Tun::configure`] set up: `local/128` without duplicate
    /// address detection (`nodad`: nobody else is on the link) and a `/128` route to
    /// `peer` through it. Both must be in 2001:db8::/32. The namespace must have been
    /// made quiet first (`tools::lab::host`), so the kernel sends nothing but the
    /// lab's own traffic through the device.
    pub fn configure6(&self, ns: &Netns, local: Ipv6Addr, peer: Ipv6Addr) -> Result<()> {
        for ip in [local, peer] {
            if !in_lab_range6(ip) {
                return Err(EmuError::Config(format!(
                    "address {ip} is outside the lab's IPv6 range 2001:db8::/32"
                )));
            }
        }
        self.check_netns(ns)?;
        let (local, peer) = (format!("{local}/128"), format!("{peer}/128"));
        ns.ip(&["-6", "addr", "add", &local, "dev", &self.name, "nodad"])?;
        ns.ip(&["-6", "route", "add", &peer, "dev", &self.name])?;
        Ok(())
    }

    /// Addresses and routes go only into the namespace the device lives in.
    fn check_netns(&self, ns: &Netns) -> Result<()> {
        if ns.name() != self.netns {
            return Err(EmuError::Config(format!(
                "{} lives in {}, not {}",
                self.name,
                self.netns,
                ns.name()
            )));
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace the device lives in.
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// Reads one packet into `buf` (cleared; its capacity is the most read, at least
    /// 2048 is reserved). `Ok(false)` when no packet is waiting. With offloads, one
    /// MSS-sized segment of the current super-packet per call, checksums complete; a
    /// malformed header is an `InvalidData` error (the packet is dropped).
    pub fn recv(&mut self, buf: &mut Vec<u8>) -> io::Result<bool> {
        if self.vnet.is_some() {
            return self.recv_vnet(buf);
        }
        buf.clear();
        if buf.capacity() < 2048 {
            buf.reserve(2048);
        }
        // SAFETY: reads at most `capacity` bytes into the Vec's own allocation; the
        // length is set to what the kernel wrote.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.capacity()) };
        match cvt_size(n) {
            Ok(n) => {
                // SAFETY: the kernel initialised the first `n <= capacity` bytes.
                unsafe { buf.set_len(n) };
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Packets the kernel dropped on their way to this device's reader (the TX `drop`
    /// column of `/proc/net/dev`: `tun_net_xmit` drops when the ring of `txqueuelen`
    /// packets is full, i.e. when the reader falls behind). Read from a thread inside
    /// the device's namespace, since /proc/thread-self/net is per namespace.
    pub fn tx_dropped(&self) -> Result<u64> {
        let name = self.name.clone();
        let text = crate::os::netns::run_in_named(&self.netns, || {
            std::fs::read_to_string("/proc/thread-self/net/dev")
        })?
        .map_err(|e| EmuError::io("reading /proc/thread-self/net/dev", e))?;
        parse_tx_dropped(&text, &name).ok_or_else(|| {
            EmuError::Config(format!("{name} is not in /proc/net/dev of {}", self.netns))
        })
    }

    /// Whether the packet the last [`Tun::recv`] returned carries a TCP checksum
    /// computed here (cut out of a super-packet by the segmenter), so good by
    /// construction (`emu::side::Side::recv_csum_valid`).
    pub fn recv_csum_valid(&self) -> bool {
        self.vnet.as_ref().is_some_and(|rx| rx.computed)
    }

    fn recv_vnet(&mut self, buf: &mut Vec<u8>) -> io::Result<bool> {
        let fd = self.fd.as_raw_fd();
        let Some(rx) = self.vnet.as_deref_mut() else {
            return Ok(false);
        };
        rx.computed = false;
        if rx.seg.pending() {
            rx.computed = true;
            if let Some(pkt) = rx.scratch.get(VNET_HDR_LEN..) {
                return Ok(rx.seg.next(pkt, buf));
            }
        }
        rx.scratch.clear();
        // SAFETY: reads at most `capacity` bytes into the Vec's own allocation.
        let n = unsafe { libc::read(fd, rx.scratch.as_mut_ptr().cast(), rx.scratch.capacity()) };
        let n = match cvt_size(n) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        };
        // SAFETY: the kernel initialised the first `n <= capacity` bytes.
        unsafe { rx.scratch.set_len(n) };
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let hdr = VnetHdr::parse(&rx.scratch).ok_or_else(|| bad("short virtio header"))?;
        let pkt = &rx.scratch[VNET_HDR_LEN..];
        if hdr.gso_type == GSO_NONE {
            buf.clear();
            buf.extend_from_slice(pkt);
            if hdr.flags & F_NEEDS_CSUM != 0 {
                vnet::complete_checksum(
                    buf,
                    usize::from(hdr.csum_start),
                    usize::from(hdr.csum_offset),
                )
                .map_err(|_| bad("virtio checksum offsets outside the packet"))?;
            }
            // Not marked computed even when completed here: the field completed is
            // wherever the kernel's offsets point, which need not be TCP's.
            return Ok(true);
        }
        rx.seg = Segmenter::start(pkt, &hdr)
            .map_err(|e| bad(&format!("unusable GSO super-packet: {e:?}")))?;
        rx.computed = true;
        Ok(rx.seg.next(pkt, buf))
    }

    /// Writes one packet. `Ok(false)` if the device would block (the packet is not sent).
    pub fn send(&self, pkt: &[u8]) -> io::Result<bool> {
        let n = if self.vnet.is_some() {
            // A zero virtio header: one plain packet whose checksums the receiving
            // kernel verifies itself (so corrupted packets stay corrupted).
            let iov = [
                libc::iovec {
                    iov_base: vnet::ZERO_HDR.as_ptr() as *mut libc::c_void,
                    iov_len: VNET_HDR_LEN,
                },
                libc::iovec {
                    iov_base: pkt.as_ptr() as *mut libc::c_void,
                    iov_len: pkt.len(),
                },
            ];
            // SAFETY: two iovecs over live, readable slices; writev does not write them.
            unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), 2) }
        } else {
            // SAFETY: writes `pkt.len()` bytes from a live slice.
            unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) }
        };
        match cvt_size(n) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Tun {
    /// Writes one TCP super-packet in one `writev`: the virtio header `hdr`, the merged
    /// header `head`, then `payloads` straight from the members' buffers (no copy
    /// here; `tun_get_user` copies once into the skb). Only with offloads; at most
    /// [`gro::MAX_RUN`] payloads. `Ok(false)` if the device would block; an error
    /// (such as `EINVAL` from `virtio_net_hdr_to_skb`) sends nothing.
    pub fn send_gso(&self, hdr: &VnetHdr, head: &[u8], payloads: &[&[u8]]) -> io::Result<bool> {
        if self.vnet.is_none() || payloads.len() > gro::MAX_RUN {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let vh = hdr.emit();
        let empty = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        // On the stack: no allocation per write.
        let mut iov = [empty; gro::MAX_RUN + 2];
        let bufs = [&vh[..], head].into_iter().chain(payloads.iter().copied());
        let mut n = 0;
        for (slot, b) in iov.iter_mut().zip(bufs) {
            *slot = libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            };
            n += 1;
        }
        // SAFETY: `n` iovecs over live, readable slices; writev does not write them.
        let r = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), n as libc::c_int) };
        match cvt_size(r) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The TX drop count of `dev` in a `/proc/net/dev` text: after `name:` come 8 receive
/// and 8 transmit columns; TX drop is the 12th (index 11).
fn parse_tx_dropped(text: &str, dev: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (name, cols) = l.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        cols.split_whitespace().nth(11)?.parse().ok()
    })
}

fn open_tun(name: &str, offload: bool) -> Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").map_err(|e| EmuError::Config(e.to_string()))?;
    // SAFETY: `path` is a valid C string.
    let raw = cvt(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })
    .map_err(|e| EmuError::io("opening /dev/net/tun", e))?;
    // SAFETY: `raw` was just returned by open and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut req = IfReq {
        name: [0; 16],
        flags: (libc::IFF_TUN
            | libc::IFF_NO_PI
            | if offload { libc::IFF_VNET_HDR } else { 0 }
            | if napi_from_env() { IFF_NAPI } else { 0 }) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which `IfReq` lays out.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut req) })
        .map_err(|e| EmuError::io(format!("TUNSETIFF {name}"), e))?;
    if offload {
        // What we can take apart: partial checksums and TCP segmentation (IPv4, IPv6,
        // with CWR). No UDP offloads: the segmenter only knows TCP.
        let feat = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO6 | libc::TUN_F_TSO_ECN;
        // SAFETY: TUNSETOFFLOAD takes the feature bits as its integer argument.
        cvt(unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                libc::TUNSETOFFLOAD as _,
                feat as libc::c_ulong,
            )
        })
        .map_err(|e| EmuError::io(format!("TUNSETOFFLOAD {name}"), e))?;
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_drops_are_read_from_proc_net_dev() {
        let text = "Inter-|   Receive                            |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\nbrisk-tun: 9000 6 0 1 0 0 0 0 12000 8 0 42 0 0 0 0\n";
        assert_eq!(parse_tx_dropped(text, "brisk-tun"), Some(42));
        assert_eq!(parse_tx_dropped(text, "lo"), Some(0));
        assert_eq!(parse_tx_dropped(text, "eth0"), None);
        assert_eq!(parse_tx_dropped("brisk-tun: 1 2", "brisk-tun"), None);
    }
}
