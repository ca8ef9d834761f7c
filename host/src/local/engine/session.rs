//! llama.cpp in process (through `llama-cpp-2`): one model, one context of one sequence, and the
//! tokens that context holds, so that a request that starts as the one before did (the system
//! prompt; a document a second look reads again) decodes only what is new. Answers are greedy,
//! as a server at temperature 0 gives them; a schema's grammar is tried on the likeliest token
//! first and applied to the whole vocabulary only when it refuses that one (what llama.cpp's
//! own sampler does), after the repeat penalty over the answer's last tokens; each token's
//! log-probability is its raw logit's among the whole vocabulary, as llama.cpp's server reports
//! `logprobs`.

use std::num::NonZeroU32;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use serde_json::Value;

use crate::local::engine::wire::{Decoder, Finish, Generation, Sampled, Sampling, Token};

/// Tokens decoded at once: a prompt longer than this goes in batches of it.
const BATCH_TOKENS: usize = 512;
/// The smallest window a context is made with.
const MIN_WINDOW: u32 = 256;

/// A model and its context, ready to answer.
pub struct Session<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    /// The tokens the context holds, position by position.
    held: Vec<LlamaToken>,
    window: u32,
    /// The current logits with the repeat penalty applied (kept to reuse its allocation).
    scores: Vec<f32>,
}

impl<'m> Session<'m> {
    /// A context of `window` tokens (at most what the model was trained on) for `model`,
    /// decoding with `threads` threads.
    pub fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        window: u32,
        threads: i32,
    ) -> Result<Self, String> {
        let window = window.min(model.n_ctx_train()).max(MIN_WINDOW);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(window))
            .with_n_batch(BATCH_TOKENS as u32)
            .with_n_ubatch(BATCH_TOKENS as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let context = model
            .new_context(backend, params)
            .map_err(|error| format!("cannot make the model's context: {error}"))?;
        Ok(Self {
            model,
            context,
            batch: LlamaBatch::new(BATCH_TOKENS, 1),
            held: Vec::new(),
            window,
            scores: Vec::new(),
        })
    }

    /// Decodes `tokens` at the positions after what the context holds, keeping the last one's
    /// logits.
    fn decode(&mut self, tokens: &[LlamaToken]) -> Result<(), String> {
        let chunks = tokens.len().div_ceil(BATCH_TOKENS);
        for (index, chunk) in tokens.chunks(BATCH_TOKENS).enumerate() {
            self.batch.clear();
            for (offset, token) in chunk.iter().enumerate() {
                let position = i32::try_from(self.held.len()).map_err(|_| "the context is full")?;
                let logits = index + 1 == chunks && offset + 1 == chunk.len();
                self.batch
                    .add(*token, position, &[0], logits)
                    .map_err(|error| error.to_string())?;
                self.held.push(*token);
            }
            self.context
                .decode(&mut self.batch)
                .map_err(|error| format!("the model could not decode: {error}"))?;
        }
        Ok(())
    }

    /// Keeps what the context holds of `prompt`'s start, and decodes the rest of it: how many
    /// of its tokens were held already.
    fn prefill(&mut self, prompt: &[LlamaToken]) -> Result<usize, String> {
        let same = self
            .held
            .iter()
            .zip(prompt)
            .take_while(|(held, asked)| held == asked)
            .count();
        // The last token is decoded again when all is held: its logits are the answer's start.
        let kept = same.min(prompt.len().saturating_sub(1));
        let kept_u32 = u32::try_from(kept).map_err(|_| "the prompt is too long")?;
        self.context
            .clear_kv_cache_seq(Some(0), Some(kept_u32), None)
            .map_err(|error| error.to_string())?;
        self.held.truncate(kept);
        self.decode(&prompt[kept..])?;
        Ok(kept)
    }

    /// The next token within `grammar` (greedy, the repeat penalty applied over `recent`), and
    /// its log-probability and the `top` likeliest tokens among the raw logits.
    fn next(
        &mut self,
        grammar: Option<&mut LlamaSampler>,
        recent: &[LlamaToken],
        sampling: Sampling,
    ) -> Result<Next, String> {
        let at = self.batch.n_tokens() - 1;
        let logits = self.context.get_logits_ith(at);
        self.scores.clear();
        self.scores.extend_from_slice(logits);
        penalise(&mut self.scores, recent, sampling.repeat_penalty);
        let best = argmax(&self.scores).ok_or("the model gave no logits")?;
        let token = match grammar {
            None => best,
            Some(grammar) => allowed(&self.scores, best, grammar)
                .ok_or("the schema's grammar allows no token here")?,
        };
        let normaliser = log_sum_exp(logits);
        let logprob = |token: usize| f64::from(logits[token]) - normaliser;
        let likeliest = top_tokens(logits, sampling.top)
            .into_iter()
            .map(|token| (as_token(token), logprob(token)));
        Ok(Next {
            token: as_token(token),
            logprob: logprob(token),
            likeliest: likeliest.collect(),
        })
    }
}

/// A token chosen, its log-probability, and the likeliest tokens beside it.
struct Next {
    token: LlamaToken,
    logprob: f64,
    likeliest: Vec<(LlamaToken, f64)>,
}

/// llama.cpp's repeat penalty: each distinct token of `recent` has its score divided by
/// `penalty` when positive, multiplied when negative (1: nothing changes).
fn penalise(scores: &mut [f32], recent: &[LlamaToken], penalty: f32) {
    if (penalty - 1.0).abs() < f32::EPSILON {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    for token in recent {
        let Some(score) = usize::try_from(token.0)
            .ok()
            .and_then(|index| scores.get_mut(index))
        else {
            continue;
        };
        if seen.insert(token.0) {
            *score = if *score > 0.0 {
                *score / penalty
            } else {
                *score * penalty
            };
        }
    }
}

impl Decoder for Session<'_> {
    fn window(&self) -> u32 {
        self.window
    }

    fn template(&self, messages: &[(String, String)]) -> Result<String, String> {
        let template = (self.model.chat_template(None))
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|error| format!("no chat template: {error}"))?;
        let messages = (messages.iter())
            .map(|(role, content)| LlamaChatMessage::new(role.clone(), content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("a message cannot be read: {error}"))?;
        (self.model.apply_chat_template(&template, &messages, true))
            .map_err(|error| format!("the chat template cannot be applied: {error}"))
    }

    fn tokenize(&self, text: &str) -> Vec<Token> {
        let tokens = self.model.vocab().tokenize(text.as_bytes(), true, true);
        tokens.into_iter().map(|token| token.0).collect()
    }

    fn grammar(&self, schema: &Value) -> Result<String, String> {
        llama_cpp_2::json_schema_to_grammar(&schema.to_string())
            .map_err(|error| format!("the schema cannot be made a grammar: {error}"))
    }

    fn generate(
        &mut self,
        prompt: &[Token],
        grammar: Option<&str>,
        max_tokens: u32,
        sampling: Sampling,
    ) -> Result<Generation, String> {
        let prompt: Vec<LlamaToken> = prompt.iter().map(|&token| LlamaToken(token)).collect();
        if prompt.is_empty() {
            return Err("the prompt is empty".to_owned());
        }
        let cached_tokens = self.prefill(&prompt)?;
        let mut grammar = match grammar {
            Some(grammar) => Some(
                LlamaSampler::grammar(self.model, grammar, "root")
                    .map_err(|error| format!("the grammar cannot be read: {error}"))?,
            ),
            None => None,
        };
        let vocab = self.model.vocab();
        let piece = |token: LlamaToken| vocab.token_to_piece(token, false, None);
        let mut tokens = Vec::new();
        let mut answered: Vec<LlamaToken> = Vec::new();
        let mut finish = Finish::Length;
        // Bounded by `max_tokens`, and by the window below.
        while tokens.len() < max_tokens as usize {
            let recent = &answered[answered.len().saturating_sub(sampling.repeat_last_n)..];
            let Next {
                token,
                logprob,
                likeliest,
            } = self.next(grammar.as_mut(), recent, sampling)?;
            if vocab.is_eog(token) {
                finish = Finish::Stop;
                break;
            }
            if let Some(grammar) = grammar.as_mut() {
                grammar
                    .try_accept(token)
                    .map_err(|error| format!("the grammar refused its own token: {error}"))?;
            }
            let top = likeliest
                .into_iter()
                .map(|(token, logprob)| (piece(token), logprob))
                .collect();
            tokens.push(Sampled {
                bytes: piece(token),
                logprob,
                top,
            });
            answered.push(token);
            if tokens.len() == max_tokens as usize || self.held.len() >= self.window as usize {
                break;
            }
            self.decode(&[token])?;
        }
        Ok(Generation {
            tokens,
            finish,
            cached_tokens,
        })
    }
}

fn as_token(index: usize) -> LlamaToken {
    LlamaToken(i32::try_from(index).unwrap_or(i32::MAX))
}

/// The index of the largest logit.
fn argmax(logits: &[f32]) -> Option<usize> {
    (logits.iter().enumerate())
        .max_by(|(_, a), (_, b)| a.total_cmp(b))
        .map(|(index, _)| index)
}

/// `best` if `grammar` allows it, else the likeliest token it allows.
fn allowed(logits: &[f32], best: usize, grammar: &mut LlamaSampler) -> Option<usize> {
    let mut one = LlamaTokenDataArray::new(
        vec![LlamaTokenData::new(as_token(best), logits[best], 0.0)],
        false,
    );
    grammar.apply(&mut one);
    if one
        .data
        .first()
        .is_some_and(|data| data.logit() > f32::NEG_INFINITY)
    {
        return Some(best);
    }
    let every = (logits.iter().enumerate())
        .map(|(index, logit)| LlamaTokenData::new(as_token(index), *logit, 0.0));
    let mut every = LlamaTokenDataArray::from_iter(every, false);
    grammar.apply(&mut every);
    (every.data.iter())
        .filter(|data| data.logit() > f32::NEG_INFINITY)
        .max_by(|a, b| a.logit().total_cmp(&b.logit()))
        .and_then(|data| usize::try_from(data.id().0).ok())
}

/// `ln Σ exp(logit)`, computed from the largest.
fn log_sum_exp(logits: &[f32]) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits
        .iter()
        .map(|logit| f64::from(logit - max).exp())
        .sum();
    f64::from(max) + sum.ln()
}

/// The indices of the `count` largest logits, largest first.
fn top_tokens(logits: &[f32], count: usize) -> Vec<usize> {
    let mut top: Vec<usize> = Vec::with_capacity(count + 1);
    if count == 0 {
        return top;
    }
    for (index, logit) in logits.iter().enumerate() {
        if top.len() == count && *logit <= logits[top[count - 1]] {
            continue;
        }
        let at = top.partition_point(|&kept| logits[kept] >= *logit);
        top.insert(at, index);
        top.truncate(count);
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_come_from_the_raw_logits() {
        let logits = [1.0f32, 3.0, 2.0, 3.0];
        assert!(matches!(argmax(&logits), Some(1 | 3)));
        assert_eq!(top_tokens(&logits, 2), [1, 3]);
        assert_eq!(top_tokens(&logits, 0), Vec::<usize>::new());
        assert_eq!(top_tokens(&logits, 9), [1, 3, 2, 0]);
        let total: f64 = logits
            .iter()
            .map(|logit| (f64::from(*logit) - log_sum_exp(&logits)).exp())
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!((log_sum_exp(&[0.0, 0.0]) - 2f64.ln()).abs() < 1e-9);
    }

    #[test]
    fn a_repeated_token_is_penalised_once_as_llama_cpp_penalises_it() {
        let mut scores = [2.2f32, -1.0, 3.0];
        penalise(
            &mut scores,
            &[LlamaToken(0), LlamaToken(1), LlamaToken(0), LlamaToken(9)],
            1.1,
        );
        assert_eq!(scores, [2.0, -1.1, 3.0]);
        penalise(&mut scores, &[LlamaToken(2)], 1.0);
        assert_eq!(scores[2], 3.0);
    }
}
