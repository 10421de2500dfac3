"""Custom calls priced: which HLO custom-call targets compute, and what one call of each costs.

The program counter (:mod:`maxflops.xla.program`) asks :func:`price_custom_call` for every ``custom-call`` it meets:

- ``tpu_custom_call`` (every Pallas TPU kernel: splash attention, the flash kernel, megablox ``gmm`` / ``tgmm``,
  tokamax's mosaic_tpu kernels, a user's own): the kernel's Mosaic module run over its grid with its scalar-prefetch
  tables read from the program (:mod:`maxflops.xla.mosaic`), so what it skips costs nothing;
- targets that do no arithmetic (sharding annotations, host offload, layout and dynamic-shape markers): nothing;
- anything else: **not counted**, named in the result with the reason, never a silent 0.

Library matmuls (cuBLAS gemm, cuDNN convolutions) are counted by the HLO counter itself from their dimension numbers.
"""

from __future__ import annotations

import dataclasses
import re

from .hlo_parse import Computation, Instruction, Module

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


def price_custom_call(module: Module, comp: Computation, ins: Instruction) -> Priced | None:
    """Price one custom call that is not a library matmul; None for targets that compute nothing."""
    target = target_of(ins)
    if target in NO_COMPUTE or HOST_CALLBACKS.search(target):
        return None
    if target == "tpu_custom_call":
        return _price_mosaic(module, comp, ins)
    return Priced(0, False, f"custom call {target!r}: no price known for this target")


def _price_mosaic(module: Module, comp: Computation, ins: Instruction) -> Priced:
    from . import mosaic

    try:
        kernel = mosaic.load_kernel(mosaic.body_of(ins.attrs.get("backend_config", "")))
        # a grid sized at run time takes its sizes from the call's first operands, then come the prefetch tables
        dynamic = sum(n < 0 for n in kernel.grid)
        sizes = [constant_values(module, comp, ins.operands[t]) for t in range(dynamic)]
        tables = [constant_values(module, comp, ins.operands[dynamic + t]) for t in range(kernel.scalar_prefetch)]
        p = mosaic.price(kernel, tables, [s[0] if s is not None and len(s) == 1 else None for s in sizes])
    except mosaic.NotPriceable as e:
        return Priced(0, False, f"Pallas TPU kernel: {e}")
    dims = "x".join(map(str, p.grid)) or "1"
    total = 1
    for n in p.grid:
        total *= n
    return Priced(p.flops, True, f"Pallas TPU kernel {p.name}: grid {dims}, matmuls at {p.points_with_matmuls} of "
                                 f"its {total} grid points")


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
