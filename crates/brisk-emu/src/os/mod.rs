//! What the lab needs from the operating system: network namespaces and TUN devices,
//! their cleanup, the monotonic clock and timerfd, epoll, the eventfd waker and the
//! loop thread's real-time scheduling.

pub mod cleanup;
pub mod clock;
pub mod gro;
pub mod netns;
pub mod pi_lock;
pub mod poll;
pub mod sched;
pub mod tun;
pub mod vnet;
pub mod wake;
