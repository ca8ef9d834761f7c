//! Why a PDF could not be read, as the reader's parts say it; `mod.rs` words it for the caller.

#[derive(Debug)]
pub enum Problem {
    /// Encrypted with a password: nothing in it can be read without it.
    Encrypted,
    /// A stream, or all of them together, would inflate past the reader's bound.
    TooLarge(String),
    /// Damaged, cut short or not a PDF: the reason.
    Unreadable(String),
}
