//! Reno/NewReno (RFC 5681, RFC 6582).

#[derive(Debug, Default)]
pub struct Reno;
impl super::CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn cong_avoid(&mut self, _cc: &mut super::CcState, _ack: &super::AckSample) {
        todo!()
    }
    fn ssthresh(&mut self, _cc: &mut super::CcState, _now: brisk_time::Instant) -> u32 {
        todo!()
    }
}
