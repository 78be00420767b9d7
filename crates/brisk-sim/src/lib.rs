//! brisk-sim: the deterministic discrete-event simulator.
