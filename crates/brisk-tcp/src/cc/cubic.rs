//! CUBIC (RFC 9438), as Linux runs it.

#[derive(Debug, Default)]
pub struct Cubic;
impl super::CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cong_avoid(&mut self, _cc: &mut super::CcState, _ack: &super::AckSample) {
        todo!()
    }
    fn ssthresh(&mut self, _cc: &mut super::CcState, _now: brisk_time::Instant) -> u32 {
        todo!()
    }
}
