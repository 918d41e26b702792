mod config;
mod core;
mod rng;
mod trace;
#[cfg(test)]
mod core_tests;
fn main() {}
