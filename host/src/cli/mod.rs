//! The `structure` command, a file a concern: its arguments, what it prints and exits with,
//! and each command that is more than a call.

pub mod arguments;
pub mod batch;
#[cfg(feature = "embedded")]
pub mod model;
pub mod output;
pub mod review;
pub mod run;
pub mod schemas;
pub mod serve;
