//! Schemas declared in a skill's `SKILL.md` (spec 004): the front matter names the skill and
//! holds `output_schema` inline, or `output_schema_file` relative to the skill's folder; the body
//! becomes the manual. The host reads the folder; this module sees its files as text, so a path
//! can never reach outside them.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

use crate::error::StructureError;
use crate::schema::registry::Registration;

/// A skill as its files: `SKILL.md` and the other files of its folder by relative path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillFiles {
    pub skill_md: String,
    pub files: Vec<(String, String)>,
}

/// The registration a skill declares.
pub fn registration(skill: &SkillFiles) -> Result<Registration, StructureError> {
    let (front_matter, body) = split_front_matter(&skill.skill_md)?;
    let Value::Object(fields) = front_matter else {
        return Err(invalid("the front matter of SKILL.md must be a mapping"));
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err(invalid("the front matter of SKILL.md has no name")),
    };
    let version = match fields.get("version") {
        None => None,
        Some(Value::String(version)) => Some(version.clone()),
        Some(Value::Number(version)) => Some(version.to_string()),
        Some(_) => return Err(invalid("version in SKILL.md must be MAJOR.MINOR")),
    };
    let schema = match (
        fields.get("output_schema"),
        fields.get("output_schema_file"),
    ) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "SKILL.md declares both output_schema and output_schema_file: keep one",
            ));
        }
        (Some(schema @ Value::Object(_)), None) => schema.clone(),
        (Some(_), None) => {
            return Err(invalid(
                "output_schema in SKILL.md must be a mapping (a JSON Schema)",
            ));
        }
        (None, Some(Value::String(path))) => schema_file(skill, path)?,
        (None, Some(_)) => return Err(invalid("output_schema_file in SKILL.md must be a path")),
        (None, None) => {
            return Err(invalid(
                "SKILL.md declares no output_schema or output_schema_file",
            ));
        }
    };
    let manual = Some(body.trim().to_owned())
        .filter(|body| !body.is_empty())
        .or_else(|| {
            fields
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    Ok(Registration {
        name,
        schema,
        manual,
        version,
    })
}

fn invalid(message: &str) -> StructureError {
    StructureError::invalid_request("skill", message)
}

/// The YAML front matter (between `---` lines at the top) as JSON, and the body after it.
fn split_front_matter(text: &str) -> Result<(Value, &str), StructureError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---")
        .filter(|rest| rest.starts_with('\n') || rest.starts_with("\r\n"))
    else {
        return Err(invalid(
            "SKILL.md must start with a front matter block between --- lines",
        ));
    };
    let Some(end) = rest.find("\n---") else {
        return Err(invalid(
            "the front matter of SKILL.md is not closed by a --- line",
        ));
    };
    let yaml = &rest[..end];
    let after = &rest[end + 4..];
    let body = after.split_once('\n').map_or("", |(_, body)| body);
    let documents = YamlLoader::load_from_str(yaml).map_err(|error| {
        invalid(&format!(
            "the front matter of SKILL.md is not valid YAML: {error}"
        ))
    })?;
    let document = documents.into_iter().next().unwrap_or(Yaml::Null);
    Ok((to_json(document)?, body))
}

fn to_json(yaml: Yaml) -> Result<Value, StructureError> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(flag) => Value::Bool(flag),
        Yaml::Integer(number) => Value::Number(number.into()),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| invalid(&format!("{text} is not a number JSON can hold")))?,
        Yaml::String(text) => Value::String(text),
        Yaml::Array(items) => {
            Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Yaml::Hash(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                let key = match key {
                    Yaml::String(key) => key,
                    Yaml::Integer(key) => key.to_string(),
                    Yaml::Boolean(key) => key.to_string(),
                    other => {
                        return Err(invalid(&format!(
                            "a front matter key must be text, not {other:?}"
                        )));
                    }
                };
                map.insert(key, to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(invalid(
                "the front matter uses YAML aliases, which are not supported",
            ));
        }
    })
}

/// The JSON schema file at `path`, relative to the skill's folder and inside it.
fn schema_file(skill: &SkillFiles, path: &str) -> Result<Value, StructureError> {
    let wanted = normalise(path).ok_or_else(|| {
        invalid(&format!(
            "output_schema_file {path:?} must be a relative path inside the skill's folder"
        ))
    })?;
    let Some((_, text)) = skill
        .files
        .iter()
        .find(|(name, _)| normalise(name).as_deref() == Some(wanted.as_str()))
    else {
        return Err(invalid(&format!(
            "output_schema_file {path:?} is not among the skill's files"
        )));
    };
    match serde_json::from_str(text) {
        Ok(schema @ Value::Object(_)) => Ok(schema),
        Ok(_) => Err(invalid(&format!(
            "{path} must hold a JSON object (a JSON Schema)"
        ))),
        Err(error) => Err(invalid(&format!("{path} is not valid JSON: {error}"))),
    }
}

/// `./resources/a.json` → `resources/a.json`; `None` for absolute paths and any `..`.
fn normalise(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    if path.starts_with('/') || path.contains(':') {
        return None;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const INLINE: &str = "---\nname: extract-entities\ndescription: Extract named entities from text.\noutput_schema:\n  type: object\n  required: [entities]\n  properties:\n    entities:\n      type: array\n      items:\n        type: object\n        required: [name, type]\n        properties:\n          name: { type: string }\n          type: { type: string, enum: [person, org, location, date] }\n---\n\n# Entity Extraction\n\nExtract all named entities from the user's text.\n";

    #[test]
    fn an_inline_output_schema_and_the_body_as_manual() {
        let registration = registration(&SkillFiles {
            skill_md: INLINE.to_owned(),
            files: vec![],
        })
        .unwrap();
        assert_eq!(registration.name, "extract-entities");
        assert_eq!(registration.schema["required"], json!(["entities"]));
        assert_eq!(
            registration.schema["properties"]["entities"]["items"]["properties"]["type"]["enum"],
            json!(["person", "org", "location", "date"])
        );
        assert!(
            registration
                .manual
                .unwrap()
                .starts_with("# Entity Extraction")
        );
        assert_eq!(registration.version, None);
    }

    #[test]
    fn a_schema_file_relative_to_the_skill() {
        let skill = SkillFiles {
            skill_md: "---\nname: data-analysis\nversion: 1.2\noutput_schema_file: ./resources/analysis.schema.json\n---\nAnalyze.\n".to_owned(),
            files: vec![("resources/analysis.schema.json".to_owned(), "{\"type\": \"object\"}".to_owned())],
        };
        let registration = registration(&skill).unwrap();
        assert_eq!(
            (registration.schema, registration.version),
            (json!({ "type": "object" }), Some("1.2".to_owned()))
        );
    }

    #[test]
    fn paths_outside_the_folder_and_malformed_skills_are_refused() {
        let with = |front: &str| SkillFiles {
            skill_md: format!("---\n{front}\n---\nbody"),
            files: vec![("../secret.json".into(), "{}".into())],
        };
        for (front, text) in [
            (
                "name: x\noutput_schema_file: ../secret.json",
                "relative path inside",
            ),
            (
                "name: x\noutput_schema_file: /etc/passwd",
                "relative path inside",
            ),
            (
                "name: x\noutput_schema_file: C:/x.json",
                "relative path inside",
            ),
            (
                "name: x\noutput_schema_file: missing.json",
                "not among the skill's files",
            ),
            ("name: x", "no output_schema"),
            ("output_schema: { type: object }", "has no name"),
            ("name: x\noutput_schema: [1]", "must be a mapping"),
            ("name: [unclosed", "not valid YAML"),
        ] {
            let error = registration(&with(front)).unwrap_err();
            assert!(error.message.contains(text), "{front}: {}", error.message);
        }
        let error = registration(&SkillFiles {
            skill_md: "# no front matter".into(),
            files: vec![],
        })
        .unwrap_err();
        assert!(error.message.contains("must start with a front matter"));
    }
}
