"""Pallas TPU kernels priced from their own code: the Mosaic module a ``tpu_custom_call`` carries, run over its grid.

A Pallas kernel lowered for TPU is a ``custom-call`` to ``tpu_custom_call`` whose ``backend_config`` holds the kernel
as serialized MLIR (the "Mosaic" module): one function with the grid (``iteration_bounds``), the number of
scalar-prefetch operands (``scalar_prefetch``: small integer tables the kernel reads from scalar memory, e.g.
splash attention's block masks, megablox's group metadata) and the body run once per grid point. XLA's cost
analysis cannot see inside it (it reads a cost estimate the kernel's author may or may not give: splash gives none,
the flash kernel's counts the whole square under a causal mask), so this module prices the kernel by what it runs:

- the body's scalar program (integer arithmetic, comparisons, ``scf.if`` / ``scf.for`` / ``scf.while``, loads from
  the scalar-prefetch tables and stores to scalar scratch) is evaluated at every grid point, in the grid's order,
  with the tables' values taken from the program (the custom call's operands, when they are constants in it);
- every ``tpu.matmul`` the evaluation reaches adds ``2 * prod(result dims) * prod(lhs contracting dims)``, the
  convention of XLA's ``dot``; vector work (exp, max, masks) is not counted, as for XLA's dots.

So a block the kernel skips (its block mask says empty) costs nothing, a block it visits costs its matmuls, and
nothing about the kernel is assumed: block sizes, grid, skipping rule and the matmuls per block are the kernel's own.
A branch on data the program cannot know (a vector value, a table that is runtime data) raises
:class:`NotPriceable` naming it; the caller reports the custom call as not counted.

Needs jaxlib's MLIR bindings with the TPU dialect (``jax._src.lib.tpu``), so it imports jax lazily.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import re


class NotPriceable(ValueError):
    """The kernel's work depends on something the program does not fix (runtime tables, data-dependent branches)."""


@dataclasses.dataclass(frozen=True)
class KernelPrice:
    """What one call of a Pallas TPU kernel computes."""

    name: str                 # the kernel's function name (Pallas: the kernel's name, e.g. splash_mha_fwd_residuals)
    flops: int                # matmul FLOPs of one call: the tpu.matmul ops the grid points reach
    grid: tuple[int, ...]     # iteration bounds
    points_with_matmuls: int  # grid points that ran at least one matmul
    matmuls: tuple[tuple[str, int, int], ...]  # (matmul shape "MxK @ KxN -> MxN", FLOPs each, times run)


# ----------------------------------------------------------------------------------------------------------------------
# The backend_config and the module
# ----------------------------------------------------------------------------------------------------------------------

def body_of(backend_config: str) -> bytes:
    """The serialized Mosaic module of a ``tpu_custom_call``'s backend_config (JSON, as HLO text prints it)."""
    try:
        cfg = json.loads(backend_config)
        if isinstance(cfg, str):
            cfg = json.loads(cfg)
        return base64.b64decode(cfg["custom_call_config"]["body"])
    except (ValueError, KeyError, TypeError) as e:
        raise NotPriceable(f"the tpu_custom_call's backend_config holds no Mosaic body ({e})") from None


@dataclasses.dataclass
class _Op:
    name: str                 # without the "stable_mosaic." prefix: "arith.addi", "scf.if", "tpu.matmul"
    results: tuple            # slot ids
    operands: tuple           # slot ids
    attrs: dict
    regions: tuple            # of _Block (the first block of each region; None for an empty region)
    result_kinds: tuple       # per result: ("int", width) | ("index",) | ("float",) | ("vector", shape) | ("other",)


@dataclasses.dataclass
class _Block:
    args: tuple               # slot ids
    ops: tuple                # of _Op


@dataclasses.dataclass
class Kernel:
    """A Mosaic module reduced to what pricing needs."""

    name: str
    grid: tuple[int, ...]
    scalar_prefetch: int
    arg_kinds: tuple          # per main-function argument: ("int", w) | ("smem", shape) | ("vmem", shape) | ...
    body: _Block
    n_slots: int


_DYNAMIC = -(2 ** 63)


def _cast(cls, x):
    try:
        return cls(x)
    except (ValueError, TypeError):
        return None


def _kind(ir, t) -> tuple:
    if (i := _cast(ir.IntegerType, t)) is not None:
        return ("int", i.width)
    if _cast(ir.IndexType, t) is not None:
        return ("index",)
    if (v := _cast(ir.VectorType, t)) is not None:
        return ("vector", tuple(v.shape))
    if (v := _cast(ir.RankedTensorType, t)) is not None:  # Triton's blocks are tensors
        return ("vector", tuple(v.shape))
    if (m := _cast(ir.MemRefType, t)) is not None:
        space = str(m.memory_space) if m.memory_space is not None else ""
        return ("smem" if "smem" in space else "memref", tuple(m.shape))
    if any(_cast(c, t) is not None for c in (ir.F32Type, ir.BF16Type, ir.F16Type, ir.F64Type)):
        return ("float",)
    return ("other",)


def _attr_value(ir, a):
    """A scalar attribute's Python value (int, float, bool), its text otherwise."""
    for cls in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr):
        x = _cast(cls, a)
        if x is not None:
            return int(x.value) if cls is ir.BoolAttr else x.value
    return str(a)


_WANTED_ATTRS = {"arith.constant": ("value",), "arith.cmpi": ("predicate",), "tpu.matmul": ("dimension_numbers",
                 "transpose_lhs", "transpose_rhs"), "scf.index_switch": ("cases",),
                 "gpu.launch": ("operandSegmentSizes",)}


@functools.lru_cache(maxsize=256)
def _load_cached(digest: str, body: bytes) -> Kernel:
    del digest
    return parse_module(body, _mosaic_kernel)


_MATMULS = ("tpu.matmul", "tt.dot", "gpu.mma", "gpu.mma_desc")  # Mosaic's, Triton's, Mosaic GPU's
_MATMUL_TEXT = re.compile(r"tpu\.matmul|tt\.dot\b|wgmma\.mma_async|tcgen05\.mma|\bmma\.sync")
_PREFIX = re.compile(r"^stable_mosaic(_gpu)?\.")          # the serialized forms' op-name prefixes


def parse_module(body: bytes, build) -> Kernel:
    """A kernel's serialized MLIR module reduced to a :class:`Kernel`: ``build(funcs, block, fresh)`` picks its
    function and grid (``block(b, rewrite=None)`` reads a block into ops over value slots, ``rewrite(op, name,
    slot)`` giving an op's own reading where it is not None; ``fresh()`` makes a slot); the body is then pruned to
    what decides which matmuls run."""
    import sys
    import types

    # A kernel's ops are of dialects no Python package defines ('stable_mosaic', Triton's 'tt'); MLIR's bindings
    # look for one on every op they wrap (six failed imports an op, uncached). Empty modules under the first names
    # they try answer them, while this parse runs.
    added = [n for n in ("jaxlib.mlir.dialects.stable_mosaic", "jaxlib.mlir.dialects.stable_mosaic_gpu",
                         "jaxlib.mlir.dialects.tt") if n not in sys.modules]
    for n in added:
        sys.modules[n] = types.ModuleType(n)
    try:
        return _parse(body, build)
    finally:
        for n in added:
            sys.modules.pop(n, None)


def _parse(body: bytes, build) -> Kernel:
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import tpu
    from jax._src.lib.mlir import ir

    ctx = jmlir.make_ir_context()
    tpu.register_dialect(ctx)
    try:                                                 # Mosaic GPU's types (barriers) in its kernels' memrefs
        from jax._src.lib import mosaic_gpu_dialect
        mosaic_gpu_dialect.register_dialect(ctx)
    except (ImportError, AttributeError):
        pass
    ctx.allow_unregistered_dialects = True
    with ctx:
        module = ir.Module.parse(body)
        funcs = [op.operation for op in module.body.operations]
        slots: dict = {}
        count = [0]

        def fresh() -> int:
            count[0] += 1
            return count[0] - 1

        def slot(v) -> int:
            if v not in slots:
                slots[v] = fresh()
            return slots[v]

        kinds_of: dict = {}

        def kind(t) -> tuple:                            # a type's kind, once per distinct type (MLIR uniques them)
            k = kinds_of.get(t)
            if k is None:
                k = kinds_of[t] = _kind(ir, t)
            return k

        def block(b, rewrite=None) -> _Block:
            args = tuple(slot(a) for a in b.arguments)
            ops = []
            for o in b.operations:
                o = o.operation
                name = _PREFIX.sub("", o.name)
                if rewrite is not None and (new := rewrite(o, name, slot)) is not None:
                    ops.append(new)
                    continue
                attrs = {}
                for key in _WANTED_ATTRS.get(name, ()):
                    if key in o.attributes:
                        attrs[key] = _attr_value(ir, o.attributes[key])
                kinds = tuple(kind(r.type) for r in o.results)
                if name in _MATMULS:
                    attrs["operand_kinds"] = tuple(kind(x.type) for x in o.operands)
                elif name == "arith.cmpi":
                    first = kind(o.operands[0].type)
                    attrs["width"] = first[1] if first[0] == "int" else 64
                elif name in ("arith.extui", "arith.extsi", "arith.trunci"):
                    first = kind(o.operands[0].type)
                    if first[0] == "int":
                        attrs["src"] = first[1]
                if any(len(r.blocks) > 1 for r in o.regions) and _MATMUL_TEXT.search(str(o)):
                    # unstructured control flow (branches between blocks) is not followed: refuse, never miss
                    raise NotPriceable(f"{name}: a region of several blocks holding a matmul (branches between "
                                       "blocks are not followed)")
                regions = tuple(block(r.blocks[0], rewrite) if len(r.blocks) else None for r in o.regions)
                ops.append(_Op(name, tuple(slot(r) for r in o.results), tuple(slot(x) for x in o.operands),
                               attrs, regions, kinds))
            return _Block(args, tuple(ops))

        kernel = build(funcs, block, fresh)
        kernel.body = _prune(kernel.body)
        kernel.n_slots = count[0]
        return kernel


def _mosaic_kernel(funcs, block, fresh) -> Kernel:
    """A Mosaic module's kernel: the function with the grid (``iteration_bounds``), its grid indices and
    scalar-prefetch tables its first arguments."""
    from jax._src.lib.mlir import ir

    main = next((f for f in funcs if "window_params" in f.attributes or "iteration_bounds" in f.attributes),
                funcs[0] if funcs else None)
    if main is None:
        raise NotPriceable("the Mosaic module holds no function")
    # a matmul outside the main function (a helper it calls) would be missed: refuse rather than undercount
    for f in funcs:
        if f is not main and "matmul" in str(f):
            raise NotPriceable(f"a matmul in the Mosaic module's helper function "
                               f"{f.attributes['sym_name']}: calls are not followed")
    body = block(main.regions[0].blocks[0])
    grid = ()
    if "iteration_bounds" in main.attributes:
        bounds = str(main.attributes["iteration_bounds"]).split(":", 1)[1]
        grid = tuple(int(x) for x in re.findall(r"-?\d+", bounds))
    n_prefetch = int(_attr_value(ir, main.attributes["scalar_prefetch"])) if "scalar_prefetch" in \
        main.attributes else 0
    name = _attr_value(ir, main.attributes["sym_name"]) if "sym_name" in main.attributes else "?"
    name = name.strip('"') if isinstance(name, str) else str(name)
    arg_kinds = tuple(_kind(ir, a.type) for a in main.regions[0].blocks[0].arguments)
    return Kernel(name, grid, n_prefetch, arg_kinds, body, 0)


_CONTROL = ("scf.if", "scf.for", "scf.while", "scf.index_switch", "gpu.launch")
_TERMINATORS = ("scf.yield", "scf.condition", "func.return", "tt.return")


def _prune(body: _Block) -> _Block:
    """The body reduced to what decides which matmuls run: the matmuls, scalar-memory stores, the control flow
    around them, and the scalar values those read (vector work, and branches holding no matmul, dropped). So a
    branch on vector data that guards no matmul (a mask's select) is never evaluated."""
    work: dict = {}

    def has_work(op: _Op) -> bool:
        if id(op) not in work:
            work[id(op)] = op.name in _MATMULS or op.name == "memref.store" or any(
                has_work(o) for r in op.regions if r is not None for o in r.ops)
        return work[id(op)]

    def ops(b: _Block):
        for op in b.ops:
            yield op
            for r in op.regions:
                if r is not None:
                    yield from ops(r)

    every = list(ops(body))
    defs, owner = {}, {}                                 # value -> (op, result #); region argument -> (op, arg #)
    for op in every:
        for i, r in enumerate(op.results):
            defs[r] = (op, i)
        for reg in op.regions:
            if reg is not None:
                for i, x in enumerate(reg.args):
                    owner[x] = (op, i)
    needed: set = set()
    stack: list = []
    coarse: set = set()

    def need(*slots) -> None:
        for x in slots:
            if x not in needed:
                needed.add(x)
                stack.append(x)

    def yields(op: _Op, k: int) -> None:                 # result k of op: what each region yields there
        for reg in op.regions:
            if reg is not None and reg.ops and reg.ops[-1].name in _TERMINATORS and k < len(reg.ops[-1].operands):
                need(reg.ops[-1].operands[k])

    def wanted(op: _Op, result=None, arg=None) -> None:
        """op's result ``result`` (or its region's argument ``arg``) is needed: what it is computed from."""
        if op.name == "scf.for":                         # bounds; a carried value: its start and what is yielded
            need(*op.operands[:3])
            k = result if result is not None else (arg - 1 if arg else None)
            if k is not None:
                need(op.operands[3 + k])
                yields(op, k)
        elif op.name in ("scf.if", "scf.index_switch"):
            need(op.operands[0])
            if result is not None:
                yields(op, result)
        elif not any(r is not None for r in op.regions):
            need(*op.operands)
        elif id(op) not in coarse:                       # a while loop, a launch, another op with regions
            coarse.add(id(op))
            need(*op.operands)
            for reg in op.regions:
                if reg is not None and reg.ops and reg.ops[-1].name in _TERMINATORS:
                    need(*reg.ops[-1].operands)

    for op in every:
        if op.name in _CONTROL and has_work(op):
            wanted(op)
        if op.name == "memref.store":
            need(*op.operands)
        need(*op.attrs.get("reads", ()))                 # operands a matmul's price is read from (a descriptor)
        if op.name == "scf.condition":
            need(op.operands[0])
    while stack:                                         # values that needed values are computed from
        x = stack.pop()
        if x in defs:
            wanted(defs[x][0], result=defs[x][1])
        elif x in owner:
            wanted(owner[x][0], arg=owner[x][1])

    def keep(b: _Block | None) -> _Block | None:
        if b is None:
            return None
        kept = []
        for op in b.ops:
            if op.name in _TERMINATORS or op.name in _MATMULS or any(r in needed for r in op.results) \
                    or op.name == "memref.store" or op.name in _CONTROL and has_work(op):
                kept.append(dataclasses.replace(op, regions=tuple(keep(r) for r in op.regions)))
        return _Block(b.args, tuple(kept))

    return keep(body)


def load_kernel(body: bytes) -> Kernel:
    """Parse a serialized Mosaic module (cached by content)."""
    return _load_cached(hashlib.sha1(body).hexdigest(), body)


# ----------------------------------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------------------------------

def _wrap(v: int, width: int, signed: bool = True) -> int:
    if width <= 1:
        return v & 1
    v &= (1 << width) - 1
    return v - (1 << width) if signed and v >= 1 << (width - 1) else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_INT_BINARY = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": _trunc_div, "arith.divui": lambda a, b: a // b, "arith.remsi": lambda a, b: a - b * _trunc_div(a, b),
    "arith.remui": lambda a, b: a % b, "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -(-a // b), "arith.ceildivui": lambda a, b: -(-a // b),
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b, "arith.shrui": lambda a, b: a >> b,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
}
_CMP = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b, 3: lambda a, b: a <= b,
        4: lambda a, b: a > b, 5: lambda a, b: a >= b}
_PASS = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "tpu.assume_multiple",
         "arith.bitcast"}
_NO_VALUE = {"tpu.vector_store", "vector.store", "tpu.sem_signal", "tpu.sem_wait", "tpu.enqueue_dma",
             "tpu.wait_dma", "tpu.wait_dma2", "tpu.trace_start", "tpu.trace_stop"}


def _dims_text(t: str) -> list[list[int]]:
    return [[int(x) for x in re.findall(r"-?\d+", g)] for g in re.findall(r"\[([^\]]*)\]", t)]


def _matmul_flops(op: _Op) -> tuple[str, int]:
    if "flops" in op.attrs:                              # an op read with its own price (a Mosaic GPU MMA)
        return op.attrs["shape"], op.attrs["flops"]
    lhs, rhs = op.attrs["operand_kinds"][0], op.attrs["operand_kinds"][1]
    out = op.result_kinds[0]
    if lhs[0] != "vector" or out[0] != "vector":
        raise NotPriceable(f"tpu.matmul on {lhs} -> {out}: not vectors")
    dn = op.attrs.get("dimension_numbers")
    if isinstance(dn, str) and "dot_dimension_numbers" in dn:
        contracting = _dims_text(dn)[0]
    else:                                                # no dimension numbers: (M, K) @ (K, N), maybe transposed
        contracting = [0 if op.attrs.get("transpose_lhs") else len(lhs[1]) - 1]
    k = math.prod(lhs[1][d] for d in contracting)
    flops = 2 * math.prod(out[1]) * k
    shape = f"{'x'.join(map(str, lhs[1]))} @ {'x'.join(map(str, rhs[1]))} -> {'x'.join(map(str, out[1]))}"
    return shape, flops


class _Run:
    """One pricing: the kernel, its tables, scalar scratch memory and the matmuls reached."""

    def __init__(self, kernel: Kernel, tables: dict[int, tuple[tuple[int, ...], list[int]]], handlers=None):
        self.k = kernel
        self.handlers = handlers or {}        # op name -> handler(run, op, operand values) -> result values
        self.env = [None] * kernel.n_slots
        self.tables = tables                  # slot -> (shape, flat values)
        self.scratch: dict = {}               # (slot, flat index) -> value
        self.hits: dict = {}                  # matmul id -> [shape, flops, times]
        self.point_flops = 0

    def _index(self, shape, idx) -> int:
        flat = 0
        for n, i in zip(shape, idx):
            if i is None:
                return -1
            flat = flat * n + i
        return flat

    def block(self, b: _Block, args) -> list:
        env = self.env
        for s, v in zip(b.args, args):
            env[s] = v
        for op in b.ops:
            name = op.name
            if name in _TERMINATORS:
                return [env[s] for s in op.operands]
            vals = [env[s] for s in op.operands]
            if name == "arith.constant":
                v = op.attrs.get("value")
                env[op.results[0]] = v if isinstance(v, (int, float)) and op.result_kinds[0][0] != "vector" else None
            elif name in _INT_BINARY:
                a, c = vals
                kind = op.result_kinds[0]
                if a is None or c is None or kind[0] not in ("int", "index"):
                    env[op.results[0]] = None
                else:
                    r = _INT_BINARY[name](a, c)
                    env[op.results[0]] = _wrap(r, kind[1]) if kind[0] == "int" else r
            elif name == "arith.cmpi":
                a, c = vals
                pred = op.attrs["predicate"]
                if a is None or c is None:
                    env[op.results[0]] = None
                else:
                    if pred >= 6:                        # unsigned: ult ule ugt uge
                        w = op.attrs["width"]
                        a, c, pred = _wrap(a, w, False), _wrap(c, w, False), pred - 4
                    env[op.results[0]] = int(_CMP[pred](a, c))
            elif name == "arith.select":
                cnd, a, c = vals
                env[op.results[0]] = None if cnd is None else (a if cnd else c)
            elif name in _PASS or name == "arith.trunci":
                v = vals[0]
                if v is not None and "src" in op.attrs:  # integer width changes: sign or zero extension, truncation
                    v = _wrap(v, op.attrs["src"], name != "arith.extui")
                    if name == "arith.trunci":
                        v = _wrap(v, op.result_kinds[0][1])
                env[op.results[0]] = v
            elif name == "memref.load":
                ref, idx = op.operands[0], vals[1:]
                if ref in self.tables:
                    shape, flat = self.tables[ref]
                    i = self._index(shape, idx)
                    env[op.results[0]] = None if i < 0 else flat[i]
                else:
                    env[op.results[0]] = self.scratch.get((ref, tuple(idx)))
            elif name == "memref.store":
                self.scratch[(op.operands[1], tuple(vals[2:]))] = vals[0]
            elif name == "scf.if":
                cnd = vals[0]
                if cnd is None:
                    raise NotPriceable(f"kernel {self.k.name}: a branch on a value the program does not fix "
                                       "(vector data or a runtime table)")
                region = op.regions[0] if cnd else (op.regions[1] if len(op.regions) > 1 else None)
                outs = self.block(region, []) if region is not None else []
                for s, v in zip(op.results, outs):
                    env[s] = v
            elif name == "scf.index_switch":             # regions: the default, then one per case
                i = vals[0]
                if i is None:
                    raise NotPriceable(f"kernel {self.k.name}: a switch on a value the program does not fix")
                cases = [int(x) for x in re.findall(r"-?\d+", str(op.attrs.get("cases", "")).partition(":")[2])]
                region = op.regions[1 + cases.index(i)] if i in cases else op.regions[0]
                outs = self.block(region, []) if region is not None else []
                for s, v in zip(op.results, outs):
                    env[s] = v
            elif name == "scf.for":
                lb, ub, step, *carry = vals
                if lb is None or ub is None or step is None:
                    raise NotPriceable(f"kernel {self.k.name}: a loop whose bounds the program does not fix")
                for i in range(lb, ub, step):
                    carry = self.block(op.regions[0], [i] + carry)
                for s, v in zip(op.results, carry):
                    env[s] = v
            elif name == "scf.while":
                carry = vals
                for _ in range(1 << 24):
                    cond = self.block(op.regions[0], carry)
                    if cond[0] is None:
                        raise NotPriceable(f"kernel {self.k.name}: a while loop on a value the program does not fix")
                    if not cond[0]:
                        carry = cond[1:]
                        break
                    carry = self.block(op.regions[1], cond[1:])
                for s, v in zip(op.results, carry):
                    env[s] = v
            elif name in self.handlers:
                for s, v in zip(op.results, self.handlers[name](self, op, vals)):
                    env[s] = v
            elif name in _MATMULS:
                key = id(op)
                if key not in self.hits:
                    self.hits[key] = [*_matmul_flops(op), 0]
                self.hits[key][2] += 1
                self.point_flops += self.hits[key][1]
                env[op.results[0]] = None
            elif "matmul" in name or "contract" in name or name.endswith(".dot"):
                raise NotPriceable(f"kernel {self.k.name}: {name} is a matmul this pricer does not know")
            elif name.startswith("func.call"):
                raise NotPriceable(f"kernel {self.k.name}: calls are not followed")
            else:
                for s in op.results:
                    env[s] = None
                for r in op.regions:                     # regions of other ops (tpu.region, traces): run once
                    if r is not None:
                        self.block(r, [None] * len(r.args))
        return []


def price(kernel: Kernel, tables: list, dynamic_sizes=()) -> KernelPrice:
    """Price one call: ``tables`` are the scalar-prefetch operands' values, flat in row-major order (``None`` for a
    table the program does not fix: fine while no branch reads it); ``dynamic_sizes`` the values of the grid's
    dimensions sized at run time, in order (``None``: not fixed by the program)."""
    sizes = iter(dynamic_sizes)
    grid = tuple(n if n >= 0 else next(sizes, None) for n in kernel.grid)
    if any(n is None for n in grid):
        raise NotPriceable(f"kernel {kernel.name}: a grid sized at run time by a value the program does not fix "
                           f"({kernel.grid})")
    kernel = dataclasses.replace(kernel, grid=grid)
    ndim = len(kernel.grid)
    args = kernel.body.args
    table_slots = {}
    for t in range(kernel.scalar_prefetch):
        kind = kernel.arg_kinds[ndim + t]
        values = tables[t] if t < len(tables) else None
        if values is not None:
            if len(values) != math.prod(kind[1]):
                raise NotPriceable(f"kernel {kernel.name}: scalar-prefetch operand {t} has {len(values)} values for "
                                   f"a table of shape {kind[1]}")
            table_slots[args[ndim + t]] = (kind[1], list(values))
    run = _Run(kernel, table_slots)
    rest = [None] * (len(args) - ndim)
    points = 0
    for point in itertools.product(*(range(n) for n in kernel.grid)):
        run.point_flops = 0
        run.block(kernel.body, list(point) + rest)
        points += run.point_flops > 0
    flops = sum(f * n for _, f, n in run.hits.values())
    matmuls = tuple((s, f, n) for s, f, n in run.hits.values())
    return KernelPrice(kernel.name, flops, kernel.grid, points, matmuls)
