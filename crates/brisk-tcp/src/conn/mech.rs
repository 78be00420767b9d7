//! Sender mechanisms beside the primary send loop (see `Mechanisms`).

/// The sender mechanisms a connection runs.
#[derive(Debug, Default)]
pub(super) struct Mechanisms {
    /// RC3's recursive-low-priority loop (`crate::rc3::rlp`), when RC3 is on. Boxed:
    /// most connections do not run it.
    pub rlp: Option<Box<crate::rc3::rlp::Rlp>>,
}
