//! The validation benchmark runs and reports every fixture's schema (timings are not checked).

#[test]
fn it_reports_each_schema() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_validation-bench"))
        .arg("20")
        .output()
        .unwrap();
    assert!(output.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let schemas: Vec<&str> = lines
        .iter()
        .map(|line| line["schema"].as_str().unwrap())
        .collect();
    assert_eq!(schemas, ["user-action-record", "contact", "support-ticket"]);
    assert!(
        lines
            .iter()
            .all(|line| line["validNs"].as_f64().unwrap() > 0.0)
    );
}
