//! Reading a WASI input stream to its end.

use crate::wasi::bindings::wasi;

/// Reads `stream` to its end, handing each chunk to `take` (which may stop the read with an
/// error); `failed` words a stream error.
pub(crate) fn read_stream<E>(
    stream: &wasi::io::streams::InputStream,
    mut take: impl FnMut(Vec<u8>) -> Result<(), E>,
    failed: impl Fn(String) -> E,
) -> Result<(), E> {
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => take(chunk)?,
            Err(wasi::io::streams::StreamError::Closed) => return Ok(()),
            Err(wasi::io::streams::StreamError::LastOperationFailed(error)) => {
                return Err(failed(error.to_debug_string()));
            }
        }
    }
}
