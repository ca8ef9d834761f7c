//! What the command prints and the status it exits with: 0 ok, 3 need-more-input, 4 stale,
//! 2 usage error, 1 any other error.

use std::process::ExitCode;

use serde_json::Value;
use structure_host::CallError;

pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_ERROR: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
pub(crate) const EXIT_NEED_MORE_INPUT: u8 = 3;
pub(crate) const EXIT_STALE: u8 = 4;

pub(crate) fn finish(result: Result<(), CallError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(error) => report(error),
    }
}

pub(crate) fn report(error: CallError) -> ExitCode {
    match error {
        CallError::Structure(error) => {
            print_json(&error.to_json());
            let code = match error.kind {
                structure_host::ErrorKind::InvalidRequest(_) => EXIT_USAGE,
                _ => EXIT_ERROR,
            };
            fail(code, &error.message)
        }
        CallError::Host(error) => fail(EXIT_ERROR, &format!("{error:#}")),
    }
}

pub(crate) fn print_json(value: &Value) {
    print_line(&serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()));
}

/// Writes a line to stdout. A reader that went away (`structure run … | head`) is not an
/// error of this command: the rest of the output is dropped and the exit status stays that
/// of the call.
pub(crate) fn print_line(line: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("structure: writing the output failed: {error}");
        }
        _ => {}
    }
}

pub(crate) fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("structure: {message}");
    ExitCode::from(code)
}
