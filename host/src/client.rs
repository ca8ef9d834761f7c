//! The embedder's API: build a [`Structure`] once, call it many times.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use wasmtime::Store;

use std::path::Path;

use crate::bindings::{
    Error, Outcome, RegisteredSchema, Registration, Request, SchemaInfo, Scope, Skill,
};
#[cfg(feature = "embedded")]
use crate::bindings::{ErrorKind, Usage};
use crate::config::Settings;
#[cfg(feature = "embedded")]
use crate::local::LocalEngine;
use crate::relay::Relay;
use crate::runtime::Runtime;
use crate::state::HostState;
use crate::store::{KeyValueStore, MemoryStore};

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
    ///
    /// ```
    /// use structure_host::{Settings, Structure};
    ///
    /// let builder = Structure::builder()
    ///     .settings(Settings::new().set("structure_model", "ollama/llama3.2"));
    /// ```
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// The key-value store behind `wasi:keyvalue`; in memory unless set.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use structure_host::{SqliteStore, Structure};
    ///
    /// let builder = Structure::builder().key_value(Arc::new(SqliteStore::new("store.db")));
    /// ```
    pub fn key_value(mut self, store: Arc<dyn KeyValueStore>) -> Self {
        self.key_value = Some(store);
        self
    }

    /// A runtime other than the process-wide one for the embedded component, e.g. one for
    /// another build of the component.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use structure_host::{Runtime, Structure};
    ///
    /// # fn example() -> anyhow::Result<()> {
    /// let wasm = std::fs::read("target/component/structure.wasm")?;
    /// let client = Structure::builder()
    ///     .runtime(Arc::new(Runtime::new(&wasm, None)?))
    ///     .build()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn runtime(mut self, runtime: Arc<Runtime>) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Keeps one component instance for every call instead of a fresh one per call: calls then
    /// run one at a time and share the instance's caches (compiled schemas). An instance that
    /// traps is replaced.
    ///
    /// ```
    /// use structure_host::Structure;
    ///
    /// let builder = Structure::builder().reuse_instance(true);
    /// ```
    pub fn reuse_instance(mut self, reuse: bool) -> Self {
        self.reuse_instance = reuse;
        self
    }

    /// The client: compiles the component on first use in this process (or loads its compiled
    /// form from the disk cache).
    ///
    /// ```no_run
    /// use structure_host::{Settings, Structure};
    ///
    /// # fn example() -> anyhow::Result<()> {
    /// let client = Structure::builder().settings(Settings::from_env()).build()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(self) -> anyhow::Result<Structure> {
        let runtime = match self.runtime {
            Some(runtime) => runtime,
            None => Runtime::shared()?,
        };
        #[cfg_attr(not(feature = "embedded"), expect(unused_variables))]
        let (settings, local) = crate::local::engine_for(self.settings)?;
        Ok(Structure {
            settings: Arc::new(runtime.settings_for(settings)),
            runtime,
            key_value: self
                .key_value
                .unwrap_or_else(|| Arc::new(MemoryStore::default())),
            kept: self.reuse_instance.then(|| tokio::sync::Mutex::new(None)),
            #[cfg(feature = "embedded")]
            local,
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
    /// The embedded engine, when the settings ask for the local model.
    #[cfg(feature = "embedded")]
    local: Option<Arc<LocalEngine>>,
}

type Instance = (Store<HostState>, crate::bindings::Structure);
type Api = crate::bindings::exports::structure::tool::structuring::Guest;

impl Structure {
    /// A builder with the defaults: no settings, an in-memory store, a fresh instance per call.
    ///
    /// ```
    /// let builder = structure_host::Structure::builder();
    /// ```
    pub fn builder() -> StructureBuilder {
        StructureBuilder::default()
    }

    /// Structures `request.prompt` into an object that validates against the requested schema.
    ///
    /// ```no_run
    /// use structure_host::{Request, SchemaInput, Scope, Status, Structure};
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let request = Request::new("Ada Lovelace, ada@example.com", SchemaInput::Named("contact".into()));
    /// let outcome = client.structure(&Scope::default(), &request).await?;
    /// if outcome.status == Status::Ok {
    ///     println!("{}", outcome.data.unwrap_or_default());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn structure(&self, scope: &Scope, request: &Request) -> Result<Outcome, CallError> {
        self.local_model_ready().await?;
        self.call(async |store, api| {
            api.call_structure(store, scope, request)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The tool form: `arguments` as an LLM tool call carries them, the outcome as JSON.
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let arguments = serde_json::json!({ "prompt": "Ada, ada@example.com", "schema": "contact", "schemaMode": "named" });
    /// let outcome = client.call_tool(&Scope::default(), &arguments).await?;
    /// println!("{}", outcome["status"]);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool(&self, scope: &Scope, arguments: &Value) -> Result<Value, CallError> {
        self.local_model_ready().await?;
        self.call(async |store, api| call_tool(store, api, scope, arguments).await)
            .await
    }

    /// The embedded model this client runs, when its settings ask for one.
    pub fn local_model(&self) -> Option<&crate::local::LocalModel> {
        #[cfg(feature = "embedded")]
        return self.local.as_ref().map(|engine| engine.model());
        #[cfg(not(feature = "embedded"))]
        None
    }

    /// Gets the embedded model ready, when the settings ask for one: fetched once into the
    /// machine's cache (a progress bar on a terminal), and loaded. The first call does it
    /// anyway; a command or a service does it first, to fail fast and not keep its first
    /// caller waiting. The error (a model that cannot be fetched or loaded) is a
    /// `configuration` error naming `structure_model_file`, and says how to get the model.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = structure_host::Structure::builder().build()?; // nothing configured: the local model
    /// client.local_model_ready().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn local_model_ready(&self) -> Result<(), CallError> {
        #[cfg(feature = "embedded")]
        if let Some(engine) = self.local.clone() {
            let ready = tokio::task::spawn_blocking(move || engine.ready())
                .await
                .map_err(|error| CallError::Host(error.into()))?;
            return ready.map_err(|error| {
                CallError::Structure(Error {
                    kind: ErrorKind::Configuration(crate::local::MODEL_FILE.to_owned()),
                    message: error.to_string(),
                    usage: Usage {
                        llm_calls: 0,
                        prompt_tokens: 0,
                        completion_tokens: 0,
                        cached_prompt_tokens: 0,
                    },
                })
            });
        }
        Ok(())
    }

    /// [`Self::call_tool`] in a fresh instance whose LLM requests `relay` answers (a provider
    /// batch's rounds).
    pub(crate) async fn call_tool_relayed(
        &self,
        scope: &Scope,
        arguments: &Value,
        relay: Arc<dyn Relay>,
    ) -> Result<Value, CallError> {
        let (mut store, instance) = self.instantiate(Some(relay)).await?;
        call_tool(
            &mut store,
            instance.structure_tool_structuring(),
            scope,
            arguments,
        )
        .await
    }

    /// Review item `id` of `scope`'s tenant (`structure_review`), read from the store as the
    /// service keeps it; `None` when there is none.
    pub fn review_item(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<structure::ReviewItem>, CallError> {
        let core = structure::Scope::new(&scope.tenant, scope.project.as_deref())
            .map_err(|error| CallError::Host(anyhow::anyhow!(error.message)))?;
        let key = structure::review_item_key(&core, id);
        let stored = (self.key_value.get(&key))
            .map_err(|message| CallError::Host(anyhow::anyhow!("the store: {message}")))?;
        Ok(stored.and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    /// The tool definition, to register with an agent framework verbatim.
    ///
    /// ```no_run
    /// # use structure_host::Structure;
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let definition = client.tool_definition().await?;
    /// assert_eq!(definition["name"], "structure");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn tool_definition(&self) -> Result<Value, CallError> {
        self.call(async |store, api| parse(&api.call_tool_definition(store).await?))
            .await
    }

    /// The schemas `scope` can use by name: project → tenant → bundled.
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// for info in client.list_schemas(&Scope::tenant("acme")).await? {
    ///     println!("{} {} ({})", info.name, info.version, info.origin);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_schemas(&self, scope: &Scope) -> Result<Vec<SchemaInfo>, CallError> {
        self.call(async |store, api| {
            api.call_list_schemas(store, scope)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The schema `scope` gets for `name`, with its manual.
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let contact = client.get_schema(&Scope::default(), "contact").await?;
    /// println!("{}", contact.schema);
    /// # Ok(())
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # use structure_host::{Registration, Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let registration = Registration {
    ///     name: "lead".into(),
    ///     schema: r#"{"type": "object", "properties": {"name": {"type": "string"}}}"#.into(),
    ///     manual: Some("A lead is a person who asked for a quote.".into()),
    ///     version: Some("1.0".into()),
    /// };
    /// let info = client.register_schema(&Scope::tenant("acme"), &registration).await?;
    /// # Ok(())
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let info = client.register_skill(&Scope::tenant("acme"), "skills/lead".as_ref()).await?;
    /// # Ok(())
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let removed = client.deregister_schema(&Scope::tenant("acme"), "lead").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn deregister_schema(&self, scope: &Scope, name: &str) -> Result<bool, CallError> {
        self.call(async |store, api| {
            api.call_deregister_schema(store, scope, name)
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// The settings `scope` gets, and its own level's overrides.
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let settings = client.get_settings(&Scope::tenant("acme")).await?;
    /// println!("{}", settings["effective"]["model"]);
    /// # Ok(())
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # use structure_host::{Scope, Structure};
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Structure::builder().build()?;
    /// let overrides = serde_json::json!({ "model": "anthropic/claude-haiku-4-5", "maxLoops": 5 });
    /// client.set_settings(&Scope::tenant("acme"), &overrides).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn set_settings(&self, scope: &Scope, overrides: &Value) -> Result<(), CallError> {
        self.call(async |store, api| {
            api.call_set_settings(store, scope, &overrides.to_string())
                .await?
                .map_err(CallError::Structure)
        })
        .await
    }

    /// Serves the component's HTTP API and MCP endpoint on `listener` until the future is
    /// dropped or `options`' shutdown signal: a fresh instance per request, requests served
    /// concurrently, each one logged, counted in the metrics and (if configured) traced.
    ///
    /// ```no_run
    /// # use structure_host::Structure;
    /// # async fn example() -> anyhow::Result<()> {
    /// let client = Structure::builder().build()?;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    /// client.serve(listener, structure_host::ServeOptions::default()).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        options: crate::serve::ServeOptions,
    ) -> anyhow::Result<()> {
        let server = crate::serve::Server {
            proxy: self.runtime.proxy.clone(),
            connections: self.runtime.connections.clone(),
            settings: self.settings.clone(),
            key_value: self.key_value.clone(),
            relay: self.local_relay(),
        };
        server.run(listener, options).await
    }

    /// The connections the instances' requests go over (a provider batch's own go too).
    pub(crate) fn connections(&self) -> Arc<crate::egress::ConnectionPool> {
        self.runtime.connections.clone()
    }

    /// Runs `call` in a fresh instance, or in the kept one. A host failure (a trap) may leave an
    /// instance in any state, so a kept instance that failed is dropped.
    async fn call<T>(
        &self,
        call: impl AsyncFnOnce(&mut Store<HostState>, &Api) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        let Some(kept) = &self.kept else {
            let (mut store, instance) = self.instantiate(None).await?;
            return call(&mut store, instance.structure_tool_structuring()).await;
        };
        let mut kept = kept.lock().await;
        let (store, instance) = match &mut *kept {
            Some(instance) => instance,
            empty => empty.insert(self.instantiate(None).await?),
        };
        let result = call(store, instance.structure_tool_structuring()).await;
        if matches!(result, Err(CallError::Host(_))) {
            *kept = None;
        }
        result
    }

    /// The embedded engine as the relay of an instance's LLM requests, if there is one.
    fn local_relay(&self) -> Option<Arc<dyn Relay>> {
        #[cfg(feature = "embedded")]
        return self.local.clone().map(|engine| engine as Arc<dyn Relay>);
        #[cfg(not(feature = "embedded"))]
        None
    }

    async fn instantiate(&self, relay: Option<Arc<dyn Relay>>) -> Result<Instance, CallError> {
        let relay = relay.or_else(|| self.local_relay());
        let mut state = HostState::new(
            self.settings.clone(),
            self.key_value.clone(),
            self.runtime.connections.clone(),
        );
        if let Some(relay) = relay {
            state = state.relaying(relay);
        }
        let mut store = state.into_store(self.runtime.pre.engine());
        let instance = self.runtime.pre.instantiate_async(&mut store).await?;
        Ok((store, instance))
    }
}

/// The tool form of a call in `store`.
async fn call_tool(
    store: &mut Store<HostState>,
    api: &Api,
    scope: &Scope,
    arguments: &Value,
) -> Result<Value, CallError> {
    let outcome = api
        .call_call_tool(store, scope, &arguments.to_string())
        .await?
        .map_err(CallError::Structure)?;
    parse(&outcome)
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
