//! The embedder's API: build a [`Structure`] once, call it many times.

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};
use wasmtime::Store;

use std::path::Path;

use crate::bindings::{
    Error, ErrorKind, Outcome, RegisteredSchema, Registration, Request, SchemaInfo, Scope, Skill,
};
use crate::config::Settings;
use crate::key_value::{KeyValueStore, MemoryStore};
use crate::runtime::Runtime;
use crate::state::HostState;

/// Why a call produced no outcome.
#[derive(Debug)]
pub enum CallError {
    /// The component answered with a typed error (bad request, provider error, ...).
    Structure(Error),
    /// The host could not run the component.
    Host(anyhow::Error),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Structure(error) => f.write_str(&error.message),
            CallError::Host(error) => write!(f, "the structure component could not run: {error:#}"),
        }
    }
}

impl std::error::Error for CallError {}

impl From<wasmtime::Error> for CallError {
    fn from(error: wasmtime::Error) -> Self {
        CallError::Host(error.into())
    }
}

/// Configures a [`Structure`].
#[derive(Default)]
pub struct StructureBuilder {
    settings: Settings,
    key_value: Option<Arc<dyn KeyValueStore>>,
    runtime: Option<Arc<Runtime>>,
    reuse_instance: bool,
}

impl StructureBuilder {
    /// The settings and secrets the component reads (model, API keys, base URLs, limits).
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// The key-value store behind `wasi:keyvalue`; in memory unless set.
    pub fn key_value(mut self, store: Arc<dyn KeyValueStore>) -> Self {
        self.key_value = Some(store);
        self
    }

    /// A runtime other than the process-wide one for the embedded component.
    pub fn runtime(mut self, runtime: Arc<Runtime>) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Keeps one component instance for every call instead of a fresh one per call: calls then
    /// run one at a time and share the instance's caches (compiled schemas). An instance that
    /// traps is replaced.
    pub fn reuse_instance(mut self, reuse: bool) -> Self {
        self.reuse_instance = reuse;
        self
    }

    pub fn build(self) -> anyhow::Result<Structure> {
        let runtime = match self.runtime {
            Some(runtime) => runtime,
            None => Runtime::shared()?,
        };
        Ok(Structure {
            runtime,
            settings: Arc::new(self.settings),
            key_value: self
                .key_value
                .unwrap_or_else(|| Arc::new(MemoryStore::default())),
            kept: self.reuse_instance.then(|| tokio::sync::Mutex::new(None)),
        })
    }
}

/// The `structure` component, ready to call. Every call runs in a fresh instance, as on an edge
/// platform, so calls share nothing but the key-value store (unless
/// [`StructureBuilder::reuse_instance`] keeps one).
pub struct Structure {
    runtime: Arc<Runtime>,
    settings: Arc<Settings>,
    key_value: Arc<dyn KeyValueStore>,
    kept: Option<tokio::sync::Mutex<Option<Instance>>>,
}

type Instance = (Store<HostState>, crate::bindings::Structure);
type Api = crate::bindings::exports::structure::tool::structuring::Guest;

impl Structure {
    pub fn builder() -> StructureBuilder {
        StructureBuilder::default()
    }

    /// Structures `request.prompt` into an object that validates against the requested schema.
    pub async fn structure(&self, scope: &Scope, request: &Request) -> Result<Outcome, CallError> {
        self.call(async |store, api| {
            api.call_structure(store, scope, request)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The tool form: `arguments` as an LLM tool call carries them, the outcome as JSON.
    pub async fn call_tool(&self, scope: &Scope, arguments: &Value) -> Result<Value, CallError> {
        self.call(async |store, api| {
            let outcome = api
                .call_call_tool(store, scope, &arguments.to_string())
                .await?
                .map_err(CallError::Structure)?;
            parse(&outcome)
        })
        .await
    }

    /// The tool definition, to register with an agent framework verbatim.
    pub async fn tool_definition(&self) -> Result<Value, CallError> {
        self.call(async |store, api| parse(&api.call_tool_definition(store).await?))
            .await
    }

    /// The schemas `scope` can use by name: project → tenant → bundled.
    pub async fn list_schemas(&self, scope: &Scope) -> Result<Vec<SchemaInfo>, CallError> {
        self.call(async |store, api| {
            api.call_list_schemas(store, scope)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The schema `scope` gets for `name`, with its manual.
    pub async fn get_schema(
        &self,
        scope: &Scope,
        name: &str,
    ) -> Result<RegisteredSchema, CallError> {
        self.call(async |store, api| {
            api.call_get_schema(store, scope, name)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// Registers a schema at `scope`'s own level (its project, else its tenant).
    pub async fn register_schema(
        &self,
        scope: &Scope,
        registration: &Registration,
    ) -> Result<SchemaInfo, CallError> {
        self.call(async |store, api| {
            api.call_register_schema(store, scope, registration)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// Registers the output schema of the skill in `folder` (its `SKILL.md`, and the JSON files
    /// under the folder that `output_schema_file` may name).
    pub async fn register_skill(
        &self,
        scope: &Scope,
        folder: &Path,
    ) -> Result<SchemaInfo, CallError> {
        let skill = read_skill(folder).map_err(CallError::Host)?;
        self.call(async |store, api| {
            api.call_register_skill(store, scope, &skill)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// Removes `name` from `scope`'s own level; `false` when it was not registered there.
    pub async fn deregister_schema(&self, scope: &Scope, name: &str) -> Result<bool, CallError> {
        self.call(async |store, api| {
            api.call_deregister_schema(store, scope, name)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The settings `scope` gets, and its own level's overrides.
    pub async fn get_settings(&self, scope: &Scope) -> Result<Value, CallError> {
        self.call(async |store, api| {
            let settings = api
                .call_get_settings(store, scope)
                .await?
                .map_err(CallError::Structure)?;
            parse(&settings)
        })
        .await
    }

    /// Replaces the setting overrides of `scope`'s own level.
    pub async fn set_settings(&self, scope: &Scope, overrides: &Value) -> Result<(), CallError> {
        self.call(async |store, api| {
            api.call_set_settings(store, scope, &overrides.to_string())
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// Serves the component's HTTP API and MCP endpoint on `listener` until the future is
    /// dropped: a fresh instance per request, requests served concurrently.
    pub async fn serve(&self, listener: tokio::net::TcpListener) -> anyhow::Result<()> {
        let server = crate::serve::Server {
            proxy: self.runtime.proxy.clone(),
            connections: self.runtime.connections.clone(),
            settings: self.settings.clone(),
            key_value: self.key_value.clone(),
        };
        server.run(listener).await
    }

    /// Runs `call` in a fresh instance, or in the kept one. A host failure (a trap) may leave an
    /// instance in any state, so a kept instance that failed is dropped.
    async fn call<T>(
        &self,
        call: impl AsyncFnOnce(&mut Store<HostState>, &Api) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        let Some(kept) = &self.kept else {
            let (mut store, instance) = self.instantiate().await?;
            return call(&mut store, instance.structure_tool_structuring()).await;
        };
        let mut kept = kept.lock().await;
        let (store, instance) = match &mut *kept {
            Some(instance) => instance,
            empty => empty.insert(self.instantiate().await?),
        };
        let result = call(store, instance.structure_tool_structuring()).await;
        if matches!(result, Err(CallError::Host(_))) {
            *kept = None;
        }
        result
    }

    async fn instantiate(&self) -> Result<Instance, CallError> {
        let state = HostState::new(
            self.settings.clone(),
            self.key_value.clone(),
            self.runtime.connections.clone(),
        );
        let mut store = Store::new(self.runtime.pre.engine(), state);
        let instance = self.runtime.pre.instantiate_async(&mut store).await?;
        Ok((store, instance))
    }
}

fn parse(text: &str) -> Result<Value, CallError> {
    serde_json::from_str(text).map_err(|error| CallError::Host(error.into()))
}

/// Files beside `SKILL.md` larger than this are not sent: a schema file is small.
const MAX_SKILL_FILE_BYTES: u64 = 1 << 20;

/// A skill folder as the component takes it: `SKILL.md` and the `.json` files under the folder.
fn read_skill(folder: &Path) -> anyhow::Result<Skill> {
    let skill_path = folder.join("SKILL.md");
    let skill_md = std::fs::read_to_string(&skill_path)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", skill_path.display()))?;
    let mut files = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file()
                && path
                    .extension()
                    .is_some_and(|extension| extension == "json")
                && entry.metadata()?.len() <= MAX_SKILL_FILE_BYTES
            {
                let relative = path
                    .strip_prefix(folder)?
                    .to_string_lossy()
                    .replace('\\', "/");
                files.push((relative, std::fs::read_to_string(&path)?));
            }
        }
    }
    files.sort();
    Ok(Skill { skill_md, files })
}

/// A typed error as JSON, the same shape the component's tool form uses:
/// `{"error": {"kind": "provider", "status": 429, ..., "message": "...", "usage": {...}}}`.
pub fn error_json(error: &Error) -> Value {
    let mut body = match &error.kind {
        ErrorKind::InvalidRequest(field) => json!({ "kind": "invalid-request", "field": field }),
        ErrorKind::SchemaNotFound(not_found) => json!({
            "kind": "schema-not-found", "name": not_found.name, "suggestions": not_found.suggestions,
        }),
        ErrorKind::InvalidSchema => json!({ "kind": "invalid-schema" }),
        ErrorKind::Configuration(key) => json!({ "kind": "configuration", "key": key }),
        ErrorKind::Provider(failure) => {
            let mut body = json!({ "kind": "provider", "status": failure.status, "retryable": failure.retryable });
            if let Some(code) = &failure.code {
                body["code"] = json!(code);
            }
            body
        }
        ErrorKind::Transport => json!({ "kind": "transport" }),
        ErrorKind::Refusal => json!({ "kind": "refusal" }),
        ErrorKind::Blocked(reason) => json!({ "kind": "blocked", "reason": reason }),
        ErrorKind::Truncated => json!({ "kind": "truncated" }),
        ErrorKind::InvalidResponse => json!({ "kind": "invalid-response" }),
        ErrorKind::StructuredOutputFailed => json!({ "kind": "structured-output-failed" }),
        ErrorKind::BudgetExhausted => json!({ "kind": "budget-exhausted" }),
        ErrorKind::Storage => json!({ "kind": "storage" }),
        ErrorKind::Unsupported => json!({ "kind": "unsupported" }),
    };
    body["message"] = json!(error.message);
    body["usage"] = json!({
        "llmCalls": error.usage.llm_calls,
        "promptTokens": error.usage.prompt_tokens,
        "completionTokens": error.usage.completion_tokens,
        "cachedPromptTokens": error.usage.cached_prompt_tokens,
    });
    json!({ "error": body })
}
