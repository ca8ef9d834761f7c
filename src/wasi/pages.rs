//! Every page of the instance's memory read once before a call returns, so that the host's
//! reset of the memory for the next instance goes over only the pages a call wrote.
//!
//! wasmtime's pooling allocator keeps a finished instance's memory for the next one and, where
//! Linux has `PAGEMAP_SCAN` (6.7 and later), resets the pages the scan reports as written:
//! copies the image back into them, or zeroes them. The scan reports a page never touched (a
//! hole) as written too — the kernel calls every page without write protection written — so
//! the first reset of a slot writes every hole in it, and a page once written stays the
//! process's own copy, reset again after every instance. A page read instead is mapped (the
//! image's file page, or the kernel's zero page), and the scan passes over those. Reading one
//! byte of each page leaves no hole: after a valid call 50 pages are reset instead of 383
//! (docs/history/benchmarks.md, "Fourth turn").
//!
//! Only where the host says it keeps the memory resident (`structure_memory_kept_resident` is
//! `on`; `structure serve` and the Rust client say so themselves): a host that hands the memory
//! back after each instance, as wasmtime does by default, maps it afresh for the next one, and
//! there the reads would only fault in pages no call needs (about 75 more a call).

use core::ops::Range;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::keys;
use crate::wasi::config;

/// The host's page: Linux's 4 KiB, the smallest any host maps memory in.
const PAGE: usize = 4096;
/// A WebAssembly page: the unit `memory.size` counts in.
const WASM_PAGE: usize = 65_536;

/// Reads every page of the memory when dropped: every export makes one first, so that each way
/// out of a call, an early error too, leaves no hole. (A trap does not drop it: the holes of a
/// slot whose first instance trapped are reset, and kept, as before.)
pub(super) struct ReadEveryPageOnReturn;

/// The bytes of this instance's memory whose pages were read: a page once read stays mapped for
/// the instance's life, so a reused instance reads only the pages its memory grew by, and asks
/// nothing of the host when it did not grow. (A fresh instance starts at none: the initialiser
/// makes no [`ReadEveryPageOnReturn`].)
static READ_UP_TO: AtomicUsize = AtomicUsize::new(0);

impl Drop for ReadEveryPageOnReturn {
    fn drop(&mut self) {
        let bytes = core::arch::wasm32::memory_size(0) * WASM_PAGE;
        let from = READ_UP_TO.load(Ordering::Relaxed);
        if bytes <= from {
            return;
        }
        let kept = config::get(keys::MEMORY_KEPT_RESIDENT);
        if kept
            .ok()
            .flatten()
            .is_some_and(|value| value.trim() == "on")
        {
            read_pages(from..bytes);
            READ_UP_TO.store(bytes, Ordering::Relaxed);
        }
    }
}

/// Reads the last byte of every page in `bytes` (the last, so that page 0's read is not of
/// address 0).
fn read_pages(bytes: Range<usize>) {
    for page in bytes.start / PAGE..bytes.end / PAGE {
        let address = page * PAGE + PAGE - 1;
        // SAFETY: every address below `memory.size` is in the instance's memory and readable;
        // the read is volatile so that it is made, and its value is not used.
        unsafe { core::ptr::with_exposed_provenance::<u8>(address).read_volatile() };
    }
}
