//! The counting lane layer: the third implementation of the lane operations, for the
//! tests and the cost report only (`examples/cost_report.rs`); no dispatch path runs
//! it. Each vector stands for its eight real lane values, computed by the portable
//! layer's code, so a kernel run on it gives the portable layer's results, and, per
//! latency model, the cycle at which the value would be ready (both kept in a
//! thread-local arena, see `Tracked`). Every operation counts
//! itself by kind in thread-local counters and sets its result's ready cycle to the
//! latest of its inputs' plus the operation's latency on the model; the critical path
//! of a run is the latest ready cycle seen. No hardware is involved: the figures are
//! the same on every host.
//!
//! The model is a dependency graph with unbounded issue width: it gives the longest
//! chain of dependent operations (a lower bound on the time of one pass), not the
//! time a core would take, which throughput limits (`Report::madd_issue_bound` is the
//! simplest of those bounds). What it leaves out, deliberately:
//!
//! * `splat` is free and ready at cycle 0: in compiled code constants are broadcast
//!   once, outside the dependency chains (LLVM hoists them).
//! * `load` is ready at the model's load-to-use latency after cycle 0: the kernels
//!   load their inputs at the start. A value stored, read back by scalar code and
//!   loaded again starts a new chain (the scalar code between is not modelled).
//! * A mask is a `u8` in the trait, so it cannot carry its ready cycle. The layer
//!   keeps the ready cycle of the most recent `eq_mask`/`lt_mask` in a thread-local,
//!   and `select` depends on that one. This is exact where a select follows the
//!   compare it uses, as in the field code (`reduce_once`, `sub`, the table scans);
//!   where masks are combined in scalar code (`&`, `|`, `^` on `u8`, not counted) or
//!   a select uses an older mask, the select is charged the latest compare's cycle
//!   instead, which may be earlier or later than the true one.
//!
//! Latencies (cycles, 512-bit register forms) are LLVM's scheduling models' figures,
//! read from llvm/llvm-project at the commits named at `LATENCY`, which also gives
//! the file and the entry behind each figure. They are the compiler's model of those
//! CPUs, not measurements of ours.

use super::{Kernel, LaneOps, Portable};
use std::cell::{Cell, RefCell};

/// The kinds of lane operation the report counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// vpmadd52luq
    Madd52Lo,
    /// vpmadd52huq
    Madd52Hi,
    /// vpaddq
    Add,
    /// vpsubq
    Sub,
    /// vpandq
    And,
    /// vporq
    Or,
    /// vpsrlq or vpsraq by an immediate (one class in the LLVM models read:
    /// immediate vector shifts)
    Shr,
    /// vpsllq by an immediate
    Shl,
    /// vpcmpuq (or vpcmpeqq) into a mask register
    Compare,
    /// vpblendmq by a mask
    Select,
    /// vmovdqu64 from memory
    Load,
    /// vmovdqu64 to memory
    Store,
    /// vpermt2q (lanes of two vectors by a constant index)
    Permute,
    /// vpbroadcastq of a constant (not timed: see the module comment); last, as
    /// the cost report leaves it out of its totals
    Splat,
}

pub const KINDS: usize = 14;

impl OpKind {
    pub const ALL: [OpKind; KINDS] = [
        OpKind::Madd52Lo,
        OpKind::Madd52Hi,
        OpKind::Add,
        OpKind::Sub,
        OpKind::And,
        OpKind::Or,
        OpKind::Shr,
        OpKind::Shl,
        OpKind::Compare,
        OpKind::Select,
        OpKind::Load,
        OpKind::Store,
        OpKind::Permute,
        OpKind::Splat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Madd52Lo => "madd52lo",
            OpKind::Madd52Hi => "madd52hi",
            OpKind::Add => "add",
            OpKind::Sub => "sub",
            OpKind::And => "and",
            OpKind::Or => "or",
            OpKind::Shr => "shr",
            OpKind::Shl => "shl",
            OpKind::Compare => "cmp",
            OpKind::Select => "select",
            OpKind::Load => "load",
            OpKind::Store => "store",
            OpKind::Splat => "splat",
            OpKind::Permute => "permute",
        }
    }
}

/// The latency models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Zen4,
    Zen5,
    IceLakeServer,
    SapphireRapids,
}

pub const MODELS: usize = 4;

impl Model {
    pub const ALL: [Model; MODELS] =
        [Model::Zen4, Model::Zen5, Model::IceLakeServer, Model::SapphireRapids];

    pub fn name(self) -> &'static str {
        match self {
            Model::Zen4 => "Zen 4",
            Model::Zen5 => "Zen 5",
            Model::IceLakeServer => "Ice Lake SP",
            Model::SapphireRapids => "Sapphire Rapids",
        }
    }

    /// Latency of `kind` on this model, in cycles.
    pub fn latency(self, kind: OpKind) -> u32 {
        LATENCY[self as usize][kind as usize]
    }

    /// Reciprocal throughput of vpmadd52luq/huq zmm (cycles per instruction) as
    /// llvm-mca reports it (`resources-avx512ifma.s`, see `LATENCY`).
    pub fn madd_reciprocal_throughput(self) -> f64 {
        match self {
            Model::Zen4 => 2.0,
            Model::Zen5 => 2.0,
            Model::IceLakeServer => 0.5,
            Model::SapphireRapids => 1.0,
        }
    }
}

/// `LATENCY[model][kind]`, in the order of `Model::ALL` and `OpKind::ALL`. All paths
/// are in llvm/llvm-project under llvm/; "class" is the SchedWrite class that
/// lib/Target/X86/X86InstrAVX512.td gives the instruction (vpcmpuq and vpcmpeqq:
/// SchedWriteVecALU; vpblendmq: SchedWriteVarBlend), "InstRW" an entry of the model
/// that overrides the class for the named instructions. The files as read, by
/// llvm-project commit: X86ScheduleZnver4.td 02d554c5256b, X86ScheduleZnver5.td
/// 21c5e93277a0, X86SchedIceLake.td 05c7a784e3c6, X86SchedSapphireRapids.td
/// 0f792420e664, X86InstrAVX512.td 00f8c4b1b69e; the resources-avx512ifma.s tables:
/// Znver4 13f976cd41b3, Znver5 4df2a6cda3cb, IceLakeServer 45d17e2243e8,
/// SapphireRapids 4e3981daf073.
///
/// * vpmadd52luq/huq zmm, every model: llvm-mca's `-instruction-tables` output
///   checked in as test/tools/llvm-mca/X86/{Znver4,Znver5,IceLakeServer,
///   SapphireRapids}/resources-avx512ifma.s (4, 4, 5, 4 cycles; reciprocal
///   throughput 2.00, 2.00, 0.50, 1.00), matching the models' InstRW entries
///   (Zn4WriteBUSDr_VPMADDr, Zn5WriteBUSDr_VPMADDr, SPRWriteResGroup167).
/// * Zen 4, lib/Target/X86/X86ScheduleZnver4.td: add/sub WriteVecALUZ 1, and/or
///   WriteVecLogicZ 1, shift by immediate InstRW Zn4WriteSHIFTri 1, compare into a
///   mask WriteVecALUZ 1, blend by a mask WriteVarBlendZ 1, load `VecLoadLatency`
///   7 (the model's vector load-to-use figure; its WriteVecLoad entries, in the
///   part not read, characters 32,000 to 48,000 of 92,000, were not checked), store
///   `StoreLatency` 1.
/// * Zen 5, X86ScheduleZnver5.td: add/sub WriteVecALUZ 2, and/or WriteVecLogicZ 2,
///   shift by immediate InstRW Zn5WriteSHIFTri 2, compare WriteVecALUZ 2 (its
///   InstRW entries name only the masked and the narrower forms), blend InstRW
///   Zn5WritePBLENDM 2, load `VecLoadLatency` 7, store `StoreLatency` 1 (as for
///   Zen 4). Parts of this file were not read (about characters 16,000 to 50,000 of
///   103,000): an InstRW entry there could override a class figure.
/// * Ice Lake server, X86SchedIceLake.td: add InstRW ICXWriteResGroup9
///   (VPADD...Zrr) 1, sub WriteVecALUZ 1, and/or WriteVecLogicZ 1, shift by
///   immediate WriteVecShiftImmZ 1, compare InstRW ICXWriteResGroup33
///   (VPCMPU(B|D|Q|W)Z rri, VPCMPEQ...Z rr) 4, blend WriteVarBlendZ 2 (the InstRW
///   that lists VPBLENDMQ names only its 128/256-bit forms), load InstRW
///   ICXWriteResGroup121 (VMOVDQU64Zrm) 8, store WriteVecStore 1. The InstRW
///   entries read are those of the file's first 88,000 of 118,000 characters (its
///   groups run in order of latency, these up to 9).
/// * Sapphire Rapids, X86SchedSapphireRapids.td: add/sub InstRW SPRWriteResGroup61
///   (VP(ADD|SUB)(B|D|Q|W)Zrr, no latency given, so LLVM's default 1), and/or
///   WriteVecLogicZ 1, shift by immediate WriteVecShiftImmZ 1, compare WriteVecALUZ
///   3, blend WriteVarBlendZ 1, load WriteVecLoadY 8, store WriteVecStore 12 (that
///   model's stores are all 12). For the compare, blend, and/or, shift, load and
///   store no InstRW entry naming the 512-bit register form was found in the file
///   (read in 16,000-character pages, all but its first 8,000 characters and 2,000
///   near 198,000; not machine-searched), so the class figures apply; the load and
///   store take the 256-bit classes (WriteVecLoadY, WriteVecStoreY are 8 and 12
///   too).
/// * vpermt2q zmm (`Permute`), every model: `llvm-mca-19 -instruction-tables`
///   (Debian's llvm-19 package) with -mcpu znver4, znver5, icelake-server and
///   sapphirerapids: 5, 5, 3, 3 cycles (reciprocal throughput 1.00 on all four).
const LATENCY: [[u32; KINDS]; MODELS] = [
    // madd lo, hi, add, sub, and, or, shr, shl, cmp, select, load, store, permute, splat
    [4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 5, 0],
    [4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 7, 1, 5, 0],
    [5, 5, 1, 1, 1, 1, 1, 1, 4, 2, 8, 1, 3, 0],
    [4, 4, 1, 1, 1, 1, 1, 1, 3, 1, 8, 12, 3, 0],
];

/// Ready cycles of one value, per model.
type Ready = [u32; MODELS];

/// A lane vector of this layer: a handle to its eight lane values and its ready
/// cycles, which live in a thread-local arena until the next `reset` (`measure`
/// resets before each run, so a value is valid for the run that made it). A handle,
/// not the values themselves: kernels hold arrays of vectors, and with 80-byte
/// vectors rustc took over nine minutes to compile the tests' kernels.
#[derive(Clone, Copy, Debug)]
pub struct Tracked(u32);

struct Entry {
    lanes: [u64; 8],
    ready: Ready,
}

#[derive(Clone, Copy)]
struct State {
    counts: [u64; KINDS],
    critical: Ready,
    mask_ready: Ready,
}

const EMPTY: State = State { counts: [0; KINDS], critical: [0; MODELS], mask_ready: [0; MODELS] };

thread_local! {
    static STATE: Cell<State> = const { Cell::new(EMPTY) };
    static ARENA: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// What one run counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Operations by kind, in the order of `OpKind::ALL`.
    pub counts: [u64; KINDS],
    /// The longest dependency chain, in cycles, per model (order of `Model::ALL`).
    pub critical_path: [u32; MODELS],
}

impl Report {
    pub fn count(&self, kind: OpKind) -> u64 {
        self.counts[kind as usize]
    }

    pub fn critical_path(&self, model: Model) -> u32 {
        self.critical_path[model as usize]
    }

    /// Multiply-adds (lo and hi).
    pub fn madds(&self) -> u64 {
        self.count(OpKind::Madd52Lo) + self.count(OpKind::Madd52Hi)
    }

    /// Cycles the multiply-adds alone need to issue on `model` (count times the
    /// reciprocal throughput): a throughput lower bound next to the latency one.
    pub fn madd_issue_bound(&self, model: Model) -> f64 {
        self.madds() as f64 * model.madd_reciprocal_throughput()
    }
}

/// Clear the counters of this thread.
pub fn reset() {
    STATE.with(|state| state.set(EMPTY));
    ARENA.with(|arena| arena.borrow_mut().clear());
}

/// The counters of this thread since the last `reset`.
pub fn report() -> Report {
    let state = STATE.with(|state| state.get());
    Report { counts: state.counts, critical_path: state.critical }
}

/// Run `kernel` on the counting layer from clear counters: its output and what it
/// counted.
pub fn measure<K: Kernel>(kernel: K) -> (K::Output, Report) {
    reset();
    let output = kernel.run(Counting);
    (output, report())
}

#[inline(never)]
fn record(kind: OpKind, inputs: &[Ready]) -> Ready {
    STATE.with(|cell| {
        let mut state = cell.get();
        state.counts[kind as usize] += 1;
        let mut ready = [0u32; MODELS];
        for model in Model::ALL {
            let index = model as usize;
            let start = inputs.iter().map(|r| r[index]).max().unwrap_or(0);
            let extra = if kind == OpKind::Select { state.mask_ready[index] } else { 0 };
            let done = start.max(extra) + model.latency(kind);
            ready[index] = done;
            state.critical[index] = state.critical[index].max(done);
        }
        if kind == OpKind::Compare {
            state.mask_ready = ready;
        }
        cell.set(state);
        ready
    })
}

/// The counting layer (see the module comment).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counting;

/// Count `kind`, compute its result from the inputs' lanes, and store it with its
/// ready cycles.
fn apply<const N: usize>(
    kind: OpKind,
    inputs: [Tracked; N],
    compute: impl FnOnce([[u64; 8]; N]) -> [u64; 8],
) -> Tracked {
    ARENA.with(|cell| {
        let mut arena = cell.borrow_mut();
        let lanes = inputs.map(|input| arena[input.0 as usize].lanes);
        let ready = record(kind, &inputs.map(|input| arena[input.0 as usize].ready));
        let index = u32::try_from(arena.len()).expect("fewer than 2^32 values in a run");
        arena.push(Entry { lanes: compute(lanes), ready });
        Tracked(index)
    })
}

/// Count `kind` on the inputs (a store, a compare) and give their lanes.
fn observe<const N: usize>(kind: OpKind, inputs: [Tracked; N]) -> [[u64; 8]; N] {
    ARENA.with(|cell| {
        let arena = cell.borrow();
        record(kind, &inputs.map(|input| arena[input.0 as usize].ready));
        inputs.map(|input| arena[input.0 as usize].lanes)
    })
}

/// Every operation is a call (`inline(never)`), and so is each field operation
/// (`INLINE_FIELD_OPS` off, run on this layer: the same operations counted in the
/// same order as inlined): inlined into every kernel, the bookkeeping made the
/// cost-report binary take ten minutes to build; this way, well under one.
impl LaneOps for Counting {
    type V = Tracked;

    const INLINE_FIELD_OPS: bool = false;
    const OUTLINED_LANE_BY_LANE: bool = false;

    #[inline(never)]
    fn splat(self, value: u64) -> Tracked {
        apply(OpKind::Splat, [], |[]| Portable.splat(value))
    }
    #[inline(never)]
    fn load(self, lanes: &[u64; 8]) -> Tracked {
        apply(OpKind::Load, [], |[]| Portable.load(lanes))
    }
    #[inline(never)]
    fn store(self, vector: Tracked) -> [u64; 8] {
        let [lanes] = observe(OpKind::Store, [vector]);
        Portable.store(lanes)
    }
    #[inline(never)]
    fn add(self, a: Tracked, b: Tracked) -> Tracked {
        apply(OpKind::Add, [a, b], |[a, b]| Portable.add(a, b))
    }
    #[inline(never)]
    fn sub(self, a: Tracked, b: Tracked) -> Tracked {
        apply(OpKind::Sub, [a, b], |[a, b]| Portable.sub(a, b))
    }
    #[inline(never)]
    fn and(self, a: Tracked, b: Tracked) -> Tracked {
        apply(OpKind::And, [a, b], |[a, b]| Portable.and(a, b))
    }
    #[inline(never)]
    fn or(self, a: Tracked, b: Tracked) -> Tracked {
        apply(OpKind::Or, [a, b], |[a, b]| Portable.or(a, b))
    }
    #[inline(never)]
    fn madd52lo(self, acc: Tracked, b: Tracked, c: Tracked) -> Tracked {
        apply(OpKind::Madd52Lo, [acc, b, c], |[acc, b, c]| Portable.madd52lo(acc, b, c))
    }
    #[inline(never)]
    fn madd52hi(self, acc: Tracked, b: Tracked, c: Tracked) -> Tracked {
        apply(OpKind::Madd52Hi, [acc, b, c], |[acc, b, c]| Portable.madd52hi(acc, b, c))
    }
    #[inline(never)]
    fn shr<const N: u32>(self, a: Tracked) -> Tracked {
        apply(OpKind::Shr, [a], |[a]| Portable.shr::<N>(a))
    }
    #[inline(never)]
    fn sra<const N: u32>(self, a: Tracked) -> Tracked {
        apply(OpKind::Shr, [a], |[a]| Portable.sra::<N>(a))
    }
    #[inline(never)]
    fn shl<const N: u32>(self, a: Tracked) -> Tracked {
        apply(OpKind::Shl, [a], |[a]| Portable.shl::<N>(a))
    }
    #[inline(never)]
    fn eq_mask(self, a: Tracked, b: Tracked) -> u8 {
        let [a, b] = observe(OpKind::Compare, [a, b]);
        Portable.eq_mask(a, b)
    }
    #[inline(never)]
    fn lt_mask(self, a: Tracked, b: Tracked) -> u8 {
        let [a, b] = observe(OpKind::Compare, [a, b]);
        Portable.lt_mask(a, b)
    }
    #[inline(never)]
    fn select(self, mask: u8, when_clear: Tracked, when_set: Tracked) -> Tracked {
        apply(OpKind::Select, [when_clear, when_set], |[clear, set]| {
            Portable.select(mask, clear, set)
        })
    }
    #[inline(never)]
    fn permute2(self, a: Tracked, b: Tracked, index: [u64; 8]) -> Tracked {
        apply(OpKind::Permute, [a, b], |[a, b]| Portable.permute2(a, b, index))
    }
}
