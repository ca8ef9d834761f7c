//! What a provider batch has sent and received, kept beside the output file (`OUT` +
//! `.provider-batch.jsonl`), so that a run stopped at any point resumes where it was: the
//! batches it submitted are polled again (never submitted twice), and the answers it has are
//! never asked for again (never paid twice).
//!
//! One JSON line an event, written whole ([`Lines`]):
//! - `{"batch": id, "api": "openai" | "anthropic" | "gemini", "requests": [key, ...]}` when a
//!   provider accepted a batch;
//! - `{"item": id, "clock": unix_ms}` when an item first waits on a batch: the instant its
//!   instance's clock stands at in every run (so its requests stay the same);
//! - `{"answer": key, "status": 200, "body": "..."}` for each answer a batch gave;
//! - `{"ended": id}` when every answer of a batch is written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::requests::{Api, Key};
use crate::batch::lines::Lines;
use crate::relay::Answer;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Event {
    Submitted {
        batch: String,
        api: Api,
        requests: Vec<Key>,
    },
    Answered {
        answer: Key,
        status: u16,
        body: String,
    },
    Ended {
        ended: String,
    },
    Clock {
        item: String,
        clock: u64,
    },
}

/// A batch submitted and not yet ended when the journal was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub batch: String,
    pub api: Api,
    pub requests: Vec<Key>,
}

/// What a journal held when it was opened.
#[derive(Debug, Default)]
pub struct Restored {
    pub answers: HashMap<Key, Answer>,
    pub pending: Vec<Pending>,
    /// Each item's clock, in unix milliseconds.
    pub clocks: HashMap<String, u64>,
}

/// The journal, open for appending.
pub struct Journal {
    lines: Lines,
}

/// Where the journal of the batch writing to `output` is.
pub fn beside(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".provider-batch.jsonl");
    PathBuf::from(name)
}

impl Journal {
    /// Opens (or creates) the journal at `path` and reads what it holds.
    pub fn open(path: &Path) -> Result<(Self, Restored), String> {
        let (lines, written) = Lines::open(path)?;
        let mut restored = Restored::default();
        for (number, line) in written {
            let event = serde_json::from_slice::<Event>(&line).map_err(|_| {
                format!(
                    "{} line {number} is not a line of a provider batch's journal: move the file \
                     away to start the provider batch afresh",
                    path.display()
                )
            })?;
            match event {
                Event::Submitted {
                    batch,
                    api,
                    requests,
                } => restored.pending.push(Pending {
                    batch,
                    api,
                    requests,
                }),
                Event::Answered {
                    answer,
                    status,
                    body,
                } => {
                    let body = Bytes::from(body);
                    restored.answers.insert(answer, Answer { status, body });
                }
                Event::Ended { ended } => restored.pending.retain(|batch| batch.batch != ended),
                Event::Clock { item, clock } => {
                    restored.clocks.insert(item, clock);
                }
            }
        }
        Ok((Self { lines }, restored))
    }

    /// Appends `event`, whole.
    pub fn write(&mut self, event: &Event) -> Result<(), String> {
        self.lines.append(event)
    }

    /// Removes the journal: every item has its line, nothing is pending.
    pub fn remove(self) -> Result<(), String> {
        let path = self.lines.path().to_owned();
        drop(self.lines);
        std::fs::remove_file(&path)
            .map_err(|error| format!("cannot remove {}: {error}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reopened_journal_has_the_answers_and_the_batches_not_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = beside(&dir.path().join("out.jsonl"));
        assert!(path.ends_with("out.jsonl.provider-batch.jsonl"));
        let (mut journal, restored) = Journal::open(&path).unwrap();
        assert!(restored.answers.is_empty() && restored.pending.is_empty());
        let key = |text: &str| Key(text.to_owned());
        for event in [
            Event::Submitted {
                batch: "b1".into(),
                api: Api::OpenAi,
                requests: vec![key("k1"), key("k2")],
            },
            Event::Submitted {
                batch: "b2".into(),
                api: Api::Anthropic,
                requests: vec![key("k3")],
            },
            Event::Answered {
                answer: key("k1"),
                status: 200,
                body: "{\"a\":1}".into(),
            },
            Event::Ended { ended: "b1".into() },
            Event::Clock {
                item: "7".into(),
                clock: 1_700_000_000_000,
            },
        ] {
            journal.write(&event).unwrap();
        }
        drop(journal);
        // A line torn by a crash is cut off.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"answer\":\"k3\",\"sta");
        std::fs::write(&path, text).unwrap();
        let (_, restored) = Journal::open(&path).unwrap();
        assert_eq!(
            restored.answers[&key("k1")],
            Answer {
                status: 200,
                body: Bytes::from("{\"a\":1}")
            }
        );
        assert_eq!(restored.answers.len(), 1);
        assert_eq!(restored.clocks["7"], 1_700_000_000_000);
        assert_eq!(
            restored.pending,
            [Pending {
                batch: "b2".into(),
                api: Api::Anthropic,
                requests: vec![key("k3")]
            }]
        );
        std::fs::write(&path, "{\"something\": 1}\n").unwrap();
        let error = Journal::open(&path).err().unwrap();
        assert!(
            error.contains("line 1 is not a line of a provider batch"),
            "{error}"
        );
    }
}
