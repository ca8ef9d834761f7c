//! Typed bindings for the `structure:tool/structure` world (`wit/structure.wit`).

wasmtime::component::bindgen!({
    path: "../wit",
    world: "structure",
    imports: {
        // The store's calls wait on files and networks: the host makes them off the workers.
        "wasi:keyvalue/store": async | trappable,
        default: trappable,
    },
    exports: { default: async },
    with: {
        "wasi:keyvalue/store.bucket": crate::store::Bucket,
        "wasi:keyvalue/atomics": crate::bindings::atomics::wasi::keyvalue::atomics,
        // The WASI interfaces the world pulls in come from wasmtime's own crates.
        "wasi:io": wasmtime_wasi::p2::bindings::io,
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:http": wasmtime_wasi_http::p2::bindings::http,
    },
    require_store_data_send: true,
    additional_derives: [PartialEq],
});

/// `wasi:keyvalue/atomics`, bound apart (see `keyvalue-atomics` in `wit/hosts.wit`).
pub(crate) mod atomics {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "keyvalue-atomics",
        imports: { default: async | trappable },
        with: {
            "wasi:keyvalue/store": crate::bindings::wasi::keyvalue::store,
            "wasi:keyvalue/atomics.cas": crate::store::Cas,
        },
        require_store_data_send: true,
    });
}

pub use exports::structure::tool::structuring::{
    Attempt, BuilderTrace, ContextWindow, Document, Error, ErrorKind, IncompleteRecord, NotFound,
    Outcome, PageBox, PageSize, ProviderFailure, Reason, ReasonCategory, RegisteredSchema,
    Registration, Request, ReviewField, ReviewStatus, ReviewTicket, SchemaInfo, SchemaInput, Scope,
    Skill, Source, SourceMatch, Span, Status, Trace, Usage,
};

impl Document {
    /// A document of `media_type` (`application/pdf`, `text/plain`, `text/html` or Word's).
    pub fn new(data: Vec<u8>, media_type: &str) -> Self {
        Self {
            media_type: media_type.to_owned(),
            data,
        }
    }

    /// A document whose media type its file name's extension or else its bytes tell, as the
    /// component's readers take them ([`structure::media_type::of`]: a PDF, a Word document, a
    /// web page, else text).
    pub fn of(data: Vec<u8>, file_name: Option<&str>) -> Self {
        let media_type = structure::media_type::of(&data, file_name).name();
        Self::new(data, media_type)
    }
}

impl Request {
    /// A request to structure `prompt` into an object of `schema`, with the settings, loops and
    /// modes the deployment's defaults give.
    ///
    /// ```
    /// use structure_host::{Request, SchemaInput};
    ///
    /// let request = Request::new("Ada Lovelace, ada@example.com", SchemaInput::Named("contact".into()));
    /// assert_eq!((request.max_loops, request.records), (None, false));
    /// ```
    pub fn new(prompt: impl Into<String>, schema: SchemaInput) -> Self {
        Self {
            prompt: prompt.into(),
            schema,
            max_loops: None,
            settings: None,
            records: false,
            document: None,
            return_text: false,
        }
    }

    /// The same request with its text read from `data` (a PDF or UTF-8 text, `media_type`),
    /// after the prompt (which may then be empty).
    pub fn with_document(self, data: Vec<u8>, media_type: &str) -> Self {
        Self {
            document: Some(Document::new(data, media_type)),
            ..self
        }
    }
}

/// The `default` tenant, no project: single-tenant use.
impl Default for Scope {
    fn default() -> Self {
        Scope {
            tenant: "default".to_owned(),
            project: None,
        }
    }
}

impl Scope {
    /// A tenant's scope.
    ///
    /// ```
    /// let scope = structure_host::Scope::tenant("acme");
    /// assert_eq!(scope.project, None);
    /// ```
    pub fn tenant(tenant: &str) -> Self {
        Scope {
            tenant: tenant.to_owned(),
            project: None,
        }
    }

    /// A project's scope within its tenant.
    ///
    /// ```
    /// let scope = structure_host::Scope::project("acme", "web");
    /// assert_eq!(scope.project.as_deref(), Some("web"));
    /// ```
    pub fn project(tenant: &str, project: &str) -> Self {
        Scope {
            tenant: tenant.to_owned(),
            project: Some(project.to_owned()),
        }
    }
}
