//! Which models read a document given as it is ([`Attachment`]: an image, a PDF with pages that
//! have no text layer), and how much each provider takes inline. The table follows the
//! providers' model pages; `structure_vision=on` says so for any other endpoint (a local vision
//! model, a gateway), `off` never sends one. A document a model cannot read, or one over its
//! provider's limits, is an `invalid-document` error before any LLM call, naming the ways out.

use crate::error::StructureError;
use crate::keys;
use crate::media_type::{Attachment, MediaType};
use crate::settings::Vision as Choice;

/// What a model reads besides text, and the provider's limits on a document sent inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vision {
    pub images: bool,
    pub pdfs: bool,
    /// The most bytes of one image.
    pub image_bytes: usize,
    /// The most bytes of one PDF.
    pub pdf_bytes: usize,
    /// The most pages of one PDF.
    pub pdf_pages: usize,
}

const MB: usize = 1 << 20;

/// Reads nothing but text.
pub const NONE: Vision = Vision {
    images: false,
    pdfs: false,
    image_bytes: 0,
    pdf_bytes: 0,
    pdf_pages: 0,
};

/// OpenAI: an image's data URL up to 20 MiB (its bytes 15 MB in base64); PDFs as `file` parts,
/// 32 MB and 100 pages a request.
const OPENAI: Vision = Vision {
    images: true,
    pdfs: true,
    image_bytes: 15 * MB,
    pdf_bytes: 32 * MB,
    pdf_pages: 100,
};

/// Anthropic: images up to 5 MB each through the API; PDFs as `document` blocks, 32 MB and
/// 100 pages a request.
const ANTHROPIC: Vision = Vision {
    images: true,
    pdfs: true,
    image_bytes: 5 * MB,
    pdf_bytes: 32 * MB,
    pdf_pages: 100,
};

/// Gemini: `inline_data` parts, the whole request under 20 MB; PDFs up to 1,000 pages.
const GEMINI: Vision = Vision {
    images: true,
    pdfs: true,
    image_bytes: 20 * MB,
    pdf_bytes: 20 * MB,
    pdf_pages: 1000,
};

/// What `model` of `provider` reads, as `choice` (`structure_vision`) says; `max_bytes` bounds
/// an endpoint the table does not know (`structure_max_document_bytes`).
pub fn of(provider: &str, model: &str, choice: Choice, max_bytes: usize) -> Vision {
    let known = known(provider, &model.to_ascii_lowercase());
    match choice {
        Choice::Off => NONE,
        Choice::Auto => known.unwrap_or(NONE),
        Choice::On => known.unwrap_or(Vision {
            images: true,
            pdfs: true,
            image_bytes: max_bytes,
            pdf_bytes: max_bytes,
            pdf_pages: usize::MAX,
        }),
    }
}

/// The table: the providers' models that read images and PDFs.
fn known(provider: &str, model: &str) -> Option<Vision> {
    match provider {
        "openai" => {
            let reads = [
                "gpt-4o",
                "chatgpt-4o",
                "gpt-4.1",
                "gpt-4.5",
                "gpt-5",
                "o1",
                "o3",
                "o4",
            ]
            .iter()
            .any(|family| model.starts_with(family))
                && !model.starts_with("o1-mini")
                && !model.starts_with("o3-mini");
            reads.then_some(OPENAI)
        }
        "anthropic" => {
            let reads = [
                "claude-3",
                "claude-sonnet-4",
                "claude-opus-4",
                "claude-haiku-4",
            ]
            .iter()
            .any(|family| model.starts_with(family));
            // Claude 3 Haiku and Opus read images, not PDFs.
            let pdfs = !(model.starts_with("claude-3-haiku") || model.starts_with("claude-3-opus"));
            reads.then_some(Vision { pdfs, ..ANTHROPIC })
        }
        "google" | "gemini" => model.starts_with("gemini-").then_some(GEMINI),
        _ => None,
    }
}

impl Vision {
    /// Whether the model can be given `attachment` (`scanned`: a PDF's pages without a text
    /// layer), or why not: a typed error naming the ways out.
    pub fn check(
        &self,
        attachment: &Attachment,
        scanned: &[u32],
        model: &str,
    ) -> Result<(), StructureError> {
        let is_pdf = attachment.media_type == MediaType::Pdf;
        let reads = if is_pdf { self.pdfs } else { self.images };
        if !reads {
            return Err(cannot_read(attachment, scanned, model));
        }
        let (limit, what) = match is_pdf {
            true => (self.pdf_bytes, "PDF"),
            false => (self.image_bytes, "image"),
        };
        if attachment.bytes.len() > limit {
            return Err(StructureError::invalid_document(
                "too-large",
                format!(
                    "the {what} is {} bytes, over the {} bytes {model} takes in one request: send \
                     a smaller {what}{}",
                    attachment.bytes.len(),
                    limit,
                    if is_pdf {
                        ", fewer pages, or its pages after `ocrmypdf` adds a text layer"
                    } else {
                        " (scaled down, or cut to what matters)"
                    }
                ),
            ));
        }
        if let Some(pages) = attachment
            .pages
            .filter(|&pages| is_pdf && pages > self.pdf_pages)
        {
            return Err(StructureError::invalid_document(
                "too-many-pages",
                format!(
                    "the PDF has {pages} pages, over the {} {model} reads in one request: send \
                     the pages that matter, or add a text layer with `ocrmypdf` first",
                    self.pdf_pages
                ),
            ));
        }
        Ok(())
    }
}

/// The error for a document `model` cannot read, naming both ways out.
fn cannot_read(attachment: &Attachment, scanned: &[u32], model: &str) -> StructureError {
    let ways_out = format!(
        "use a model that reads images (OpenAI's GPT-4o, GPT-4.1 and GPT-5, Claude 3 and 4, \
         Gemini; {} = on for another endpoint that does)",
        keys::VISION
    );
    if attachment.media_type == MediaType::Pdf {
        let pages: Vec<String> = scanned.iter().map(u32::to_string).collect();
        let which = match scanned.len() == attachment.pages.unwrap_or(0) {
            true => "this PDF has no text layer (a scan, or pages of images)".to_owned(),
            false => format!(
                "pages {} of this PDF have no text layer (scans, or images)",
                pages.join(", ")
            ),
        };
        return StructureError::invalid_document(
            "no-text-layer",
            format!(
                "{which}, and {model} does not read PDFs as pictures: run OCR on it first \
                 (`ocrmypdf scan.pdf scan-ocr.pdf`; it is then read with spans and boxes), or {ways_out}"
            ),
        );
    }
    StructureError::invalid_document(
        "needs-vision",
        format!(
            "the document is an image ({}), and {model} does not read images: {ways_out}, or \
             send its text (OCR it first: `ocrmypdf image.png image.pdf`)",
            attachment.media_type.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(bytes: usize) -> Attachment {
        Attachment {
            media_type: MediaType::Png,
            bytes: vec![0; bytes].into(),
            pages: None,
        }
    }

    fn reason(error: StructureError) -> String {
        match error.kind {
            crate::error::ErrorKind::InvalidDocument { reason } => reason,
            other => panic!("not a document error: {other:?}"),
        }
    }

    #[test]
    fn the_table_knows_the_hosted_models_that_read_and_the_setting_says_so_for_others() {
        let auto = |provider, model| of(provider, model, Choice::Auto, MB);
        assert!(auto("openai", "gpt-4.1-mini").images);
        assert!(!auto("openai", "o3-mini").images);
        assert!(auto("anthropic", "claude-sonnet-4-5").pdfs);
        assert!(!auto("anthropic", "claude-3-haiku-20240307").pdfs);
        assert!(auto("google", "gemini-2.5-flash").pdfs);
        assert_eq!(auto("openai", "local"), NONE);
        assert!(of("openai", "local", Choice::On, MB).images);
        assert_eq!(of("openai", "gpt-4o", Choice::Off, MB), NONE);
    }

    #[test]
    fn what_a_model_cannot_take_is_a_typed_error_naming_the_ways_out() {
        let error = NONE.check(&image(10), &[], "openai/local").unwrap_err();
        assert!(
            error.message.contains(keys::VISION) && error.message.contains("ocrmypdf"),
            "{error}"
        );
        assert_eq!(reason(error), "needs-vision");
        let scan = Attachment {
            media_type: MediaType::Pdf,
            bytes: vec![0; 10].into(),
            pages: Some(3),
        };
        let error = NONE.check(&scan, &[2, 3], "openai/local").unwrap_err();
        assert!(error.message.contains("pages 2, 3"), "{error}");
        assert_eq!(reason(error), "no-text-layer");
        let error = ANTHROPIC
            .check(&image(5 * MB + 1), &[], "anthropic/claude-sonnet-4-5")
            .unwrap_err();
        assert!(error.message.contains("5242880 bytes"), "{error}");
        assert_eq!(reason(error), "too-large");
        let long = Attachment {
            pages: Some(101),
            ..scan
        };
        assert_eq!(
            reason(OPENAI.check(&long, &[1], "openai/gpt-4.1").unwrap_err()),
            "too-many-pages"
        );
        assert!(
            ANTHROPIC
                .check(&image(5 * MB), &[], "anthropic/claude-sonnet-4-5")
                .is_ok()
        );
    }
}
