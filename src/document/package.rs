//! An Office Open XML package (a Word document, a spreadsheet): a zip archive whose parts are
//! read by name, each inflated within a bound and checked against its CRC. Read by rawzip (no
//! copy of the archive, no writer), inflated by miniz_oxide (already the PDF reader's): the
//! component carries one zip reader and one inflater for every format.

use quick_xml::events::BytesRef;
use rawzip::{CompressionMethod, ZipArchive, ZipSliceArchive};

use crate::error::StructureError;

/// The most bytes a part may inflate to: a package a few megabytes large can claim gigabytes
/// (a zip bomb).
pub const MAX_PART_BYTES: usize = 128 << 20;
/// The most entries of a package looked through for a part.
const MAX_ENTRIES: usize = 10_000;

/// A package, and what its errors call it (`Word document`, `spreadsheet`) and tell the user to
/// do.
pub struct Package<'b> {
    archive: ZipSliceArchive<&'b [u8]>,
    kind: &'static str,
    remedy: &'static str,
}

impl<'b> Package<'b> {
    /// The package `bytes`, a `kind` of document (for messages), whose errors end with `remedy`.
    pub fn open(
        bytes: &'b [u8],
        kind: &'static str,
        remedy: &'static str,
    ) -> Result<Self, StructureError> {
        let archive = ZipArchive::from_slice(bytes).map_err(|error| {
            unreadable(kind, remedy, &format!("it is not a zip package ({error})"))
        })?;
        Ok(Package {
            archive,
            kind,
            remedy,
        })
    }

    /// The part named `name`, inflated and checked; `None` when the package has none.
    pub fn part(&self, name: &str) -> Result<Option<Vec<u8>>, StructureError> {
        let mut entries = self.archive.entries();
        for _ in 0..MAX_ENTRIES {
            let entry = match entries.next_entry() {
                Ok(Some(entry)) => entry,
                Ok(None) => return Ok(None),
                Err(error) => {
                    return Err(self.unreadable(&format!("its zip directory is damaged ({error})")));
                }
            };
            if entry.file_path().as_ref() != name.as_bytes() {
                continue;
            }
            if entry.uncompressed_size_hint() > MAX_PART_BYTES as u64 {
                return Err(self.too_large(name));
            }
            let damaged = |error| self.unreadable(&format!("its part {name} is damaged ({error})"));
            let found = (self.archive.get_entry(entry.wayfinder())).map_err(damaged)?;
            let data = match entry.compression_method() {
                CompressionMethod::STORE => found
                    .data()
                    .get(..entry.compressed_size_hint() as usize)
                    .ok_or_else(|| self.unreadable(&format!("its part {name} is cut short")))?
                    .to_vec(),
                CompressionMethod::DEFLATE => self.inflate(found.data(), name)?,
                other => {
                    return Err(self.unreadable(&format!(
                        "its part {name} is compressed with {other:?}, which Office does not write"
                    )));
                }
            };
            let actual = rawzip::ZipVerification {
                crc: rawzip::crc32(&data),
                uncompressed_size: data.len() as u64,
            };
            (found.claim_verifier().valid(actual)).map_err(|error| {
                self.unreadable(&format!("its part {name} is corrupt ({error})"))
            })?;
            return Ok(Some(data));
        }
        Ok(None)
    }

    /// The part named `name` as text: it must be there, in UTF-8.
    pub fn text_part(&self, name: &str) -> Result<String, StructureError> {
        self.optional_text_part(name)?
            .ok_or_else(|| self.missing(name))
    }

    /// The part named `name` as text, when the package has it: in UTF-8.
    pub fn optional_text_part(&self, name: &str) -> Result<Option<String>, StructureError> {
        let Some(bytes) = self.part(name)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| self.unreadable(&format!("its part {name} is not UTF-8 XML")))?;
        Ok(Some(text))
    }

    /// That the package has no part `name`: it is a zip file, but not this kind of document.
    pub fn missing(&self, name: &str) -> StructureError {
        self.unreadable(&format!(
            "it has no {name}: it is a zip file, but not a {}",
            self.kind
        ))
    }

    /// An error of this package: `why` it cannot be read.
    pub fn unreadable(&self, why: &str) -> StructureError {
        unreadable(self.kind, self.remedy, why)
    }

    /// Raw deflate, at most [`MAX_PART_BYTES`] of it.
    fn inflate(&self, data: &[u8], name: &str) -> Result<Vec<u8>, StructureError> {
        use miniz_oxide::inflate::{TINFLStatus, decompress_to_vec_with_limit};
        decompress_to_vec_with_limit(data, MAX_PART_BYTES).map_err(|error| match error.status {
            TINFLStatus::HasMoreOutput => self.too_large(name),
            _ => self.unreadable(&format!("its part {name} does not inflate")),
        })
    }

    fn too_large(&self, name: &str) -> StructureError {
        StructureError::invalid_document(
            "too-large",
            format!(
                "the {}'s part {name} inflates past {} MiB (a zip bomb, or a document too large \
                 to read): {}",
                self.kind,
                MAX_PART_BYTES >> 20,
                self.remedy
            ),
        )
    }
}

/// The text an XML reference in a part stands for (`&amp;`, `&#233;`): a character, or one of
/// XML's five entities; `Err` with why for any other (no entity a document declares is
/// expanded).
pub fn referenced(reference: &BytesRef<'_>) -> Result<String, String> {
    let character = (reference.resolve_char_ref())
        .map_err(|error| format!("a character reference is bad ({error})"))?;
    let name: &str = reference;
    match character {
        Some(character) => Ok(character.to_string()),
        None => quick_xml::escape::resolve_predefined_entity(name)
            .map(str::to_owned)
            .ok_or_else(|| format!("it uses an undefined entity &{name};")),
    }
}

fn unreadable(kind: &str, remedy: &str, why: &str) -> StructureError {
    StructureError::invalid_document(
        "unreadable",
        format!("this {kind} cannot be read: {why}; {remedy}"),
    )
}
