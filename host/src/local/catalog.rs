//! The models the embedded engine knows by name: where each one is fetched from, and what its
//! bytes must be.

/// A model the engine can fetch: one file of a repository on a model hub, at a revision, with
/// the size and SHA-256 its bytes must have before it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCard {
    /// What `STRUCTURE_MODEL=local/<name>` calls it; the trace names it `llamacpp/<name>`.
    pub name: &'static str,
    /// As its makers name it.
    pub title: &'static str,
    /// The repository on the hub (`owner/name`).
    pub repo: &'static str,
    /// The revision the file is fetched at. The bytes are pinned by [`ModelCard::sha256`]
    /// whatever the revision holds: a file that changed there fails the check.
    pub revision: &'static str,
    /// The file in the repository: a GGUF.
    pub file: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, in lower-case hex.
    pub sha256: &'static str,
    /// Its licence.
    pub license: &'static str,
}

/// Every model the engine fetches by name; the first is the default.
pub const CATALOG: [ModelCard; 1] = [ModelCard {
    name: "qwen2.5-coder-0.5b-instruct",
    title: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
    repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    revision: "main",
    file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size: 491_400_064,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license: "Apache-2.0",
}];

/// The model used when none is named: the one the eval measures (EVAL.md).
pub const DEFAULT: &ModelCard = &CATALOG[0];

/// The model the catalog calls `name`.
///
/// ```
/// use structure_host::local::card;
///
/// assert_eq!(card("qwen2.5-coder-0.5b-instruct").map(|card| card.size), Some(491_400_064));
/// assert!(card("gpt-4").is_none());
/// ```
pub fn card(name: &str) -> Option<&'static ModelCard> {
    CATALOG.iter().find(|card| card.name == name)
}

/// The catalog's names, for messages: `a, b`.
pub fn names() -> String {
    let names: Vec<&str> = CATALOG.iter().map(|card| card.name).collect();
    names.join(", ")
}
