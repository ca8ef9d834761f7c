//! The component's size held to a recorded ceiling (issue 41): every feature pays for its bytes
//! in the open. The component the host embeds (built with the `component` profile, as shipped)
//! may not grow past the size recorded in `component-size.txt` by more than 2 % — a
//! deterministic check, not a timing. A change that makes it smaller lowers the record; one that
//! must make it larger raises it and says why in BENCHMARKS.md ("Sizes").

/// The component as the host embeds it.
const BUILT: &[u8] = include_bytes!(env!("STRUCTURE_COMPONENT_WASM"));

/// The recorded size: the first number in `component-size.txt`.
fn recorded() -> u64 {
    include_str!("component-size.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| line.trim().replace(',', "").parse().ok())
        .expect("component-size.txt records a size in bytes")
}

#[test]
fn the_component_stays_within_two_percent_of_its_recorded_size() {
    let (built, recorded) = (BUILT.len() as u64, recorded());
    assert!(
        built * 100 <= recorded * 102,
        "the component is {built} bytes, over the recorded {recorded} by more than 2 %: make it \
         smaller, or raise host/tests/component-size.txt and say why in BENCHMARKS.md"
    );
}
