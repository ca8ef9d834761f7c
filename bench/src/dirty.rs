//! Which pages of an instance's memory the pooling allocator resets for the next instance
//! (issue 41: a fifth to a quarter of a fresh call). Where Linux has `PAGEMAP_SCAN` (6.7 and
//! later), wasmtime asks it for the pages of the slot that are written and neither the kernel's
//! zero page nor the image's file page, and copies the image back into them or zeroes them.
//! This asks the same question the same way, over the slot's accessible memory.
//!
//! Two things make the set larger than the pages a call writes. A page written once stays the
//! process's own copy after the reset (the reset writes it, it does not hand it back), so the
//! set grows to every page any instance of the slot ever wrote. And the scan reports a page
//! never touched (a hole) as written too, so the reset writes the holes and they join the set;
//! the component reads every page before a call returns for that reason, where the host keeps
//! memory resident (`src/wasi/pages.rs`; `STRUCTURE_MEMORY_KEPT_RESIDENT=off` shows a run
//! without).

use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;

const PAGE: u64 = 4096;

/// Where the slot fresh instances take starts (the anonymous mapping just below the private
/// mapping of the memory image, which is the stack, when there is one), how much of it lies
/// below the image, and how long its accessible memory is (the writable mappings from there on).
pub fn slot() -> anyhow::Result<(u64, u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let ranges: Vec<(u64, u64, &str)> = (maps.lines())
        .filter_map(|line| {
            let (start, end) = line.split_whitespace().next()?.split_once('-')?;
            let start = u64::from_str_radix(start, 16).ok()?;
            Some((start, u64::from_str_radix(end, 16).ok()?, line))
        })
        .collect();
    let at = (ranges.iter())
        .position(|(_, _, line)| line.contains(" rw-p ") && is_image(line))
        .ok_or_else(|| anyhow::anyhow!("no memory image mapped"))?;
    let image = ranges[at].0;
    let start = match at.checked_sub(1).map(|before| ranges[before]) {
        Some((start, end, line)) if end == image && line.contains(" rw-p 00000000 00:00 0") => {
            start
        }
        _ => image,
    };
    let mut end = image;
    for (from, to, line) in &ranges[at..] {
        if *from != end || !line.contains(" rw-p ") {
            break;
        }
        end = *to;
    }
    Ok((start, image - start, end - start))
}

/// A mapping of a memory image: from the compiled component's file when it came from the cache,
/// else from the memory file wasmtime writes it to.
fn is_image(line: &str) -> bool {
    line.ends_with(".cwasm") || line.contains("/memfd:wasm-memory-image")
}

/// `struct pm_scan_arg` of `<linux/fs.h>`.
#[repr(C)]
struct PageMapScan {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// `PAGEMAP_SCAN`: `_IOWR('f', 16, struct pm_scan_arg)`.
const PAGEMAP_SCAN: u64 = (3 << 30) | (96 << 16) | ((b'f' as u64) << 8) | 16;
const WRITTEN: u64 = 1 << 1;
const FILE: u64 = 1 << 2;
const PFNZERO: u64 = 1 << 5;
/// Regions asked for at once, as wasmtime asks (it resumes where a full buffer stopped).
const REGIONS: usize = 64;

/// The offsets from `start`, within `len`, of the pages the next reset copies or zeroes: what
/// `PAGEMAP_SCAN` reports with wasmtime's categories (written, not the zero page, not a file's).
pub fn reset_pages(start: u64, len: u64) -> anyhow::Result<Vec<u64>> {
    let pagemap = std::fs::File::open("/proc/self/pagemap")?;
    let mut pages = Vec::new();
    let mut cursor = start;
    while cursor < start + len {
        let mut regions = [[0u64; 3]; REGIONS];
        let mut scan = PageMapScan {
            size: size_of::<PageMapScan>() as u64,
            flags: 0,
            start: cursor,
            end: start + len,
            walk_end: 0,
            vec: regions.as_mut_ptr() as u64,
            vec_len: REGIONS as u64,
            max_pages: 0,
            category_inverted: PFNZERO | FILE,
            category_mask: WRITTEN | PFNZERO | FILE,
            category_anyof_mask: 0,
            return_mask: 0,
        };
        // SAFETY: `scan` and the `regions` it points to live across the call, with their sizes.
        let found = unsafe { libc::ioctl(pagemap.as_raw_fd(), PAGEMAP_SCAN as _, &mut scan) };
        anyhow::ensure!(
            found >= 0,
            "PAGEMAP_SCAN failed (Linux 6.7 or later): {}",
            std::io::Error::last_os_error()
        );
        for [from, to, _] in &regions[..found as usize] {
            pages.extend((*from..*to).step_by(PAGE as usize).map(|page| page - start));
        }
        // The kernel stops early only when the regions are full, having walked past them.
        anyhow::ensure!(scan.walk_end > cursor, "PAGEMAP_SCAN did not advance");
        cursor = scan.walk_end;
    }
    Ok(pages)
}

/// Which of `pages` (offsets from `start`) are not mapped at all: holes the reset will write.
fn holes(start: u64, pages: &[u64]) -> anyhow::Result<usize> {
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    let mut pagemap = std::fs::File::open("/proc/self/pagemap")?;
    let mut holes = 0;
    for page in pages {
        let mut entry = [0u8; 8];
        pagemap.seek(SeekFrom::Start((start + page) / PAGE * 8))?;
        pagemap.read_exact(&mut entry)?;
        holes += usize::from(u64::from_le_bytes(entry) & (PRESENT | SWAPPED) == 0);
    }
    Ok(holes)
}

/// Prints the pages the next reset of the slot will copy or zero, by MiB of the memory.
pub fn report() -> anyhow::Result<()> {
    let (start, below_image, len) = slot()?;
    let pages = reset_pages(start, len)?;
    let mut by_mib = std::collections::BTreeMap::<u64, usize>::new();
    for offset in &pages {
        *by_mib.entry(offset >> 20).or_default() += 1;
    }
    println!(
        "pages reset a call: {} of {} (never touched: {}; below the image, the stack: {} KiB)",
        pages.len(),
        len / PAGE,
        holes(start, &pages)?,
        below_image >> 10
    );
    for (mib, pages) in by_mib {
        println!("  {mib:>3} MiB: {pages}");
    }
    Ok(())
}
