//! Allocations held by the threads a test marks, counted by this binary's allocator: a leak
//! check that reads only its own threads, so that tests running beside it (the browser's plans)
//! do not show up as growth, as they do in the process's resident memory. It counts blocks, not
//! bytes: a buffer that grows or shrinks between two readings is still one block, while a leak
//! of anything, however small, adds one per request.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

thread_local! {
    // A constant initialiser and no destructor: reading it never allocates, so the
    // allocator may read it.
    static MARKED: Cell<bool> = const { Cell::new(false) };
}

static BLOCKS: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting what marked threads allocate and free.
struct Counting;

fn count(blocks: isize) {
    if MARKED.try_with(Cell::get).unwrap_or(false) {
        BLOCKS.fetch_add(blocks, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged;
// the count is a side effect that neither allocates nor touches the memory. `alloc_zeroed` is
// the trait's own: `alloc`, counted here, then zeroes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        let memory = unsafe { System.alloc(layout) };
        if !memory.is_null() {
            count(1);
        }
        memory
    }

    unsafe fn dealloc(&self, memory: *mut u8, layout: Layout) {
        // SAFETY: `memory` came from this allocator, which is the system's.
        unsafe { System.dealloc(memory, layout) };
        count(-1);
    }

    unsafe fn realloc(&self, memory: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: `memory` came from this allocator, which is the system's. A block that moves
        // is still one block.
        unsafe { System.realloc(memory, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Counts this thread's allocations from now on (a runtime's `on_thread_start`).
pub fn mark_this_thread() {
    MARKED.with(|marked| marked.set(true));
}

/// Blocks allocated and not yet freed by marked threads since the binary started.
pub fn held_blocks() -> isize {
    BLOCKS.load(Ordering::Relaxed)
}
