//! Who a call is for: a tenant and, within it, optionally a project. Registry overrides,
//! settings and the schema builder's cache are kept per scope in the key-value store, under keys
//! that always begin with the tenant, so one tenant can never read, list or shadow another's.

use crate::error::StructureError;

/// The tenant calls fall into when none is named (a single-user CLI, a test).
pub const DEFAULT_TENANT: &str = "default";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub tenant: String,
    pub project: Option<String>,
}

impl Default for Scope {
    fn default() -> Self {
        Self {
            tenant: DEFAULT_TENANT.to_owned(),
            project: None,
        }
    }
}

impl Scope {
    /// A checked scope: ids are safe identifiers (lower-case letters, digits, `-`, `_`; at most 64).
    pub fn new(tenant: &str, project: Option<&str>) -> Result<Self, StructureError> {
        check_id("tenant", tenant)?;
        if let Some(project) = project {
            check_id("project", project)?;
        }
        Ok(Self {
            tenant: tenant.to_owned(),
            project: project.map(str::to_owned),
        })
    }

    /// The key prefix of the tenant's own entries.
    pub fn tenant_prefix(&self) -> String {
        format!("t/{}/", self.tenant)
    }

    /// The key prefix of the project's own entries, if there is a project.
    pub fn project_prefix(&self) -> Option<String> {
        self.project
            .as_ref()
            .map(|project| format!("t/{}/p/{project}/", self.tenant))
    }

    /// The prefix of the most specific level: the project's, else the tenant's.
    pub fn own_prefix(&self) -> String {
        self.project_prefix()
            .unwrap_or_else(|| self.tenant_prefix())
    }

    /// `project:<id>` or `tenant:<id>`: where something registered at this scope comes from.
    pub fn own_origin(&self) -> String {
        match &self.project {
            Some(project) => format!("project:{project}"),
            None => format!("tenant:{}", self.tenant),
        }
    }
}

fn check_id(field: &str, id: &str) -> Result<(), StructureError> {
    let valid = !id.is_empty()
        && id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(StructureError::invalid_request(
            field,
            format!(
                "{field} {id:?} is not a valid id: use lower-case letters, digits, '-' and '_', at most 64 characters"
            ),
        ))
    }
}
