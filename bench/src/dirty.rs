//! Which pages of an instance's memory the pooling allocator resets for the next instance
//! (issue 41: a fifth to a quarter of a fresh call). With `PAGEMAP_SCAN`, wasmtime resets every
//! page of a slot that is present and neither the zero page nor the image's file page: a
//! private copy, made when an instance wrote it. Such a page stays private after the reset
//! (the reset copies the image into it), so the set grows to every page any instance of the
//! slot ever wrote, within the kept-resident budget. `/proc/self/pagemap` says which pages
//! those are (root: page frame numbers are shown).

use std::io::{Read, Seek, SeekFrom};

const PAGE: u64 = 4096;
/// How far into the slot pages are read: past the memory a call of the benchmark grows to.
const SPAN: u64 = 16 << 20;
const PRESENT: u64 = 1 << 63;
/// A file page or shared anonymous memory: the image, not a private copy.
const FILE_OR_SHARED: u64 = 1 << 61;
const FRAME: u64 = (1 << 55) - 1;

/// Where the memory of the slot fresh instances take starts, and how much of it lies below the
/// image: the anonymous mapping just before the private mapping of the memory image (from the
/// compiled component's file), which is the stack.
pub fn slot() -> anyhow::Result<(u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let ranges: Vec<(u64, u64, &str)> = (maps.lines())
        .filter_map(|line| {
            let (start, end) = line.split_whitespace().next()?.split_once('-')?;
            let start = u64::from_str_radix(start, 16).ok()?;
            Some((start, u64::from_str_radix(end, 16).ok()?, line))
        })
        .collect();
    let at = (ranges.iter())
        .position(|(_, _, line)| line.contains(" rw-p ") && line.ends_with(".cwasm"))
        .ok_or_else(|| anyhow::anyhow!("no memory image mapped"))?;
    let image = ranges[at].0;
    Ok(match at.checked_sub(1).map(|before| ranges[before]) {
        Some((start, end, line)) if end == image && line.contains(" rw-p 00000000 00:00 0") => {
            (start, end - start)
        }
        _ => (image, 0),
    })
}

/// The offsets from `base`, within [`SPAN`], of the private pages a reset will copy or zero.
pub fn private_pages(base: u64) -> anyhow::Result<Vec<u64>> {
    let zero_frame = zero_page_frame()?;
    let mut pagemap = std::fs::File::open("/proc/self/pagemap")?;
    pagemap.seek(SeekFrom::Start(base / PAGE * 8))?;
    let mut entries = vec![0u8; (SPAN / PAGE * 8) as usize];
    pagemap.read_exact(&mut entries)?;
    Ok((entries.as_chunks::<8>().0.iter().enumerate())
        .filter(|(_, entry)| {
            let entry = u64::from_le_bytes(**entry);
            entry & PRESENT != 0 && entry & FILE_OR_SHARED == 0 && entry & FRAME != zero_frame
        })
        .map(|(page, _)| page as u64 * PAGE)
        .collect())
}

/// The frame of the kernel's zero page: what a page read but never written maps to.
fn zero_page_frame() -> anyhow::Result<u64> {
    // Reading a page of a fresh allocation maps it to the zero page.
    let untouched = vec![0u8; 4 * PAGE as usize];
    let read = untouched.iter().map(|byte| u64::from(*byte)).sum::<u64>();
    let at = (untouched.as_ptr() as u64).div_ceil(PAGE) * PAGE + read;
    let mut pagemap = std::fs::File::open("/proc/self/pagemap")?;
    pagemap.seek(SeekFrom::Start(at / PAGE * 8))?;
    let mut entry = [0u8; 8];
    pagemap.read_exact(&mut entry)?;
    match u64::from_le_bytes(entry) & FRAME {
        0 => anyhow::bail!("page frame numbers are hidden: run as root (CAP_SYS_ADMIN)"),
        frame => Ok(frame),
    }
}

/// Prints the pages the next reset of the slot will copy or zero, by MiB of the memory.
pub fn report() -> anyhow::Result<()> {
    let (base, below_image) = slot()?;
    let mut by_mib = std::collections::BTreeMap::<u64, usize>::new();
    for offset in private_pages(base)? {
        *by_mib.entry(offset >> 20).or_default() += 1;
    }
    println!(
        "pages reset a call: {} (below the image, the stack: {} KiB)",
        by_mib.values().sum::<usize>(),
        below_image >> 10
    );
    for (mib, pages) in by_mib {
        println!("  {mib:>3} MiB: {pages}");
    }
    Ok(())
}
