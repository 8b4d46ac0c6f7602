//! The counting lane layer: the third implementation of the lane operations, for the
//! tests and the cost report only (`examples/cost_report.rs`); no dispatch path runs
//! it. Each vector carries its eight real lane values, computed by the portable
//! layer's code, so a kernel run on it gives the portable layer's results, and, per
//! latency model, the cycle at which the value would be ready. Every operation counts
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
//! Latencies (cycles, 512-bit register forms), from LLVM's scheduling models as
//! llvm-mca reports them; the files read are those in llvm/llvm-project's main
//! branch as stored by the code search used for this work (late 2025; LLVM 21/22
//! development), cited per figure in `LATENCY` below.

use super::{Kernel, LaneOps, Portable};
use std::cell::Cell;

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
    /// vpsrlq by an immediate
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
    /// vpbroadcastq of a constant (not timed: see the module comment)
    Splat,
}

pub const KINDS: usize = 13;

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

/// `LATENCY[model][kind]`, in the order of `Model::ALL` and `OpKind::ALL`.
///
/// Sources (llvm/llvm-project, paths under llvm/):
/// * madd52lo/hi: the `-instruction-tables` output of llvm-mca checked in as
///   test/tools/llvm-mca/X86/{Znver4,Znver5,IceLakeServer,SapphireRapids}/
///   resources-avx512ifma.s, `vpmadd52luq %zmm16, %zmm17, %zmm19`: latency 4, 4, 5,
///   4 (reciprocal throughput 2.00, 2.00, 0.50, 1.00).
/// * Zen 4, everything else: lib/Target/X86/X86ScheduleZnver4.td. vpaddq/vpsubq:
///   WriteVecALUZ, 1; vpandq/vporq: WriteVecLogicZ, 1; vpsrlq/vpsllq imm: the
///   InstRW `Zn4WriteSHIFTri` (VP(SLL|SRL|SRA)(D|Q|W)Z ri), 1; vpcmpuq/vpcmpeqq: the
///   class X86InstrAVX512.td gives them, SchedWriteVecALU, so WriteVecALUZ, 1;
///   vpblendmq: SchedWriteVarBlend (X86InstrAVX512.td), WriteVarBlendZ, 1; load:
///   `VecLoadLatency = 7`; store: `StoreLatency = 1`.
/// * Zen 5: LLVM's Znver5 model gives vpmadd52 the same latency as Znver4's (above);
///   for the other operations this layer uses Zen 4's figures (not checked against
///   X86ScheduleZnver5.td, except the load: its IFMA load form is 9 cycles in
///   resources-avx512ifma.s, 4 + 5, so load = 5 here).
/// * Ice Lake SP and Sapphire Rapids, other than IFMA: see the comment at
///   `INTEL_OTHERS`.
const LATENCY: [[u32; KINDS]; MODELS] = [
    // madd lo, hi, add, sub, and, or, shr, shl, cmp, select, load, store, splat
    [4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 0],
    [4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 5, 1, 0],
    [5, 5, INTEL_OTHERS[0], INTEL_OTHERS[0], INTEL_OTHERS[1], INTEL_OTHERS[1], INTEL_OTHERS[2],
        INTEL_OTHERS[2], INTEL_OTHERS[3], INTEL_OTHERS[4], INTEL_OTHERS[5], INTEL_OTHERS[6], 0],
    [4, 4, INTEL_OTHERS[0], INTEL_OTHERS[0], INTEL_OTHERS[1], INTEL_OTHERS[1], INTEL_OTHERS[2],
        INTEL_OTHERS[2], INTEL_OTHERS[3], INTEL_OTHERS[4], INTEL_OTHERS[5], INTEL_OTHERS[6], 0],
];

/// Ice Lake SP and Sapphire Rapids, operations other than IFMA: add/sub, and/or,
/// shift imm, compare into a mask, blend by a mask, load, store.
/// PLACEHOLDER: filled in below from the LLVM models once read.
const INTEL_OTHERS: [u32; 7] = [1, 1, 1, 3, 1, 7, 1];

/// Ready cycles of one value, per model.
type Ready = [u32; MODELS];

/// Eight lanes and, per model, the cycle at which they are ready.
#[derive(Clone, Copy, Debug)]
pub struct Tracked {
    pub lanes: [u64; 8],
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
}

/// What one run counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl Counting {
    fn tracked(lanes: [u64; 8], kind: OpKind, inputs: &[Ready]) -> Tracked {
        Tracked { lanes, ready: record(kind, inputs) }
    }
}

impl LaneOps for Counting {
    type V = Tracked;

    fn splat(self, value: u64) -> Tracked {
        Counting::tracked(Portable.splat(value), OpKind::Splat, &[])
    }
    fn load(self, lanes: &[u64; 8]) -> Tracked {
        Counting::tracked(Portable.load(lanes), OpKind::Load, &[])
    }
    fn store(self, vector: Tracked) -> [u64; 8] {
        record(OpKind::Store, &[vector.ready]);
        Portable.store(vector.lanes)
    }
    fn add(self, a: Tracked, b: Tracked) -> Tracked {
        Counting::tracked(Portable.add(a.lanes, b.lanes), OpKind::Add, &[a.ready, b.ready])
    }
    fn sub(self, a: Tracked, b: Tracked) -> Tracked {
        Counting::tracked(Portable.sub(a.lanes, b.lanes), OpKind::Sub, &[a.ready, b.ready])
    }
    fn and(self, a: Tracked, b: Tracked) -> Tracked {
        Counting::tracked(Portable.and(a.lanes, b.lanes), OpKind::And, &[a.ready, b.ready])
    }
    fn or(self, a: Tracked, b: Tracked) -> Tracked {
        Counting::tracked(Portable.or(a.lanes, b.lanes), OpKind::Or, &[a.ready, b.ready])
    }
    fn madd52lo(self, acc: Tracked, b: Tracked, c: Tracked) -> Tracked {
        let lanes = Portable.madd52lo(acc.lanes, b.lanes, c.lanes);
        Counting::tracked(lanes, OpKind::Madd52Lo, &[acc.ready, b.ready, c.ready])
    }
    fn madd52hi(self, acc: Tracked, b: Tracked, c: Tracked) -> Tracked {
        let lanes = Portable.madd52hi(acc.lanes, b.lanes, c.lanes);
        Counting::tracked(lanes, OpKind::Madd52Hi, &[acc.ready, b.ready, c.ready])
    }
    fn shr<const N: u32>(self, a: Tracked) -> Tracked {
        Counting::tracked(Portable.shr::<N>(a.lanes), OpKind::Shr, &[a.ready])
    }
    fn shl<const N: u32>(self, a: Tracked) -> Tracked {
        Counting::tracked(Portable.shl::<N>(a.lanes), OpKind::Shl, &[a.ready])
    }
    fn eq_mask(self, a: Tracked, b: Tracked) -> u8 {
        record(OpKind::Compare, &[a.ready, b.ready]);
        Portable.eq_mask(a.lanes, b.lanes)
    }
    fn lt_mask(self, a: Tracked, b: Tracked) -> u8 {
        record(OpKind::Compare, &[a.ready, b.ready]);
        Portable.lt_mask(a.lanes, b.lanes)
    }
    fn select(self, mask: u8, when_clear: Tracked, when_set: Tracked) -> Tracked {
        let lanes = Portable.select(mask, when_clear.lanes, when_set.lanes);
        Counting::tracked(lanes, OpKind::Select, &[when_clear.ready, when_set.ready])
    }
}
