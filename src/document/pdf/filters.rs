//! A stream's filters undone (ISO 32000 §7.4): what text and its structure are stored with —
//! Flate (with PNG and TIFF predictors), LZW, ASCII hex and base-85, run length. Image codecs
//! are not here: no text is stored with them. Every stream is bounded by [`MAX_STREAM_BYTES`]
//! once decoded, so a small file that inflates without end is refused, not followed.

use super::problem::Problem;
use super::syntax::{Dict, Object};

/// The most a stream may hold once decoded: far above any page's text and structure, far below
/// what would exhaust a component's memory.
pub const MAX_STREAM_BYTES: usize = 64 << 20;

/// `data` with the filters of the stream `dict` undone, in order.
pub fn decode(dict: &Dict, data: Vec<u8>) -> Result<Vec<u8>, Problem> {
    let filters: Vec<&[u8]> = match dict.get(b"Filter").or_else(|| dict.get(b"F")) {
        Some(Object::Name(name)) => vec![name],
        Some(Object::Array(names)) => names.iter().filter_map(Object::name).collect(),
        _ => Vec::new(),
    };
    let parameters = |index: usize| -> Option<&Dict> {
        match dict.get(b"DecodeParms").or_else(|| dict.get(b"DP"))? {
            Object::Dict(parameters) => Some(parameters),
            Object::Array(each) => each.get(index)?.dict(),
            _ => None,
        }
    };
    let mut bytes = data;
    for (index, filter) in filters.into_iter().enumerate() {
        bytes = match filter {
            b"FlateDecode" | b"Fl" => predicted(inflate(&bytes)?, parameters(index))?,
            b"LZWDecode" | b"LZW" => predicted(lzw(&bytes, parameters(index))?, parameters(index))?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(&bytes),
            b"ASCII85Decode" | b"A85" => ascii85(&bytes),
            b"RunLengthDecode" | b"RL" => run_length(&bytes)?,
            other => {
                return Err(Problem::Unreadable(format!(
                    "a stream is stored with the {} filter, which holds no text",
                    String::from_utf8_lossy(other)
                )));
            }
        };
    }
    Ok(bytes)
}

fn too_large() -> Problem {
    Problem::TooLarge(format!(
        "a stream in it inflates past {} MiB",
        MAX_STREAM_BYTES >> 20
    ))
}

/// Zlib-wrapped deflate, or raw deflate as some writers leave it. A stream cut short gives what
/// it holds, as readers do.
fn inflate(data: &[u8]) -> Result<Vec<u8>, Problem> {
    use miniz_oxide::inflate::{
        TINFLStatus, decompress_to_vec_with_limit as raw, decompress_to_vec_zlib_with_limit as zlib,
    };
    let wrapped = matches!(data, [method, check, ..]
        if method & 0x0f == 8 && (u16::from(*method) << 8 | u16::from(*check)) % 31 == 0);
    let outcome = if wrapped {
        zlib(data, MAX_STREAM_BYTES)
    } else {
        raw(data, MAX_STREAM_BYTES)
    };
    match outcome {
        Ok(bytes) => Ok(bytes),
        Err(error) if error.status == TINFLStatus::HasMoreOutput => Err(too_large()),
        Err(error) => Ok(error.output),
    }
}

/// PDF's LZW: most significant bit first, the code width growing one code early unless
/// `/EarlyChange 0`.
fn lzw(data: &[u8], parameters: Option<&Dict>) -> Result<Vec<u8>, Problem> {
    use weezl::{BitOrder, LzwStatus, decode::Decoder};
    let early = parameters
        .and_then(|parameters| parameters.get(b"EarlyChange"))
        .and_then(Object::int)
        != Some(0);
    let mut decoder = if early {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut input = data;
    loop {
        let result = decoder.decode_bytes(input, &mut buffer);
        input = &input[result.consumed_in..];
        out.extend_from_slice(&buffer[..result.consumed_out]);
        if out.len() > MAX_STREAM_BYTES {
            return Err(too_large());
        }
        match result.status {
            Ok(LzwStatus::Ok) if result.consumed_in + result.consumed_out > 0 => {}
            _ => return Ok(out),
        }
    }
}

/// The PNG (10–15) or TIFF (2) predictor of `parameters` undone.
fn predicted(data: Vec<u8>, parameters: Option<&Dict>) -> Result<Vec<u8>, Problem> {
    let Some(parameters) = parameters else {
        return Ok(data);
    };
    let value =
        |key: &[u8], default: i64| parameters.get(key).and_then(Object::int).unwrap_or(default);
    let predictor = value(b"Predictor", 1);
    if predictor < 2 {
        return Ok(data);
    }
    let colors = value(b"Colors", 1).clamp(1, 32) as usize;
    let bits = value(b"BitsPerComponent", 8).clamp(1, 16) as usize;
    let columns = value(b"Columns", 1).clamp(1, 1 << 20) as usize;
    let pixel = (colors * bits).div_ceil(8).max(1);
    let row = (colors * bits * columns).div_ceil(8);
    if predictor == 2 {
        return Ok(tiff(data, row, pixel, bits));
    }
    let mut out = Vec::with_capacity(data.len());
    let mut previous = vec![0u8; row];
    for line in data.chunks(row + 1) {
        let (kind, line) = (line[0], &line[1..]);
        let mut current = vec![0u8; row];
        for (index, &byte) in line.iter().enumerate() {
            let left = if index >= pixel {
                current[index - pixel]
            } else {
                0
            };
            let up = previous[index];
            let up_left = if index >= pixel {
                previous[index - pixel]
            } else {
                0
            };
            current[index] = byte.wrapping_add(match kind {
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                _ => 0,
            });
        }
        out.extend_from_slice(&current[..line.len()]);
        previous = current;
    }
    Ok(out)
}

fn paeth(left: u8, up: u8, up_left: u8) -> u8 {
    let estimate = i16::from(left) + i16::from(up) - i16::from(up_left);
    let distance = |value: u8| (estimate - i16::from(value)).abs();
    if distance(left) <= distance(up) && distance(left) <= distance(up_left) {
        left
    } else if distance(up) <= distance(up_left) {
        up
    } else {
        up_left
    }
}

/// TIFF's horizontal differencing, for 8-bit components (others are left as they are: they
/// hold images, not text).
fn tiff(mut data: Vec<u8>, row: usize, pixel: usize, bits: usize) -> Vec<u8> {
    if bits != 8 {
        return data;
    }
    for line in data.chunks_mut(row) {
        for index in pixel..line.len() {
            line[index] = line[index].wrapping_add(line[index - pixel]);
        }
    }
    data
}

fn ascii_hex(data: &[u8]) -> Vec<u8> {
    let digits: Vec<u8> = data
        .iter()
        .take_while(|&&byte| byte != b'>')
        .filter_map(|&byte| (byte as char).to_digit(16).map(|digit| digit as u8))
        .collect();
    digits
        .chunks(2)
        .map(|pair| pair[0] << 4 | pair.get(1).copied().unwrap_or(0))
        .collect()
}

fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * 4 / 5);
    let mut group = [0u8; 5];
    let mut filled = 0;
    let start = if data.starts_with(b"<~") { 2 } else { 0 };
    for &byte in &data[start..] {
        match byte {
            b'~' => break,
            b'z' if filled == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[filled] = byte - b'!';
                filled += 1;
                if filled == 5 {
                    out.extend_from_slice(&base85_word(&group).to_be_bytes());
                    filled = 0;
                }
            }
            _ => {}
        }
    }
    if filled > 1 {
        group[filled..].fill(84);
        out.extend_from_slice(&base85_word(&group).to_be_bytes()[..filled - 1]);
    }
    out
}

fn base85_word(group: &[u8; 5]) -> u32 {
    group.iter().fold(0u32, |word, &digit| {
        word.wrapping_mul(85).wrapping_add(u32::from(digit))
    })
}

fn run_length(data: &[u8]) -> Result<Vec<u8>, Problem> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(&length) = data.get(at) {
        at += 1;
        match length {
            128 => break,
            0..=127 => {
                let end = (at + usize::from(length) + 1).min(data.len());
                out.extend_from_slice(&data[at..end]);
                at = end;
            }
            _ => {
                if let Some(&byte) = data.get(at) {
                    out.extend(std::iter::repeat_n(byte, 257 - usize::from(length)));
                }
                at += 1;
            }
        }
        if out.len() > MAX_STREAM_BYTES {
            return Err(too_large());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(filter: &str) -> Dict {
        Dict(vec![(
            b"Filter".to_vec(),
            Object::Name(filter.as_bytes().to_vec()),
        )])
    }

    #[test]
    fn each_text_filter_is_undone() {
        assert_eq!(ascii_hex(b"48 65 6C6c 6>"), b"Hell`");
        assert_eq!(ascii85(b"<~87cURD]i,\"Ebo80~>"), b"Hello World!");
        assert_eq!(
            run_length(&[2, b'a', b'b', b'c', 254, b'z', 128]).unwrap(),
            b"abczzz"
        );
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(b"BT (Hi) Tj ET", 6);
        assert_eq!(
            decode(&filtered("FlateDecode"), deflated).unwrap(),
            b"BT (Hi) Tj ET"
        );
        let raw = miniz_oxide::deflate::compress_to_vec(b"BT (Hi) Tj ET", 6);
        assert_eq!(
            decode(&filtered("FlateDecode"), raw).unwrap(),
            b"BT (Hi) Tj ET"
        );
    }

    #[test]
    fn png_up_predictor_is_undone() {
        // Two rows of three bytes, each row predicted from the one above (filter type 2).
        let rows = [2, 1, 2, 3, 2, 1, 1, 1];
        let parameters = Dict(vec![
            (b"Predictor".to_vec(), Object::Int(12)),
            (b"Columns".to_vec(), Object::Int(3)),
        ]);
        assert_eq!(
            predicted(rows.to_vec(), Some(&parameters)).unwrap(),
            [1, 2, 3, 2, 3, 4]
        );
    }

    #[test]
    fn a_stream_that_inflates_past_the_limit_is_refused() {
        let zeros = vec![0u8; MAX_STREAM_BYTES + 1];
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&zeros, 1);
        assert!(matches!(
            decode(&filtered("FlateDecode"), deflated),
            Err(Problem::TooLarge(_))
        ));
    }
}
