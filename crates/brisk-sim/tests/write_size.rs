//! The bulk app's `write_size` (Minion's write-size sweep, MN-7): every byte arrives
//! intact whatever the write size, prioritised send (each write a whole record) moves
//! the same bytes as plain TCP, and bad sizes are errors naming the field.

use brisk_sim::{run, Scenario};

fn scenario(write: u64, unordered_send: bool) -> String {
    format!(
        r#"
name = "write-size"
duration = "30s"
[bottleneck]
rate = "20Mbit"
queue = {{ kind = "droptail", packets = 100 }}
loss = {{ kind = "bernoulli", p = 0.01 }}
[[flow]]
rtt = "60ms"
cc = "cubic"
app = {{ kind = "bulk", bytes = "3MB", write_size = "{write}B" }}
[flow.tcp]
send_buffer = "256KB"
unordered_send = {unordered_send}
"#
    )
}

#[test]
fn every_write_size_delivers_every_byte_and_prioritised_send_costs_nothing() {
    for write in [100u64, 1000, 1448, 4000] {
        let fct = |u: bool| {
            let sc = Scenario::from_toml_str(&scenario(write, u)).unwrap();
            let r = run(&sc, 5).unwrap();
            let f = &r.flows[0];
            assert!(
                f.stream_ok,
                "m = {write}, unordered_send = {u}: stream intact"
            );
            assert_eq!(
                f.bytes_delivered, 3_000_000,
                "m = {write}, unordered_send = {u}"
            );
            f.fct.expect("completes").as_secs_f64()
        };
        let (tcp, utcp) = (fct(false), fct(true));
        // brisk counts bytes and builds segments across write boundaries, so a write
        // being a record of its own changes no segment (MN-7's byte-counting claim).
        assert!(
            (utcp / tcp - 1.0).abs() <= 0.03,
            "m = {write}: uTCP {utcp:.3} s vs TCP {tcp:.3} s"
        );
    }
}

#[test]
fn bad_write_sizes_name_the_field() {
    let e = Scenario::from_toml_str(&scenario(0, false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("flow[0].app.write_size") && e.contains("between 1 B"),
        "{e}"
    );
    let e = Scenario::from_toml_str(&scenario(300_000, true))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("flow[0].app.write_size") && e.contains("send buffer"),
        "{e}"
    );
    // Without prioritised send a write larger than the buffer is just a partial write.
    assert!(Scenario::from_toml_str(&scenario(300_000, false)).is_ok());
}
