"""Values a program computes before a kernel runs (a kernel's block tables, its run-time grid), run by XLA's own
StableHLO reference interpreter over the ops they depend on, with the program's inputs they read stated.

Some kernels take tables the program builds at run time from its inputs: tokamax's splash over a static mask (what
MaxText runs with ``use_tokamax_splash``) drops, in the program, the mask's tiles whose queries' and keys' segment
ids (packed documents) never meet, then sorts the tiles that remain into its schedule. Those tables are neither
constants nor a formula worth copying: this module cuts, from the StableHLO module, the ops the kernel's operands
depend on, puts a stated value in place of each program input they read, and runs the cut with
``jax._src.lib.mlir.dialects.hlo.eval_module`` (jaxlib's interpreter of StableHLO's specification): the program's own
arithmetic, whichever kernel and whichever version built it.

The cut follows a value

- through the ops of its function (with their regions: a sort's comparator, a reduction's body, a branch);
- into the functions those ops call (copied whole into the cut);
- out of a function to the operand its caller passes (each chain of call sites from ``main`` evaluated, and the
  results required to agree);
- out of a loop body to the loop's init, for loop state the body passes through unchanged;
- out of a shard_map body to the value the shard_map splits: its shard when every device's shard holds the same
  values (else the devices run the kernel over different tables: refused);
- past the ops that only annotate (sharding marks, optimization barriers);
- to ``main``'s arguments, whose values ``inputs`` gives (or :class:`NotFixed` is raised, naming the argument).

Any other leaf (a random number generator's state, a value the loop changes, an op the interpreter does not run)
raises :class:`NotFixed` with the reason, and the caller leaves the kernel unpriced, saying why.
"""

from __future__ import annotations

_PASS_THROUGH = {"sdy.sharding_constraint", "sdy.reshard", "stablehlo.optimization_barrier"}
_MAX_CHAINS = 64
_PER_DEVICE = {"stablehlo.partition_id", "stablehlo.replica_id", "stablehlo.all_reduce", "stablehlo.all_gather",
               "stablehlo.all_to_all", "stablehlo.reduce_scatter", "stablehlo.collective_permute",
               "stablehlo.collective_broadcast", "sdy.all_gather", "sdy.all_reduce", "sdy.reduce_scatter",
               "sdy.all_slice", "sdy.all_to_all", "sdy.collective_permute"}


class NotFixed(ValueError):
    """A value the cut needs that neither the program nor the inputs stated fix."""


def _function(module, name: str):
    from jax._src.lib.mlir import ir

    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise NotFixed(f"the module has no function {name!r}")


def _callee(op) -> str:
    from jax._src.lib.mlir import ir

    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _enclosing_function(op):
    while op is not None and op.name != "func.func":
        op = op.parent
    return op


def _name_of(func_op) -> str:
    from jax._src.lib.mlir import ir

    return ir.StringAttr(func_op.attributes["sym_name"]).value


def _call_sites(module) -> dict[str, list]:
    """Every ``func.call`` of the module, by the function it calls."""
    sites: dict[str, list] = {}

    def visit(op):
        if op.name == "func.call":
            sites.setdefault(_callee(op), []).append(op)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    visit(inner.operation)

    for op in module.body.operations:
        visit(op.operation)
    return sites


def _chains(module, fname: str, sites: dict[str, list], depth: int = 0) -> list[tuple]:
    """The chains of call sites from ``main`` down to function ``fname`` (each a tuple, outermost first)."""
    if fname == "main":
        return [()]
    if depth > 32:
        raise NotFixed("calls nested deeper than 32 functions")
    out = []
    for site in sites.get(fname, []):
        for chain in _chains(module, _name_of(_enclosing_function(site)), sites, depth + 1):
            out.append(chain + (site,))
            if len(out) > _MAX_CHAINS:
                raise NotFixed(f"function {fname} is reached by more than {_MAX_CHAINS} chains of calls")
    if not out:
        raise NotFixed(f"function {fname} is never called from main")
    return out


def _block_of(value):
    """The block that defines ``value`` (a block argument's block, an op result's block)."""
    from jax._src.lib.mlir import ir

    value = value.maybe_downcast()
    if isinstance(value, ir.BlockArgument):
        return value.owner
    return value.owner.operation.block


def _ops_inside(op) -> list:
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                out.append(inner)
                out.extend(_ops_inside(inner))
    return out


class _Cut:
    """One chain's cut: the ops the wanted values depend on, copied in order into a new ``main``."""

    def __init__(self, ir, module, chain: tuple, inputs, meshes: dict, annotations: frozenset):
        self.ir = ir
        self.annotations = annotations
        self.module = module
        self.by_function = {_callee(site): site for site in chain}
        self.inputs = inputs
        self.meshes = meshes
        self.memo: dict = {}
        self.functions: set[str] = set()
        self.out = ir.Module.create()
        from jax._src.lib.mlir.dialects import func

        self.func = func
        self.main = func.FuncOp("main", ir.FunctionType.get([], []), ip=ir.InsertionPoint(self.out.body))
        self.block = self.main.add_entry_block()
        self.ip = ir.InsertionPoint(self.block)

    # -- values ------------------------------------------------------------------------------------------------------

    def need(self, value):
        got = self.memo.get(value)
        if got is None:
            got = self.memo[value] = self._make(value)
        return got

    def _make(self, value):
        ir = self.ir
        value = value.maybe_downcast()
        if isinstance(value, ir.BlockArgument):
            return self._argument(value)
        result = value
        op = result.owner.operation
        name = op.name
        if name in _PASS_THROUGH or name == "stablehlo.custom_call" and self._annotation(op):
            return self.need(op.operands[result.result_number if name == "stablehlo.optimization_barrier" else 0])
        if name == "stablehlo.custom_call":
            raise NotFixed(f"it depends on the result of custom call {self._target(op)!r}")
        if name == "sdy.manual_computation":
            return self._joined(op, result.result_number)
        if name == "stablehlo.while":
            n = result.result_number
            body = op.regions[1].blocks[0]
            if list(body.operations)[-1].operands[n] != body.arguments[n]:
                raise NotFixed(f"the loop's result {n}, which the loop changes")
            return self.need(op.operands[n])
        if name == "stablehlo.rng_bit_generator" or name.startswith("stablehlo.rng"):
            raise NotFixed("it depends on random numbers")
        if name in _PER_DEVICE:
            raise NotFixed(f"it depends on {name}, which differs between devices")
        operands = [self.need(v) for v in op.operands]
        captured = {}
        if len(op.regions):
            inside = self._blocks_inside(op)
            for inner in _ops_inside(op):
                for v in inner.operands:
                    if _block_of(v) not in inside and v not in captured:
                        captured[v] = self.need(v)
        if name == "func.call":
            self._copy_function(_callee(op))
        copy = op.clone(ip=self.ip)
        for i, v in enumerate(operands):
            copy.operands[i] = v
        if captured:
            for inner in _ops_inside(copy):
                for i, v in enumerate(inner.operands):
                    if v in captured:
                        inner.operands[i] = captured[v]
        for r_old, r_new in zip(op.results, copy.results):
            self.memo[r_old] = r_new
        return copy.results[result.result_number]

    def _argument(self, arg):
        ir = self.ir
        block = arg.owner
        owner = block.owner.operation
        n = arg.arg_number
        if owner.name == "func.func":
            fname = _name_of(owner)
            if fname == "main":
                return self._input(arg)
            site = self.by_function.get(fname)
            if site is None:
                raise NotFixed(f"an argument of function {fname}, which this chain of calls does not reach")
            return self.need(site.operands[n])
        if owner.name == "stablehlo.while":
            body = owner.regions[1].blocks[0]
            ret = list(body.operations)[-1]
            if block != body and owner.regions[0].blocks[0] != block or n >= len(ret.operands) \
                    or ret.operands[n] != body.arguments[n]:
                raise NotFixed(f"loop state {n}, which the loop changes")
            return self.need(owner.operands[n])
        if owner.name == "sdy.manual_computation":
            return self._shard(owner, n)
        raise NotFixed(f"an argument of a {owner.name} region")

    def _input(self, arg):
        ir = self.ir
        from .stablehlo import shape_of

        shape = shape_of(arg.type)
        value = self.inputs(arg.arg_number, shape)
        if value is None:
            raise NotFixed(f"it reads the program's input {arg.arg_number} ({_type_text(shape)}), not stated")
        return self._constant(value, arg.type)

    def _constant(self, value, type_):
        import numpy as np

        from jax._src.lib.mlir.dialects import hlo

        ir = self.ir
        ranked = ir.RankedTensorType(type_)
        et = ranked.element_type
        et = et.maybe_downcast() if hasattr(et, "maybe_downcast") else et
        if isinstance(et, ir.IntegerType) and et.width == 1:
            attr = ir.DenseElementsAttr.get(np.packbits(np.asarray(value, bool).ravel(), bitorder="little"),
                                            type=et, shape=list(ranked.shape))
        else:
            dtype = _numpy_dtype(et)
            attr = ir.DenseElementsAttr.get(np.ascontiguousarray(np.asarray(value).astype(dtype)), type=et,
                                            shape=list(ranked.shape))
        with self.ip:
            return hlo.ConstantOp(attr).result

    def _shard(self, op, n: int):
        """Argument ``n`` of a shard_map body: the operand's shard, the same on every device."""
        import numpy as np

        from . import stablehlo

        arg = op.regions[0].blocks[0].arguments[n]
        splits = stablehlo.manual_splits(op, self.meshes)[n]
        if not splits:
            return self.need(op.operands[n])
        whole = self._value_now(op.operands[n])
        shards = [whole]
        for dim, pieces in splits:
            shards = [piece for s in shards for piece in np.split(s, pieces, axis=dim)]
        if any(not np.array_equal(s, shards[0]) for s in shards[1:]):
            raise NotFixed(f"it reads a shard_map argument whose {len(shards)} devices' shards differ (each device "
                           "would run the kernel over its own tables: pricing each device apart is not built)")
        return self._constant(shards[0], arg.type)

    def _joined(self, op, n: int):
        """Result ``n`` of a shard_map: the devices' values joined along the dimensions its result is split on. Every
        device's value is the one the cut computes: what a device reads from outside is checked the same on every
        device (:meth:`_shard`), and the cut refuses the ops by which devices differ (their index, collectives)."""
        from jax._src.lib.mlir.dialects import hlo

        from . import stablehlo

        ret = list(op.regions[0].blocks[0].operations)[-1]
        value = self.need(ret.operands[n])
        for dim, pieces in stablehlo.manual_splits(op, self.meshes, results=True)[n]:
            with self.ip:
                value = hlo.ConcatenateOp([value] * pieces, dim).result
        return value

    # -- helpers -----------------------------------------------------------------------------------------------------

    def _value_now(self, value):
        """``value`` computed now (a shard_map's operand, to be split), by the cut so far with a return added."""
        ir = self.ir
        new = self.need(value)
        with self.ip:
            ret = self.func.ReturnOp([new])
        self.main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], [new.type]))
        try:
            return _run(ir, self.out)[0]
        finally:
            ret.operation.erase()
            self.main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], []))

    def _blocks_inside(self, op):
        out = []
        for region in op.regions:
            for block in region.blocks:
                out.append(block)
                for inner in block.operations:
                    out.extend(self._blocks_inside(inner.operation))
        return out

    def _annotation(self, op) -> bool:
        return self._target(op) in self.annotations and len(op.operands) >= 1

    def _target(self, op) -> str:
        return self.ir.StringAttr(op.attributes["call_target_name"]).value

    def _copy_function(self, name: str) -> None:
        if name in self.functions:
            return
        if name == "main":
            raise NotFixed("it calls main")
        self.functions.add(name)
        f = _function(self.module, name)
        for inner in _ops_inside(f):
            if inner.name == "func.call":
                self._copy_function(_callee(inner))
            elif inner.name == "stablehlo.custom_call" and not self._annotation(inner):
                raise NotFixed(f"function {name}, which it calls, runs custom call {self._target(inner)!r}")
        f.clone(ip=self.ir.InsertionPoint(self.out.body))

    def finish(self, values) -> list:
        ir = self.ir
        with self.ip:
            self.func.ReturnOp(values)
        self.main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], [v.type for v in values]))
        return _run(ir, self.out)


def _run(ir, module) -> list:
    import numpy as np

    from jax._src.lib.mlir.dialects import hlo

    try:
        results = hlo.eval_module(module, [])
    except Exception as e:  # noqa: BLE001 - the interpreter's own error, said
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise NotFixed(f"XLA's StableHLO interpreter cannot run the ops it depends on ({first})") from None
    out = []
    for attr in results:
        dense = ir.DenseElementsAttr(attr)
        shape = list(ir.RankedTensorType(dense.type).shape)
        arr = np.array(dense)
        if dense.is_splat or arr.size != int(np.prod(shape)):
            arr = np.full(shape, arr.ravel()[0] if arr.size else np.array(dense.get_splat_value()))
        out.append(arr.reshape(shape))
    return out


def _numpy_dtype(et):
    import numpy as np

    from jax._src.lib.mlir import ir

    et = et.maybe_downcast() if hasattr(et, "maybe_downcast") else et
    if isinstance(et, ir.IntegerType):
        it = et
        return np.dtype(("u" if it.is_unsigned else "i") + str(it.width // 8))
    text = str(et)
    if text in ("f32", "f64", "f16"):
        return np.dtype({"f32": "float32", "f64": "float64", "f16": "float16"}[text])
    raise NotFixed(f"an input of element type {text} (only integers and floats are stated)")


def _type_text(shape) -> str:
    return f"{shape.dtype}[{','.join(map(str, shape.dims))}]"


def sources(module, op, operands: list[int]) -> set[int]:
    """The indices of ``main``'s arguments that ``op``'s operands at ``operands`` are computed from (through calls,
    loops and shard_maps, every path)."""
    from jax._src.lib.mlir import ir

    sites = _call_sites(module)
    seen: set = set()
    found: set[int] = set()
    todo = [op.operands[i] for i in operands]
    while todo:
        value = todo.pop().maybe_downcast()
        if value in seen:
            continue
        seen.add(value)
        if isinstance(value, ir.OpResult):
            todo.extend(value.owner.operation.operands)
            continue
        owner = value.owner.owner.operation
        n = value.arg_number
        if owner.name == "func.func":
            fname = _name_of(owner)
            if fname == "main":
                found.add(n)
            todo.extend(site.operands[n] for site in sites.get(fname, []))
        elif owner.name in ("stablehlo.while", "sdy.manual_computation") and n < len(owner.operands):
            todo.append(owner.operands[n])
    return found


def evaluate(module, op, operands: list[int], inputs, annotations=frozenset()) -> list:
    """The values (numpy arrays) of ``op``'s operands at ``operands``, as the program computes them with ``inputs``
    stated: ``inputs(index, shape)`` gives main's argument ``index`` (an array of that HLO shape) or None.
    ``annotations``: the custom-call targets that compute nothing (sharding marks: their result is their first
    operand).

    Raises :class:`NotFixed` with the reason when a value depends on anything else, or when the chains of calls
    that reach ``op`` give different values."""
    import numpy as np

    from jax._src.lib.mlir import ir

    with module.context, ir.Location.unknown():
        from .stablehlo import meshes_of

        meshes = meshes_of(module)
        sites = _call_sites(module)
        found = None
        for chain in _chains(module, _name_of(_enclosing_function(op)), sites):
            cut = _Cut(ir, module, chain, inputs, meshes, frozenset(annotations))
            try:
                got = cut.finish([cut.need(op.operands[i]) for i in operands])
            except RecursionError:
                raise NotFixed("its ops depend on each other too deeply to follow") from None
            if found is None:
                found = got
            elif any(not np.array_equal(a, b) for a, b in zip(found, got)):
                raise NotFixed("the chains of calls that reach the kernel give it different tables")
        return found

