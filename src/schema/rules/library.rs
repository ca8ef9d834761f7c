//! The parts of Kubernetes' CEL libraries that CRDs' rules call and CEL's standard library lacks:
//! the strings library's `lowerAscii`, `upperAscii`, `trim`, `split`, `substring` and `indexOf`,
//! and the IP library's `isIP` — declared by hand rather than with cel-rust's strings extension,
//! whose formatting alone costs the component more than all of these (docs/history/benchmarks.md
//! "Rules across fields"). Indices count code points, as CEL's do.

use cel::common::types::{CelBool, CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

/// Declares the functions on `env`.
pub fn declare(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn lower_ascii: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn upper_ascii: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn trim: (CelString) -> CelString)?;
    cel::add_member_overload!(env, fn split: (CelString, CelString) -> CelList)?;
    cel::add_member_overload!(env, fn substring: (CelString, CelInt) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn substring_range: (CelString, CelInt, CelInt) -> Result<CelString>,
        name = "substring")?;
    cel::add_member_overload!(env, fn index_of: (CelString, CelString) -> CelInt)?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP")?;
    Ok(())
}

fn lower_ascii(this: &CelString<'_>) -> CelString<'static> {
    this.to_ascii_lowercase().into()
}

fn upper_ascii(this: &CelString<'_>) -> CelString<'static> {
    this.to_ascii_uppercase().into()
}

fn trim(this: &CelString<'_>) -> CelString<'static> {
    this.trim().to_owned().into()
}

fn split(this: &CelString<'_>, separator: &CelString<'_>) -> CelList<'static> {
    let parts: Vec<String> = if separator.is_empty() {
        this.chars().map(String::from).collect()
    } else {
        this.split(separator.inner()).map(str::to_owned).collect()
    };
    (parts.into_iter())
        .map(|part| Box::new(CelString::from(part)) as Box<dyn Val>)
        .collect::<Vec<_>>()
        .into()
}

fn substring(this: &CelString<'_>, start: &CelInt) -> Result<CelString<'static>, ExecutionError> {
    let length = i64::try_from(this.chars().count()).unwrap_or(i64::MAX);
    substring_range(this, start, &CelInt::from(length))
}

fn substring_range(
    this: &CelString<'_>,
    start: &CelInt,
    end: &CelInt,
) -> Result<CelString<'static>, ExecutionError> {
    let length = this.chars().count();
    let index = |at: &CelInt| usize::try_from(*at.inner()).ok().filter(|&at| at <= length);
    match (index(start), index(end)) {
        (Some(start), Some(end)) if start <= end => Ok(this
            .chars()
            .skip(start)
            .take(end - start)
            .collect::<String>()
            .into()),
        _ => Err(ExecutionError::function_error(
            "substring",
            format!(
                "the range {}..{} is not within the string's {length} characters",
                start.inner(),
                end.inner()
            ),
        )),
    }
}

/// The code point `needle` starts at in `this`, or -1.
fn index_of(this: &CelString<'_>, needle: &CelString<'_>) -> CelInt {
    let at = (this.find(needle.inner())).map_or(-1, |byte| {
        i64::try_from(this[..byte].chars().count()).unwrap_or(-1)
    });
    CelInt::from(at)
}

/// Whether `text` is an IPv4 or IPv6 address, as Kubernetes' `isIP` says (no zone, no leading
/// zeros in IPv4: the standard library's parser is as strict).
fn is_ip(text: &CelString<'_>) -> CelBool {
    CelBool::from(text.parse::<std::net::IpAddr>().is_ok())
}
