//! The `structure` command's subcommands that have files of their own.

pub mod batch;
