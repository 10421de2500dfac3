"""Custom calls priced: which HLO custom-call targets compute, and what one call of each costs.

The program counter (:mod:`maxflops.xla.program`) asks :func:`price_custom_call` for every ``custom-call`` it meets:

- ``tpu_custom_call`` (every Pallas TPU kernel: splash attention, the flash kernel, megablox ``gmm`` / ``tgmm``,
  tokamax's mosaic_tpu kernels, a user's own): the kernel's Mosaic module run over its grid with its scalar-prefetch
  tables read from the program (:mod:`maxflops.xla.mosaic`), so what it skips costs nothing;
- ``__gpu$xla.gpu.triton`` (every Pallas GPU kernel lowered with Triton: jax's GPU flash attention, tokamax's
  triton kernels, a user's own): the Triton module run over its launch grid (:mod:`maxflops.xla.triton`);
- cuDNN's fused attention (``__cudnn$fmha*``): from its backend config, the tiles its mask leaves
  (:mod:`maxflops.xla.cudnn`; the tile is assumed, said in the note);
- targets that do no arithmetic (sharding annotations, host offload, layout and dynamic-shape markers): nothing;
- anything else: **not counted**, named in the result with the reason, never a silent 0.

Library matmuls (cuBLAS gemm, cuDNN convolutions) are counted by the HLO counter itself from their dimension numbers.
"""

from __future__ import annotations

import dataclasses
import re

from .hlo_parse import Computation, Instruction, Module, operand_shape

# Targets that move, mark or reshape data and compute nothing a FLOP count holds.
NO_COMPUTE = frozenset("""
    Sharding SPMDFullToShardShape SPMDShardToFullShape MoveToHost MoveToDevice annotate_device_placement
    LayoutConstraint PadToStatic SliceToDynamic AllocateBuffer X64Combine X64SplitLow X64SplitHigh
    xla.sdy.GlobalToLocalShape xla.sdy.LocalToGlobalShape xla.sdy.FuncResultSharding Pin Unpin
    mhlo.sharding InspectSharding
""".split())

# Host callbacks run Python on the host: their work is not the accelerator's.
HOST_CALLBACKS = re.compile(r"python.*callback|callback.*python", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Priced:
    """The answer for one custom call: ``flops`` of one execution (0 with ``counted`` False: not counted)."""

    flops: int
    counted: bool
    note: str              # the kernel's name and how it was priced, or why it is not counted


def target_of(ins: Instruction) -> str:
    return ins.attrs.get("custom_call_target", "").strip('"')


@dataclasses.dataclass(frozen=True)
class RunTimeInputs:
    """What a kernel reads that the step computes at run time, given or assumed by the user of the counter.

    group_sizes: megablox's rows per group (the tokens routed to each expert): a list of ints, one per group, for
    every grouped matmul of the program, or ``"balanced"`` (the default: each call's rows split evenly over its
    groups), or None (such calls not counted).

    splash_mask: the mask a dynamic-mask splash call (tokamax's, over DSA's top-k mask) runs over: ``"causal"`` (the
    default: every tile a causal mask makes visible taken as active), the step's own [q, kv] boolean mask, or None
    (such calls not counted). See :mod:`maxflops.xla.splash_dynamic`.

    segment_ids: the segment ids (packed documents) a kernel whose tables the program prunes by them reads (tokamax's
    splash over a static mask, segmented): ``"one_document"`` (the default: every row one document, so no tile is
    pruned: an upper bound on a packed batch's), the batch's own ids (an int array of the program input's shape, or
    one row of it, used for every row), or None (such calls not counted). The program's own ops then build the
    tables (:mod:`maxflops.xla.fold`)."""

    group_sizes: object = "balanced"
    splash_mask: object = "causal"
    segment_ids: object = "one_document"

    def __post_init__(self):
        seg = self.segment_ids
        if isinstance(seg, str) and seg != "one_document" or not (seg is None or isinstance(seg, str)
                                                                   or hasattr(seg, "__len__")):
            raise ValueError(f"segment_ids: expected 'one_document', None or the batch's segment ids (an int array), "
                             f"got {seg!r}")
        m = self.splash_mask
        if isinstance(m, str) and m != "causal" or not (m is None or isinstance(m, str) or hasattr(m, "__len__")):
            raise ValueError(f"splash_mask: expected 'causal', None or a [q, kv] boolean mask, got {m!r}")
        g = self.group_sizes
        if g is None or g == "balanced":
            return
        if isinstance(g, str) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in g):
            raise ValueError(f"group_sizes: expected 'balanced', None or a list of non-negative ints, got {g!r}")
        object.__setattr__(self, "group_sizes", tuple(g))


def price_custom_call(module: Module, comp: Computation, ins: Instruction,
                      inputs: RunTimeInputs | None = None) -> Priced | None:
    """Price one custom call that is not a library matmul; None for targets that compute nothing."""
    target = target_of(ins)
    if target in NO_COMPUTE or HOST_CALLBACKS.search(target):
        return None
    if target == "tpu_custom_call":
        return _price_mosaic(module, comp, ins, inputs or RunTimeInputs())
    if target.startswith("__cudnn$fmha"):
        return _price_cudnn(comp, ins, target)
    if target == "__gpu$xla.gpu.triton":
        return _price_triton(ins)
    if target == "mosaic_gpu_v2":
        return _price_mosaic_gpu(ins)
    return Priced(0, False, f"custom call {target!r}: no price known for this target")


def _price_mosaic(module: Module, comp: Computation, ins: Instruction, inputs: RunTimeInputs) -> Priced:
    from . import mosaic

    said = ""
    try:
        kernel = mosaic.load_kernel(mosaic.body_of(ins.attrs.get("backend_config", "")))
        # a grid sized at run time takes its sizes from the call's first operands, then come the prefetch tables
        dynamic = sum(n < 0 for n in kernel.grid)
        sizes = [constant_values(module, comp, ins.operands[t]) for t in range(dynamic)]
        tables = [constant_values(module, comp, ins.operands[dynamic + t]) for t in range(kernel.scalar_prefetch)]
        sizes = [s[0] if s is not None and len(s) == 1 else None for s in sizes]
        if dynamic == 1 and sizes[0] is None:
            sizes, tables, said = _megablox_tables(comp, ins, kernel, tables, inputs)
        if dynamic == 1 and sizes[0] is None:
            sizes, tables, said = _splash_tables(module, comp, ins, kernel, tables, inputs)
        p = mosaic.price(kernel, tables, sizes)
    except mosaic.NotPriceable as e:
        return Priced(0, False, f"Pallas TPU kernel: {e}")
    dims = "x".join(map(str, p.grid)) or "1"
    total = 1
    for n in p.grid:
        total *= n
    return Priced(p.flops, True, f"Pallas TPU kernel {p.name}: grid {dims}, matmuls at {p.points_with_matmuls} of "
                                 f"its {total} grid points{said}")


def _price_triton(ins: Instruction) -> Priced:
    from . import mosaic, triton

    try:
        p = triton.price_call(ins.attrs.get("backend_config", ""))
    except mosaic.NotPriceable as e:
        return Priced(0, False, f"Pallas GPU (Triton) kernel: {e}")
    total = p.grid[0] * p.grid[1] * p.grid[2]
    return Priced(p.flops, True, f"Pallas GPU (Triton) kernel {p.name}: grid {'x'.join(map(str, p.grid))}, matmuls "
                                 f"at {p.points_with_matmuls} of its {total} program ids")


def _price_mosaic_gpu(ins: Instruction) -> Priced:
    from . import mosaic, mosaic_gpu

    try:
        p, launches = mosaic_gpu.price_call(ins.attrs.get("backend_config", ""))
    except mosaic.NotPriceable as e:
        return Priced(0, False, f"Pallas Mosaic GPU kernel: {e}")
    grid, threads, _ = launches[-1]
    total = grid[0] * grid[1] * grid[2]
    return Priced(p.flops, True, f"Pallas Mosaic GPU kernel {p.name}: grid {'x'.join(map(str, grid))} of "
                                 f"{threads[0] // 128} warpgroups, MMAs in {p.points_with_matmuls} of its {total} "
                                 "blocks")


def _price_cudnn(comp: Computation, ins: Instruction, target: str) -> Priced:
    from . import cudnn

    cfg = cudnn.config_of(ins.attrs.get("backend_config", ""))
    if cfg is None or len(ins.operands) < 3:
        return Priced(0, False, f"custom call {target!r}: no cudnn_fmha_backend_config to price it from")
    try:
        flops, note = cudnn.price(target, cfg, [operand_shape(comp, ins, i).dims for i in range(3)])
    except (KeyError, ValueError, TypeError) as e:
        return Priced(0, False, f"custom call {target!r}: its cudnn_fmha_backend_config lacks {e}")
    return Priced(flops, True, note)


def _megablox_tables(comp: Computation, ins: Instruction, kernel, tables, inputs: RunTimeInputs):
    """A megablox grouped matmul's grid size and tables from the group sizes given or assumed (see
    :mod:`maxflops.xla.megablox`); the kernel left unpriced when the call is not laid out as one."""
    from . import megablox, mosaic

    ndim = len(kernel.grid)
    shapes = [kernel.arg_kinds[ndim + t][1] for t in range(kernel.scalar_prefetch)]
    first_data = 1 + kernel.scalar_prefetch
    data = [operand_shape(comp, ins, i).dims for i in range(first_data, len(ins.operands))]
    out = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
    lay = megablox.layout(shapes, out.dims, data)
    if lay is None:
        return [None], tables, ""                        # not megablox: priced as any kernel (sized at run time)
    if inputs.group_sizes is None:
        raise mosaic.NotPriceable(f"kernel {kernel.name}: megablox {lay.kind}'s tiles come from the group sizes "
                                  "the step computes at run time (group_sizes=None: not assumed)")
    start = tables[3][0] if tables[3] is not None else 0
    if inputs.group_sizes == "balanced":
        sizes = [0] * lay.groups
        sizes[start:start + lay.local_groups] = megablox.balanced(lay.m, lay.local_groups)
        how = f"group sizes assumed balanced ({lay.m:,} rows over {lay.local_groups} groups)"
    else:
        sizes = list(inputs.group_sizes)
        if len(sizes) != lay.groups:
            raise mosaic.NotPriceable(f"kernel {kernel.name}: megablox {lay.kind} has {lay.groups} groups; the "
                                      f"group_sizes given have {len(sizes)}")
        how = f"group sizes given ({sum(sizes):,} rows)"
    try:
        offsets, group_ids, m_tile_ids, n = megablox.group_metadata(sizes, lay.m, lay.tm, start, lay.local_groups,
                                                                    lay.visit_empty_groups)
    except ValueError as e:
        raise mosaic.NotPriceable(f"kernel {kernel.name}: megablox {lay.kind}: {e}") from None
    lo, hi = megablox.tile_range(lay)
    said = (f"; megablox {lay.kind}, {how}: {n} row-tile steps of {lay.tm} rows, where a routing with every local "
            f"group non-empty gives {lo} to {hi}" + ("" if tables[3] is not None else
                                                     "; first local group taken as 0 (not fixed by the program)"))
    return [n], [offsets, group_ids, m_tile_ids, [start]], said


def _splash_tables(module: Module, comp: Computation, ins: Instruction, kernel, tables, inputs: RunTimeInputs):
    """A dynamic-mask splash call's grid size and tables from the tile occupancy given or assumed (see
    :mod:`maxflops.xla.splash_dynamic`); the kernel left unpriced when the call is not laid out as one."""
    from . import mosaic, splash_dynamic

    ndim = len(kernel.grid)
    shapes = [kernel.arg_kinds[ndim + t][1] for t in range(kernel.scalar_prefetch)]
    first_data = 1 + kernel.scalar_prefetch
    data = [(operand_shape(comp, ins, i).dims, operand_shape(comp, ins, i).dtype)
            for i in range(first_data, len(ins.operands))]
    lay = splash_dynamic.layout(kernel.name, shapes, data)
    if lay is None and kernel.name.startswith("splash_") and "segmented" in kernel.name:
        return _segmented_tables(module, ins, kernel, data, inputs)
    if lay is None:
        return [None], tables, ""
    if inputs.splash_mask is None:
        raise mosaic.NotPriceable(f"kernel {kernel.name}: a dynamic-mask splash's tiles come from the mask the step "
                                  "computes at run time (splash_mask=None: not assumed)")
    given = not isinstance(inputs.splash_mask, str)
    try:
        occupancy = splash_dynamic.occupancy(inputs.splash_mask, lay) if given else splash_dynamic.causal(lay)
        n, built = splash_dynamic.tables(occupancy, lay)
    except ValueError as e:
        raise mosaic.NotPriceable(f"kernel {kernel.name}: splash_mask: {e}") from None
    full = lay.q_tiles * lay.kv_tiles
    said = (f"; dynamic mask over {lay.q_tiles}x{lay.kv_tiles} tiles of {lay.block_q}x{lay.block_kv}, "
            + ("the tiles the mask given holds" if given else "every causally visible tile assumed active (an upper "
               "bound on a top-k mask's)") + f": {n} of {full} grid steps")
    if "segmented" in kernel.name:  # tokamax prunes the tiles whose q and kv segment ranges are disjoint, at run time
        said += ("; its segment ids taken as one document per row (tokamax also skips the tiles two packed documents "
                 "never share: fewer with packing" + ("" if isinstance(inputs.segment_ids, str) or
                                                      inputs.segment_ids is None else
                                                      "; the segment_ids given apply to static-mask calls only: "
                                                      "fold the documents into splash_mask") + ")")
    return [n], built, said


def _segmented_tables(module: Module, ins: Instruction, kernel, data, inputs: RunTimeInputs):
    """A splash call whose tables the program prunes by the batch's segment ids (tokamax's static-mask splash,
    segmented): its grid size and tables run by the program's own ops (:mod:`maxflops.xla.fold`) with the segment ids
    stated. The segment ids are the program inputs the kernel's integer data operands (its q and kv ids; the int8
    partial-mask blocks aside) are read from."""
    import numpy as np

    from . import fold, mosaic

    name = kernel.name
    mlir, op = getattr(module, "mlir", None), getattr(ins, "src", None)
    if mlir is None or op is None:
        raise mosaic.NotPriceable(f"kernel {name}: tokamax's splash prunes its mask's tiles by the batch's segment ids "
                                  "in the program; its tables are run from the program's StableHLO, and this program "
                                  "was read from HLO text (count the Lowered or the Exported instead)")
    if inputs.segment_ids is None:
        raise mosaic.NotPriceable(f"kernel {name}: its tiles are pruned by the batch's segment ids, which the step "
                                  "reads at run time (segment_ids=None: not assumed)")
    first_data = 1 + kernel.scalar_prefetch
    ids = [first_data + i for i, (_, dtype) in enumerate(data) if dtype in ("s32", "u32")]
    with mlir.context:
        sources = fold.sources(mlir, op, ids)
    if not sources:
        raise mosaic.NotPriceable(f"kernel {name}: its segment ids are not read from the program's inputs")
    given = inputs.segment_ids

    def value(index, shape):
        if index not in sources:
            return None
        if isinstance(given, str):
            return np.ones(shape.dims, np.int32)
        arr = np.asarray(given)
        if arr.dtype.kind not in "iu":
            raise fold.NotFixed(f"segment_ids: expected integers, got {arr.dtype}")
        if tuple(arr.shape) == shape.dims:
            return arr
        if len(shape.dims) >= 1 and arr.ndim == 1 and arr.shape[0] == shape.dims[-1]:
            return np.broadcast_to(arr, shape.dims)
        raise fold.NotFixed(f"segment_ids: the program reads them as {shape.dtype}[{','.join(map(str, shape.dims))}]; "
                            f"the ids given have shape {list(arr.shape)}")

    try:
        with mlir.context:
            got = fold.evaluate(mlir, op, list(range(first_data)), value, NO_COMPUTE)
    except fold.NotFixed as e:
        raise mosaic.NotPriceable(f"kernel {name}: its tables, pruned in the program by the segment ids, cannot be "
                                  f"run: {e}") from None
    sizes = [int(got[0].ravel()[0])]
    tables = [[int(x) for x in t.ravel()] for t in got[1:]]
    said = ("; its tables run by the program's own ops from the segment ids "
            + ("taken as one document per row (tokamax also skips the tiles two packed documents never share: "
               "fewer with packing)" if isinstance(given, str) else "given"))
    return sizes, tables, said


# ----------------------------------------------------------------------------------------------------------------------
# Values the program fixes: constants, through reshapes, calls and loop-invariant loop state
# ----------------------------------------------------------------------------------------------------------------------

_PASS = {"copy", "bitcast", "reshape", "convert", "copy-done", "bitcast-convert", "optimization-barrier"}


def _literal(ins: Instruction) -> list[int] | None:
    text = ins.raw_args.strip()
    if re.search(r"\d[eE.]|nan|inf", text):
        return None
    vals = re.findall(r"-?\d+|true|false", text)
    return [1 if v == "true" else 0 if v == "false" else int(v) for v in vals]


def constant_values(module: Module, comp: Computation, name: str, depth: int = 0) -> list[int] | None:
    """The integer values (row-major) of operand ``name`` of ``comp`` when the program fixes them, else None."""
    if depth > 64:
        return None
    ins = comp.by_name.get(name)
    if ins is None:
        return None
    op = ins.opcode
    if op == "constant":
        vals = _literal(ins)
        n = _elements(ins)
        return vals if vals is not None and len(vals) == n else None
    if (op in _PASS or op == "custom-call" and target_of(ins) in NO_COMPUTE) and ins.operands:
        return constant_values(module, comp, ins.operands[0], depth + 1)   # (a sharding annotation included)
    if op in ("call", "fusion"):
        callee = _callee(module, ins)
        return None if callee is None else constant_values(module, callee, callee.root.name, depth + 1)
    if op == "manual-shard":                             # a shard_map argument: each device's own piece
        return _same_shard(module, comp, ins, depth)
    if op == "broadcast" and ins.operands:
        src = constant_values(module, comp, ins.operands[0], depth + 1)
        return src * _elements(ins) if src is not None and len(src) == 1 else None
    if op == "parameter":
        return _from_callers(module, comp, int(ins.raw_args.strip()), None, depth)
    if op == "get-tuple-element":
        base = comp.by_name.get(ins.operands[0])
        idx = int(ins.attrs["index"])
        if base is not None and base.opcode == "parameter":
            return _from_callers(module, comp, int(base.raw_args.strip()), idx, depth)
        if base is not None and base.opcode == "tuple":
            return constant_values(module, comp, base.operands[idx], depth + 1)
        if base is not None and base.opcode in ("call", "fusion"):          # a value a nested jit returns
            callee = _callee(module, base)
            root = callee.root if callee is not None else None
            if root is not None and root.opcode == "tuple":
                return constant_values(module, callee, root.operands[idx], depth + 1)
    return None


def _same_shard(module: Module, comp: Computation, ins: Instruction, depth: int) -> list[int] | None:
    """The values of a device's shard of a constant split along dims (``splits``: "dim:pieces,..."), when every
    device's shard holds the same values (so every device runs the kernel over the same tables); None where the
    constant is not fixed; shards that differ are refused (``NotPriceable``, said in the kernel's note)."""
    import numpy as np

    whole = constant_values(module, comp, ins.operands[0], depth + 1)
    src = comp.by_name.get(ins.operands[0])
    if whole is None or src is None:
        return None
    shards = [np.array(whole).reshape(src.shape.dims)]
    for part in ins.attrs["splits"].split(","):
        dim, pieces = (int(x) for x in part.split(":"))
        if src.shape.dims[dim] % pieces:
            return None
        shards = [piece for s in shards for piece in np.split(s, pieces, axis=dim)]
    if any(not np.array_equal(s, shards[0]) for s in shards[1:]):
        from .mosaic import NotPriceable

        raise NotPriceable(f"a table differs between the {len(shards)} devices of its shard_map "
                           "(each runs the kernel over its own shard: pricing each device apart is not built)")
    return shards[0].ravel().tolist()


def _callee(module: Module, ins: Instruction) -> Computation | None:
    ref = (ins.attrs.get("to_apply") or ins.attrs.get("calls") or "").strip("{} ").split(",")[0].strip().lstrip("%")
    return module.computations.get(ref)


def _elements(ins: Instruction) -> int:
    n = 1
    for d in ins.shape.dims:
        n *= d
    return n


def _from_callers(module: Module, comp: Computation, param: int, tuple_index: int | None, depth: int):
    """A parameter's value from every call site of ``comp``; None unless all agree. A while body's state element is
    followed to the loop's init only when the body passes it through unchanged."""
    found = []
    for caller in module.computations.values():
        for ins in caller.instructions:
            refs = []
            for key in ("calls", "to_apply", "body"):
                if key in ins.attrs:
                    refs += [r.strip().lstrip("%") for r in ins.attrs[key].strip("{} ").split(",")]
            if comp.name not in refs:
                continue
            if ins.opcode == "while":
                if tuple_index is None or not _passes_through(comp, tuple_index):
                    return None
                init = caller.by_name.get(ins.operands[0])
                if init is None or init.opcode != "tuple":
                    return None
                found.append(constant_values(module, caller, init.operands[tuple_index], depth + 1))
            else:
                if param >= len(ins.operands):
                    return None
                if tuple_index is None:
                    found.append(constant_values(module, caller, ins.operands[param], depth + 1))
                else:
                    arg = caller.by_name.get(ins.operands[param])
                    if arg is None or arg.opcode != "tuple":
                        return None
                    found.append(constant_values(module, caller, arg.operands[tuple_index], depth + 1))
    if not found or any(v is None or v != found[0] for v in found):
        return None
    return found[0]


def _passes_through(body: Computation, index: int) -> bool:
    root = body.root
    if root.opcode != "tuple" or index >= len(root.operands):
        return False
    out = body.by_name.get(root.operands[index])
    if out is None or out.opcode != "get-tuple-element" or int(out.attrs["index"]) != index:
        return False
    src = body.by_name.get(out.operands[0])
    return src is not None and src.opcode == "parameter"
