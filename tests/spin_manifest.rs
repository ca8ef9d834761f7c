//! `spin.toml` and `runtime-config.toml` stay valid and in step with the component: the build
//! command produces the file the manifest runs, every config key the component reads is a
//! variable (secrets marked secret), the key-value store is the one the component opens, and the
//! providers' endpoints are allowed. (That the component's imports are a subset of what Spin
//! offers is checked in component-build/tests.)

mod support;

use structure::keys;
use support::root;
use toml::Value;

fn manifest() -> Value {
    toml::from_str(&std::fs::read_to_string(root().join("spin.toml")).unwrap())
        .expect("spin.toml is TOML")
}

#[test]
fn the_manifest_routes_every_path_to_the_pre_initialised_component_but_the_console() {
    let manifest = manifest();
    assert_eq!(manifest["spin_manifest_version"].as_integer(), Some(2));
    let routes: Vec<(&str, &str)> = manifest["trigger"]["http"]
        .as_array()
        .unwrap()
        .iter()
        .map(|trigger| {
            let route = trigger["route"].as_str().unwrap();
            (route, trigger["component"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        routes,
        [
            ("/...", "structure"),
            (structure_console::ROUTE, "console"),
            (&*format!("{}/...", structure_console::ROUTE), "console"),
        ]
    );
    // The console's component is where the host's build leaves it, and asks for nothing.
    let console = &manifest["component"]["console"];
    let source = format!("target/{}", component_build::CONSOLE_FILE);
    assert_eq!(console["source"].as_str(), Some(source.as_str()));
    assert!(
        console["build"]["command"]
            .as_str()
            .unwrap()
            .contains("-p structure-host"),
    );
    for grant in ["key_value_stores", "allowed_outbound_hosts", "variables"] {
        assert!(console.get(grant).is_none(), "the console needs no {grant}");
    }
    let component = &manifest["component"]["structure"];
    let source = format!("target/{}", component_build::READY_FILE);
    assert_eq!(component["source"].as_str(), Some(source.as_str()));
    // The host builds the component (its build script runs component-build) and writes it
    // pre-initialised where the manifest reads it.
    let command = component["build"]["command"].as_str().unwrap();
    assert!(
        command.contains("-p structure-host -- component"),
        "{command}"
    );
    assert!(
        command.ends_with(&format!("--output {source}")),
        "{command}"
    );
    let stores: Vec<&str> = component["key_value_stores"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        stores,
        ["default"],
        "the store the component opens (wasi:keyvalue open(\"default\"))"
    );
}

#[test]
fn every_setting_is_a_variable_and_secrets_are_secret() {
    let manifest = manifest();
    let variables = manifest["variables"].as_table().unwrap();
    let mapped = manifest["component"]["structure"]["variables"]
        .as_table()
        .unwrap();
    let mut expected: Vec<&str> = keys::ALL.to_vec();
    expected.extend([
        keys::API_TOKENS,
        keys::API_AUTH,
        keys::MAX_BODY_BYTES,
        "structure_model_fast",
        "structure_model_analyze",
    ]);
    for key in expected {
        assert!(
            variables.contains_key(key),
            "{key} is not an application variable"
        );
        assert_eq!(
            mapped.get(key).and_then(Value::as_str),
            Some(format!("{{{{ {key} }}}}").as_str()),
            "{key} is not passed to the component"
        );
    }
    for secret in keys::secrets().chain([keys::API_TOKENS]) {
        assert_eq!(
            variables[secret]["secret"].as_bool(),
            Some(true),
            "{secret} must be a secret variable"
        );
    }
    for (name, variable) in variables {
        let declared = variable.as_table().unwrap();
        assert!(
            declared.contains_key("default")
                || declared.get("required").and_then(Value::as_bool) == Some(true),
            "{name}"
        );
    }
}

#[test]
fn the_providers_endpoints_and_a_self_hosted_one_are_allowed() {
    let manifest = manifest();
    let allowed: Vec<&str> = manifest["component"]["structure"]["allowed_outbound_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for base in [
        keys::OPENAI_DEFAULT_URL,
        keys::ANTHROPIC_DEFAULT_URL,
        keys::GEMINI_DEFAULT_URL,
    ] {
        let origin = base.trim_end_matches("/v1");
        assert!(
            allowed.contains(&origin),
            "{origin} is not allowed: {allowed:?}"
        );
    }
    assert!(
        allowed.contains(&"{{ self_hosted_llm }}"),
        "a variable-driven host for self-hosted servers"
    );
    assert!(
        manifest["variables"]
            .as_table()
            .unwrap()
            .contains_key("self_hosted_llm")
    );
}

#[test]
fn the_runtime_config_backs_the_default_store_with_redis() {
    let config: Value =
        toml::from_str(&std::fs::read_to_string(root().join("runtime-config.toml")).unwrap())
            .unwrap();
    let store = &config["key_value_store"]["default"];
    assert_eq!(store["type"].as_str(), Some("redis"));
    assert!(store["url"].as_str().unwrap().starts_with("redis://"));
}
