//! Nothing but a home for the micro-benchmarks in `benches/hot.rs` (`make bench-micro`).
