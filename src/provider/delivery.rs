//! Delivery modes (spec 001): how the answer comes back.
//!
//! - `native`: the provider's structured-output mode constrains the answer to the schema;
//! - `tool`: the answer must be the single call of the internal [`ANSWER_TOOL`], whose input
//!   schema the provider enforces;
//! - `prompt`: the schema is in the prompt and the answer is read leniently; nothing is enforced
//!   before local validation.
//!
//! `auto` takes the strongest mode the provider and model have. `structure_require_provider_strict_output`
//! (default true) forbids falling back to `prompt`, the one mode the provider does not enforce.

use std::fmt;

use crate::error::StructureError;
use crate::keys;
use crate::settings::{DeliveryChoice, Settings};

/// The name of the internal tool the answer is delivered through in tool mode.
pub const ANSWER_TOOL: &str = "__structured_output__";
/// The answer tool as a strict function (OpenAI's Chat Completions wrap it in `{"type":
/// "function", "function": …}`, the Responses API adds `"type": "function"`). Its `parameters`
/// are a placeholder for the answer's schema, which the request body writes in
/// (`endpoint::LlmBody`).
pub fn strict_function() -> serde_json::Map<String, serde_json::Value> {
    let mut function = serde_json::Map::new();
    function.insert("name".into(), ANSWER_TOOL.into());
    function.insert("description".into(), ANSWER_TOOL_DESCRIPTION.into());
    function.insert("parameters".into(), serde_json::Value::Null);
    function.insert("strict".into(), true.into());
    function
}

/// What the answer tool says of itself.
pub const ANSWER_TOOL_DESCRIPTION: &str =
    "Deliver the answer: the structured object, or what the text lacks.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Native,
    Tool,
    Prompt,
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Delivery::Native => "native",
            Delivery::Tool => "tool",
            Delivery::Prompt => "prompt",
        })
    }
}

/// What a provider (and model) can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// A structured-output mode that constrains the answer to a schema.
    pub native: bool,
    /// A forced tool call whose input the provider constrains to the tool's schema.
    pub tool: bool,
}

impl Capabilities {
    /// Both a structured-output mode and a forced, schema-constrained tool call.
    pub const BOTH: Capabilities = Capabilities {
        native: true,
        tool: true,
    };
}

/// The delivery mode `settings` ask for on a provider with `capabilities`.
pub fn select_for(
    settings: &Settings,
    capabilities: Capabilities,
    model: &str,
) -> Result<Delivery, StructureError> {
    select(
        settings.delivery,
        capabilities,
        settings.require_provider_strict_output,
        model,
    )
}

/// The delivery mode for `choice` on a provider with `capabilities`.
pub fn select(
    choice: DeliveryChoice,
    capabilities: Capabilities,
    require_provider_strict_output: bool,
    model: &str,
) -> Result<Delivery, StructureError> {
    let unsupported = |mode: &str| {
        StructureError::configuration(
            keys::DELIVERY,
            format!(
                "{model} has no {mode} structured output; set {} to auto (or another mode)",
                keys::DELIVERY
            ),
        )
    };
    let prompt_not_allowed = || {
        StructureError::configuration(
            keys::REQUIRE_PROVIDER_STRICT_OUTPUT,
            format!(
                "{model} cannot enforce the schema, and prompt mode is not provider-enforced: set {}=false \
                 to allow it (the answer is still validated locally)",
                keys::REQUIRE_PROVIDER_STRICT_OUTPUT
            ),
        )
    };
    match choice {
        DeliveryChoice::Native if capabilities.native => Ok(Delivery::Native),
        DeliveryChoice::Native => Err(unsupported("native")),
        DeliveryChoice::Tool if capabilities.tool => Ok(Delivery::Tool),
        DeliveryChoice::Tool => Err(unsupported("tool-mode")),
        DeliveryChoice::Prompt if require_provider_strict_output => Err(prompt_not_allowed()),
        DeliveryChoice::Prompt => Ok(Delivery::Prompt),
        DeliveryChoice::Auto if capabilities.native => Ok(Delivery::Native),
        DeliveryChoice::Auto if capabilities.tool => Ok(Delivery::Tool),
        DeliveryChoice::Auto if require_provider_strict_output => Err(prompt_not_allowed()),
        DeliveryChoice::Auto => Ok(Delivery::Prompt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Capabilities = Capabilities {
        native: true,
        tool: true,
    };
    const TOOL_ONLY: Capabilities = Capabilities {
        native: false,
        tool: true,
    };
    const NONE: Capabilities = Capabilities {
        native: false,
        tool: false,
    };

    #[test]
    fn auto_takes_the_strongest_mode_and_never_falls_to_prompt_unless_allowed() {
        assert_eq!(
            select(DeliveryChoice::Auto, BOTH, true, "m").unwrap(),
            Delivery::Native
        );
        assert_eq!(
            select(DeliveryChoice::Auto, TOOL_ONLY, true, "m").unwrap(),
            Delivery::Tool
        );
        assert_eq!(
            select(DeliveryChoice::Auto, NONE, false, "m").unwrap(),
            Delivery::Prompt
        );
        let error = select(DeliveryChoice::Auto, NONE, true, "m").unwrap_err();
        assert!(
            error
                .message
                .contains("structure_require_provider_strict_output=false"),
            "{}",
            error.message
        );
    }

    #[test]
    fn an_explicit_mode_is_taken_or_refused() {
        assert_eq!(
            select(DeliveryChoice::Tool, BOTH, true, "m").unwrap(),
            Delivery::Tool
        );
        assert_eq!(
            select(DeliveryChoice::Prompt, BOTH, false, "m").unwrap(),
            Delivery::Prompt
        );
        assert!(select(DeliveryChoice::Prompt, BOTH, true, "m").is_err());
        assert!(select(DeliveryChoice::Native, TOOL_ONLY, false, "m").is_err());
        assert!(select(DeliveryChoice::Tool, NONE, false, "m").is_err());
    }
}
