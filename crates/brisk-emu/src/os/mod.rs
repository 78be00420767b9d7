//! What the lab needs from the operating system: network namespaces and TUN devices,
//! their cleanup, the monotonic clock and timerfd, epoll and the eventfd waker.

pub mod cleanup;
pub mod clock;
pub mod gro;
pub mod netns;
pub mod poll;
pub mod tun;
pub mod vnet;
pub mod wake;
