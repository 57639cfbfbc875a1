//! Whole-network state tables that take memory only where they are used.
//!
//! Every engine, a partition's included, indexes its state by global port and VC numbers,
//! so its tables span the whole network. They are allocated zero-filled: the allocator takes
//! fresh pages from the operating system, which maps a page only when it is first written.
//! Records whose empty state is not all-zero are written only for the routers the engine
//! runs (`own_router_entries`), so a partition's engine writes, and so maps, only its own
//! routers' part of each table. Its simulation reads no other entries; the deadlock probe's
//! passes over whole tables read the others' as zero (the shared zero page, no memory) and
//! their results there are discarded when the partitions' shares are joined (docs/simulator.md,
//! "The parallel engine").

use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::ptr::NonNull;
use std::slice::SliceIndex;

use bytemuck::Zeroable;

use super::Network;

/// `n` all-zero records. Pages are mapped when first written as long as `T` is aligned to
/// at most 16 bytes (the allocator's `calloc` path; more-aligned records are written out
/// by the allocator, which maps them all).
pub(super) fn zeroed<T: Zeroable>(n: usize) -> Vec<T> {
    bytemuck::zeroed_vec(n)
}

/// A per-port table of `width` records per global port (`port * width + k`), all-zero
/// except at the ports of the routers `owns` says this engine runs, where entry `i` is
/// `empty(i)`.
pub(super) fn own_router_entries<T: Zeroable>(
    net: &Network,
    width: usize,
    owns_router: &dyn Fn(usize) -> bool,
    empty: impl Fn(usize) -> T,
) -> Vec<T> {
    let mut table = zeroed(net.num_ports() * width);
    for router in (0..net.num_routers()).filter(|&r| owns_router(r)) {
        let start = net.port_base[router] as usize * width;
        let end = net.port_base[router + 1] as usize * width;
        for (i, entry) in table[start..end].iter_mut().enumerate() {
            *entry = empty(start + i);
        }
    }
    table
}

/// A fixed-length table of all-zero records at a 64-byte aligned address, mapped lazily
/// whatever the records' alignment: [`zeroed`] is lazy only up to 16-byte alignment, and
/// records aligned to share cache lines evenly (the input VCs' 32-byte records) need more.
/// The records live in a zero-filled `u128` buffer (lazy), from its first 64-byte boundary;
/// the table keeps a pointer there so that reaching a record costs what it costs in a `Vec`.
pub(super) struct AlignedZeroed<T> {
    /// Owns the memory; never resized, so `first` stays valid while the table lives.
    _storage: Vec<u128>,
    first: NonNull<T>,
    len: usize,
}

// SAFETY: the table owns its records as a `Vec<T>` would (nothing else points into
// `_storage`), so it may move to or be shared with another thread when `T` may.
unsafe impl<T: Send> Send for AlignedZeroed<T> {}
// SAFETY: as above; `&AlignedZeroed` gives only `&[T]`.
unsafe impl<T: Sync> Sync for AlignedZeroed<T> {}

impl<T: Zeroable> AlignedZeroed<T> {
    pub(super) fn new(len: usize) -> Self {
        const { assert!(std::mem::align_of::<T>() <= 64) };
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|b| b.checked_add(64))
            .expect("state table fits in memory");
        // `vec![0; n]` of an integer type allocates zero-filled (lazy) memory.
        let mut storage = vec![0u128; bytes.div_ceil(16)];
        let start = storage.as_mut_ptr().cast::<u8>();
        let offset = start.align_offset(64);
        assert!(offset < 64, "a u128 buffer reaches a 64-byte boundary");
        // SAFETY: `offset < 64` and `storage` holds `len * size_of::<T>() + 64` bytes, so the
        // pointer stays inside it (and is not null).
        let first = unsafe { NonNull::new_unchecked(start.add(offset).cast::<T>()) };
        AlignedZeroed {
            _storage: storage,
            first,
            len,
        }
    }
}

impl<T> Deref for AlignedZeroed<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `first` points at `len` records inside `_storage` (`new`), aligned to 64
        // bytes, at least `T`'s alignment. Their bytes are zero (a valid `T`: `new` needs
        // `T: Zeroable`) or were written as a `T` through `deref_mut`. The slice borrows
        // `self`, which owns the buffer, so it is neither freed nor written meanwhile.
        unsafe { std::slice::from_raw_parts(self.first.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for AlignedZeroed<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; the mutable borrow of `self` makes the slice the only
        // access to the buffer while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.first.as_ptr(), self.len) }
    }
}

/// Whether the hot tables check their indices: always in debug builds, in the library's unit
/// tests and with the `checked-tables` feature (`.ci/run` runs the simulator's integration
/// tests with it); never in an optimised build of the tool.
const CHECKED: bool = cfg!(any(debug_assertions, test, feature = "checked-tables"));

/// A table on the simulation's hot path (per port, VC, router, terminal or wheel slot),
/// indexed without a bounds check in optimised builds: the router pass reads and writes a
/// dozen such tables per flit-hop, and the checks, with the reloads of each `Vec`'s length
/// they force, were about 15% of the instructions of the bench cases (docs/benchmarks.md).
/// The indices come from the network's fixed description (ports, VCs, channels, routers,
/// terminals, all sized when the engine is built) and from bit sets and lists over it; the
/// values that come from elsewhere (routing functions' candidates and injection VCs,
/// `inject_packet`'s arguments, other partitions' flits and credits) are checked where they
/// enter (docs/simulator.md, "Tables indexed without bounds checks"). The checked builds
/// (`CHECKED`) run the tests with the bounds checks on. Derefs to its `Vec` for everything but
/// indexing by position or range.
#[derive(Clone, Debug)]
pub(super) struct HotTable<T>(Vec<T>);

impl<T> Default for HotTable<T> {
    fn default() -> Self {
        HotTable(Vec::new())
    }
}

impl<T> From<Vec<T>> for HotTable<T> {
    fn from(v: Vec<T>) -> Self {
        HotTable(v)
    }
}

impl<T> FromIterator<T> for HotTable<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        HotTable(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a HotTable<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut HotTable<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<T> Deref for HotTable<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> DerefMut for HotTable<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T, I: SliceIndex<[T]>> Index<I> for HotTable<T> {
    type Output = I::Output;

    #[inline(always)]
    fn index(&self, i: I) -> &I::Output {
        if CHECKED {
            return &self.0[i];
        }
        // SAFETY: the engine's indices are in range (the type's documentation); the checked
        // builds test it.
        unsafe { self.0.get_unchecked(i) }
    }
}

impl<T, I: SliceIndex<[T]>> IndexMut<I> for HotTable<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: I) -> &mut I::Output {
        if CHECKED {
            return &mut self.0[i];
        }
        // SAFETY: as in `index`.
        unsafe { self.0.get_unchecked_mut(i) }
    }
}

/// Records by position as a [`HotTable`]'s (ranges go through `Deref`, checked).
impl<T> Index<usize> for AlignedZeroed<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        if CHECKED {
            return &self.deref()[i];
        }
        // SAFETY: as in `HotTable::index`; `first` points at `len` records (`deref`).
        unsafe { &*self.first.as_ptr().add(i) }
    }
}

impl<T> IndexMut<usize> for AlignedZeroed<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        if CHECKED {
            return &mut self.deref_mut()[i];
        }
        // SAFETY: as in `index`; the mutable borrow of `self` makes it the only access.
        unsafe { &mut *self.first.as_ptr().add(i) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Zeroable)]
    #[repr(C, align(32))]
    struct Record {
        a: u64,
        b: u32,
    }

    #[test]
    fn aligned_zeroed_tables_start_zero_aligned_and_keep_writes() {
        for len in [0, 1, 3, 1000, 100_000] {
            let mut table = AlignedZeroed::<Record>::new(len);
            assert_eq!(table.len(), len);
            assert_eq!(table.as_ptr() as usize % 64, 0);
            assert!(table.iter().all(|r| *r == Record { a: 0, b: 0 }));
            for (i, r) in table.iter_mut().enumerate() {
                *r = Record { a: i as u64, b: 7 };
            }
            // Moving the table moves the buffer's owner, not the buffer.
            let moved = table;
            assert!(
                moved
                    .iter()
                    .enumerate()
                    .all(|(i, r)| r.a == i as u64 && r.b == 7)
            );
        }
    }

    // The library's unit tests build with the bounds checks on (`CHECKED`): a test could
    // otherwise pass with an index out of range.
    #[test]
    #[should_panic(expected = "out of bounds")]
    fn hot_tables_are_checked_in_the_unit_tests() {
        let table: HotTable<u32> = vec![1, 2, 3].into();
        let _ = table[3];
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn aligned_tables_are_checked_in_the_unit_tests() {
        let table = AlignedZeroed::<Record>::new(3);
        let _ = table[3];
    }
}
