// SPDX-License-Identifier: MIT
//! The Rayon peer of weft's benchmark suite.
//!
//! The driver (command line, workloads, timing, checks, JSON) is the shared C
//! driver, compiled in by build.rs; this file only says how Rayon runs each
//! workload's parallel shape, as the C systems do in ../../sys_*.c (see
//! ../../bench.h for the interface):
//! - forks are `rayon::join` (fib, n-queens, mergesort);
//! - loops are `par_iter_mut` (default splitting) and, for pieces of one
//!   index, `into_par_iter().with_max_len(1)`;
//! - jobs are `rayon::scope` + `spawn`;
//! - detached jobs from the outside thread are `ThreadPool::spawn`;
//! - everything enters the pool with `ThreadPool::install`, and a round trip
//!   is an empty `install`;
//! - the sort is `par_sort_unstable` (Rayon has no parallel scan).
//!
//! The mergesort's serial pieces are the C driver's own (`bench_msort_leaf`,
//! `bench_merge`), so every system sorts with the same sequential code.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_void};
use std::ptr;

use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

type JobFn = unsafe extern "C" fn(arg: *mut c_void);
type PieceFn = unsafe extern "C" fn(i: usize, arg: *mut c_void);
type RangeFn = unsafe extern "C" fn(begin: usize, end: usize, arg: *mut c_void);
type Pool = c_void; // a ThreadPool behind the C driver's opaque bench_pool

/// Mirror of `struct bench_system` in bench.h (same order, same types).
#[repr(C)]
pub struct BenchSystem {
    name: *const c_char,
    variant: c_int,
    hidden: c_int,
    one_caller: c_int,
    create: Option<unsafe extern "C" fn(*const BenchSystem, u32, u32) -> *mut Pool>,
    destroy: Option<unsafe extern "C" fn(*mut Pool)>,
    fib: Option<unsafe extern "C" fn(*mut Pool, c_int) -> c_long>,
    loop_: Option<unsafe extern "C" fn(*mut Pool, *mut c_int, usize)>,
    nqueens: Option<unsafe extern "C" fn(*mut Pool, c_int) -> c_long>,
    msort: Option<unsafe extern "C" fn(*mut Pool, *mut c_int, *mut c_int, usize, usize)>,
    pieces: Option<unsafe extern "C" fn(*mut Pool, usize, PieceFn, *mut c_void)>,
    jobs: Option<unsafe extern "C" fn(*mut Pool, usize, PieceFn, *mut c_void)>,
    outside: Option<unsafe extern "C" fn(*mut Pool, JobFn, *mut c_void)>,
    submit: Option<unsafe extern "C" fn(*mut Pool, JobFn, *mut c_void)>,
    roundtrip: Option<unsafe extern "C" fn(*mut Pool)>,
    submit_high: Option<unsafe extern "C" fn(*mut Pool, JobFn, *mut c_void)>,
    graph: Option<unsafe extern "C" fn(*mut Pool, c_int, usize, PieceFn, *mut c_void, u32)>,
    range: Option<unsafe extern "C" fn(*mut Pool, usize, RangeFn, *mut c_void)>,
    pi: Option<unsafe extern "C" fn(*mut Pool, c_long) -> c_long>,
    knapsack: Option<unsafe extern "C" fn(*mut Pool, *const c_void) -> c_long>,
    uts: Option<unsafe extern "C" fn(*mut Pool, u64, c_int) -> c_long>,
    sort: Option<unsafe extern "C" fn(*mut Pool, *mut u64, usize)>,
    scan: Option<unsafe extern "C" fn(*mut Pool, *const u64, *mut u64, usize)>,
    blocking_begin: Option<unsafe extern "C" fn()>,
    blocking_end: Option<unsafe extern "C" fn()>,
}

// The table is immutable and its name points to a static string.
unsafe impl Sync for BenchSystem {}

extern "C" {
    fn bench_main(argc: c_int, argv: *mut *mut c_char) -> c_int;
    fn bench_die(what: *const c_char, detail: *const c_char);
    fn bench_msort_leaf(a: *mut c_int, tmp: *mut c_int, n: usize);
    fn bench_merge(a: *mut c_int, mid: usize, n: usize, tmp: *mut c_int);
}

/// A C argument pointer handed to another thread. The driver keeps what it
/// points to alive until the job has run (it waits for every job).
#[derive(Clone, Copy)]
struct Arg(*mut c_void);

unsafe impl Send for Arg {}
unsafe impl Sync for Arg {}

impl Arg {
    // A method, so closures capture the whole Send wrapper, not the raw field.
    fn get(self) -> *mut c_void {
        self.0
    }
}

/// The benchmark's pool: Rayon's pool, and a second one made on first use for
/// high-priority jobs: Rayon has no priorities, and two pools is what its
/// users do today.
struct Pools {
    main: ThreadPool,
    high: std::sync::Mutex<Option<ThreadPool>>,
    threads: usize,
}

unsafe fn pools<'a>(p: *mut Pool) -> &'a Pools {
    &*(p as *const Pools)
}

unsafe fn pool<'a>(p: *mut Pool) -> &'a ThreadPool {
    &pools(p).main
}

fn build(threads: usize, prefix: &'static str) -> ThreadPool {
    match ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{prefix}-{i}"))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            let what = CString::new("rayon ThreadPoolBuilder").unwrap_or_default();
            let detail = CString::new(e.to_string()).unwrap_or_default();
            unsafe { bench_die(what.as_ptr(), detail.as_ptr()) };
            unreachable!()
        }
    }
}

unsafe extern "C" fn create(_: *const BenchSystem, threads: u32, _flags: u32) -> *mut Pool {
    let pools = Pools {
        main: build(threads as usize, "rayon"),
        high: std::sync::Mutex::new(None),
        threads: threads as usize,
    };
    Box::into_raw(Box::new(pools)) as *mut Pool
}

unsafe extern "C" fn destroy(p: *mut Pool) {
    drop(Box::from_raw(p as *mut Pools));
}

fn fib_rec(n: c_int) -> c_long {
    if n < 2 {
        return n as c_long;
    }
    let (x, y) = rayon::join(|| fib_rec(n - 1), || fib_rec(n - 2));
    x + y
}

unsafe extern "C" fn fib(p: *mut Pool, n: c_int) -> c_long {
    pool(p).install(|| fib_rec(n))
}

unsafe extern "C" fn loop_(p: *mut Pool, a: *mut c_int, n: usize) {
    let a = std::slice::from_raw_parts_mut(a, n);
    pool(p).install(|| a.par_iter_mut().for_each(|x| *x += 1));
}

/// An n-queens board: the same search tree as bench.h's bench_nq.
#[derive(Clone, Copy)]
struct Board {
    n: u32,
    row: u32,
    cols: u32,
    d1: u32,
    d2: u32,
    ncand: usize,
    cand: [u32; 16],
}

impl Board {
    fn root(n: u32) -> Board {
        let mut b = Board {
            n,
            row: 0,
            cols: 0,
            d1: 0,
            d2: 0,
            ncand: 0,
            cand: [0; 16],
        };
        b.fill();
        b
    }

    fn full(&self) -> u32 {
        (1u32 << self.n) - 1
    }

    fn fill(&mut self) {
        let mut free = self.full() & !(self.cols | self.d1 | self.d2);
        self.ncand = 0;
        while free != 0 {
            self.cand[self.ncand] = free & free.wrapping_neg();
            self.ncand += 1;
            free &= free - 1;
        }
    }

    /// Solutions settled by placing candidate i, or the child board to search.
    fn leaf(&self, i: usize) -> Result<c_long, Board> {
        let bit = self.cand[i];
        if self.row + 1 == self.n {
            return Ok(1);
        }
        let mut child = Board {
            row: self.row + 1,
            cols: self.cols | bit,
            d1: ((self.d1 | bit) << 1) & self.full(),
            d2: (self.d2 | bit) >> 1,
            ..*self
        };
        child.fill();
        if child.ncand == 0 {
            Ok(0)
        } else {
            Err(child)
        }
    }
}

/// Solutions below candidates [lo, hi) of board s: halve, fork, sum.
fn nq_range(s: &Board, lo: usize, hi: usize) -> c_long {
    if hi - lo == 1 {
        return match s.leaf(lo) {
            Ok(k) => k,
            Err(child) => nq_range(&child, 0, child.ncand),
        };
    }
    let mid = lo + (hi - lo) / 2;
    let (x, y) = rayon::join(|| nq_range(s, lo, mid), || nq_range(s, mid, hi));
    x + y
}

unsafe extern "C" fn nqueens(p: *mut Pool, n: c_int) -> c_long {
    let root = Board::root(n as u32);
    if root.ncand == 0 {
        return 0;
    }
    pool(p).install(|| nq_range(&root, 0, root.ncand))
}

fn ms_rec(a: &mut [c_int], tmp: &mut [c_int], cutoff: usize) {
    let n = a.len();
    if n <= cutoff {
        unsafe { bench_msort_leaf(a.as_mut_ptr(), tmp.as_mut_ptr(), n) };
        return;
    }
    let h = n / 2;
    {
        let (a0, a1) = a.split_at_mut(h);
        let (t0, t1) = tmp.split_at_mut(h);
        rayon::join(|| ms_rec(a0, t0, cutoff), || ms_rec(a1, t1, cutoff));
    }
    unsafe { bench_merge(a.as_mut_ptr(), h, n, tmp.as_mut_ptr()) };
}

unsafe extern "C" fn msort(p: *mut Pool, a: *mut c_int, tmp: *mut c_int, n: usize, cutoff: usize) {
    let a = std::slice::from_raw_parts_mut(a, n);
    let tmp = std::slice::from_raw_parts_mut(tmp, n);
    pool(p).install(|| ms_rec(a, tmp, cutoff));
}

unsafe extern "C" fn pieces(p: *mut Pool, n: usize, f: PieceFn, arg: *mut c_void) {
    let arg = Arg(arg);
    pool(p).install(|| {
        (0..n)
            .into_par_iter()
            .with_max_len(1)
            .for_each(|i| unsafe { f(i, arg.get()) })
    });
}

/// The uneven workload: Rayon's default splitting over the indices.
unsafe extern "C" fn range(p: *mut Pool, n: usize, f: RangeFn, arg: *mut c_void) {
    let arg = Arg(arg);
    pool(p).install(|| {
        (0..n)
            .into_par_iter()
            .for_each(|i| unsafe { f(i, i + 1, arg.get()) })
    });
}

unsafe extern "C" fn jobs(p: *mut Pool, n: usize, f: PieceFn, arg: *mut c_void) {
    let arg = Arg(arg);
    pool(p).install(|| {
        rayon::scope(|s| {
            for i in 0..n {
                s.spawn(move |_| unsafe { f(i, arg.get()) });
            }
        })
    });
}

unsafe extern "C" fn submit(p: *mut Pool, f: JobFn, arg: *mut c_void) {
    let arg = Arg(arg);
    pool(p).spawn(move || unsafe { f(arg.get()) });
}

unsafe extern "C" fn roundtrip(p: *mut Pool) {
    pool(p).install(|| ());
}

unsafe extern "C" fn submit_high(p: *mut Pool, f: JobFn, arg: *mut c_void) {
    let pools = pools(p);
    let mut high = pools.high.lock().unwrap_or_else(|e| e.into_inner());
    let high = high.get_or_insert_with(|| build(pools.threads, "rayon-high"));
    let arg = Arg(arg);
    high.spawn(move || unsafe { f(arg.get()) });
}

/// The sort workload: `par_sort_unstable`, Rayon's parallel pattern-defeating
/// quicksort (unstable, as weft::sort and std::sort are).
unsafe extern "C" fn sort(p: *mut Pool, a: *mut u64, n: usize) {
    let keys = std::slice::from_raw_parts_mut(a, n);
    pool(p).install(|| keys.par_sort_unstable());
}

static RAYON: BenchSystem = BenchSystem {
    // Not a c"" literal: those need Rust 1.77, Debian 12's rustc is 1.63.
    name: b"rayon\0".as_ptr() as *const c_char,
    variant: 0,
    hidden: 0,
    one_caller: 0,
    create: Some(create),
    destroy: Some(destroy),
    fib: Some(fib),
    loop_: Some(loop_),
    nqueens: Some(nqueens),
    msort: Some(msort),
    pieces: Some(pieces),
    jobs: Some(jobs),
    outside: None,
    submit: Some(submit),
    roundtrip: Some(roundtrip),
    submit_high: Some(submit_high),
    graph: None, /* Rayon has no task graph */
    range: Some(range),
    pi: None, /* Lace's suite: weft, Lace and the serial reference only */
    knapsack: None,
    uts: None,
    sort: Some(sort),
    scan: None, /* Rayon has no parallel scan */
    blocking_begin: None, /* a blocked job holds its worker */
    blocking_end: None,
};

/// Called by the C driver: the i-th system of this program.
#[no_mangle]
pub extern "C" fn bench_system_get(i: u32) -> *const BenchSystem {
    if i == 0 {
        &RAYON
    } else {
        ptr::null()
    }
}

fn main() {
    let args: Vec<CString> = std::env::args()
        .map(|a| CString::new(a).expect("argument with a NUL byte"))
        .collect();
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(ptr::null_mut());
    let code = unsafe { bench_main(args.len() as c_int, argv.as_mut_ptr()) };
    std::process::exit(code);
}
