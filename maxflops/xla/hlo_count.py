"""The loop-aware matmul counter behind ``maxflops.xla.hlo``: FLOPs of ``dot`` and ``convolution``
instructions, the call graph with while-loop trip counts, and the per-execution multipliers."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Sequence

from .hlo_parse import Computation, Instruction, Module, Shape, _scope_components  # noqa: F401
from .hlo_parse import operand_shape as _operand_shape



# ----------------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Dot:
    """One matmul-like HLO instruction that executes."""

    name: str          # HLO instruction name (without '%')
    kind: str          # "dot", "elementwise dot", "convolution", "kernel" (a priced custom call), "not counted" (0)
    op_name: str       # metadata op_name ('' if none), with named scopes: "jit(f)/qkv_proj/dot_general"
    flops: int         # FLOPs of one execution
    multiplier: int    # executions per module run: product of enclosing while trip counts, summed over call sites
    note: str = ""     # kernels: what ran and how it was priced; not counted: why


@dataclasses.dataclass(frozen=True)
class MatmulCount:
    """Matmul FLOPs of one HLO module."""

    matmul_flops: int                      # sum(d.flops * d.multiplier): loop-aware
    naive_matmul_flops: int                # every loop body counted once, as cost_analysis does
    raw_cost_analysis_flops: float | None  # XLA's cost_analysis()['flops'] (0.0 if the key is absent; None if n/a)
    dots: tuple[Dot, ...]

    @property
    def elementwise_dot_flops(self) -> int:
        """Of ``matmul_flops``, the dots that are elementwise work (see ``is_elementwise_dot``)."""
        return sum(d.flops * d.multiplier for d in self.dots if d.kind == "elementwise dot")

    @property
    def kernels(self) -> tuple[Dot, ...]:
        """The custom calls priced (Pallas TPU kernels), each with its note."""
        return tuple(d for d in self.dots if d.kind == "kernel")

    @property
    def kernel_flops(self) -> int:
        return sum(d.flops * d.multiplier for d in self.kernels)

    @property
    def not_counted(self) -> tuple[Dot, ...]:
        """The custom calls that compute and could not be priced (flops 0), each with the reason."""
        return tuple(d for d in self.dots if d.kind == "not counted")

    def by_scope(self, names: Sequence[str], innermost: bool = False) -> dict[str, int]:
        """Split the loop-aware FLOPs by scope name.

        Each dot goes to the first entry of ``names`` (in the order given) that appears as a component of its
        ``op_name`` (``innermost``: to the entry that appears last in it, the innermost named scope); dots matching
        none go to ``"other"``. Components are the pieces of ``op_name`` split on ``/``, ``(`` and ``)``, so that
        scopes wrapped by transformations count too: in ``jit(f)/transpose(jvp(qkv_proj))/dot_general`` the
        components include ``qkv_proj`` (and also ``jit``, ``f``, ``transpose``, ``jvp``, ``dot_general``). Every
        name in ``names`` and ``"other"`` is a key.
        """
        names = list(names)
        out = {n: 0 for n in names}
        out.setdefault("other", 0)
        wanted = set(names)
        for d in self.dots:
            comps = _scope_components(d.op_name)
            if innermost:
                hit = next((n for n in reversed(list(comps)) if n in wanted), "other")
            else:
                present = set(comps)
                hit = next((n for n in names if n in present), "other")
            out[hit] += d.flops * d.multiplier
        return out


def _int_list(attr: str | None) -> list[int]:
    if not attr:
        return []
    return [int(x) for x in re.findall(r"-?\d+", attr)]


def dot_flops(comp: Computation, ins: Instruction) -> int:
    """``2 * prod(result dims) * prod(lhs dims at lhs_contracting_dims)``."""
    lhs = _operand_shape(comp, ins, 0)
    k = math.prod(lhs.dims[d] for d in _int_list(ins.attrs.get("lhs_contracting_dims")))
    out = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
    return 2 * math.prod(out.dims) * k


def is_elementwise_dot(comp: Computation, ins: Instruction) -> bool:
    """A ``dot`` that is elementwise work written as a dot: no contraction (``...k,k->...k``, a norm's scale as an
    einsum), or neither operand keeping a dimension of its own (a batched dot product: ``hsd,hsd->hs``, a flash
    backward's row sums; ``nk,nk->k``, a norm scale's gradient). Counted like every dot; ``elementwise_dot_flops``
    sums them apart, because XLA's optimizers rewrite them as multiplies and reductions (the generic simplifier
    the first kind, the CPU and GPU ones the second), so a module before optimization holds them and the module a
    CPU or GPU runs may not."""
    if not _int_list(ins.attrs.get("lhs_contracting_dims")):
        return True
    for i, side in enumerate(("lhs", "rhs")):
        used = set(_int_list(ins.attrs.get(f"{side}_contracting_dims"))) | \
            set(_int_list(ins.attrs.get(f"{side}_batch_dims")))
        if len(_operand_shape(comp, ins, i).dims) > len(used):
            return False
    return True


def ragged_dot_flops(comp: Computation, ins: Instruction) -> int:
    """``lax.ragged_dot``'s ``ragged-dot``: every element of the lhs meets one group's rhs, whichever dimension is
    ragged (rows: a MoE layer's forward; the contraction: its weight gradient; a batch dimension), so
    ``2 * prod(lhs dims) * prod(rhs dims neither contracted, batch nor group)``, the group sizes aside (they only say
    which group each element meets; rows past their sum: counted, as a kernel that tiles all rows runs them)."""
    lhs, rhs = _operand_shape(comp, ins, 0), _operand_shape(comp, ins, 1)
    used = set(_int_list(ins.attrs.get("rhs_contracting_dims"))) | set(_int_list(ins.attrs.get("rhs_batch_dims"))) \
        | set(_int_list(ins.attrs.get("rhs_group_dims")))
    return 2 * math.prod(lhs.dims) * math.prod(n for i, n in enumerate(rhs.dims) if i not in used)


def conv_valid_positions(in_size: int, out_size: int, kernel_size: int, stride: int = 1, pad_low: int = 0,
                         lhs_dilation: int = 1, rhs_dilation: int = 1) -> int:
    """Number of (output position, kernel tap) pairs of one spatial dimension that read a real input element.

    The input index of output ``o`` and tap ``k`` in the padded, base-dilated input is
    ``u = o * stride - pad_low + k * rhs_dilation``; it is a real element when ``u`` is a multiple of
    ``lhs_dilation`` and ``0 <= u / lhs_dilation < in_size``. This is what ``HloCostAnalysis`` counts.
    """
    count = 0
    for k in range(kernel_size):
        base = k * rhs_dilation - pad_low
        for o in range(out_size):
            u = o * stride + base
            if u % lhs_dilation:
                continue
            if 0 <= u // lhs_dilation < in_size:
                count += 1
    return count


def _parse_window(attr: str | None) -> list[dict[str, int]]:
    """``{size=4x3 pad=3_0x1_1 stride=1x2 lhs_dilate=1x1 rhs_dilate=2x1}`` -> one dict per spatial dim."""
    if not attr:
        return []
    fields = dict(f.split("=", 1) for f in attr.strip("{} ").split() if "=" in f)
    sizes = [int(x) for x in fields["size"].split("x")]
    n = len(sizes)

    def ints(key, default):
        return [int(x) for x in fields[key].split("x")] if key in fields else [default] * n

    pads = [tuple(int(v) for v in p.split("_")) for p in fields["pad"].split("x")] if "pad" in fields else [(0, 0)] * n
    stride, lhs_d, rhs_d = ints("stride", 1), ints("lhs_dilate", 1), ints("rhs_dilate", 1)
    return [dict(size=sizes[i], pad_low=pads[i][0], pad_high=pads[i][1], stride=stride[i], lhs_dilation=lhs_d[i],
                 rhs_dilation=rhs_d[i]) for i in range(n)]


def conv_flops(comp: Computation, ins: Instruction) -> int:
    """FLOPs of an HLO ``convolution`` over non-padding taps (``HloCostAnalysis`` convention)."""
    lhs = _operand_shape(comp, ins, 0)
    rhs = _operand_shape(comp, ins, 1)
    out = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
    labels = ins.attrs.get("dim_labels")
    if not labels:
        raise ValueError(f"convolution %{ins.name} has no dim_labels")
    lhs_l, rest = labels.split("_", 1)
    rhs_l, out_l = rest.split("->")
    spatial = sorted(c for c in lhs_l if c.isdigit())
    batch = lhs.dims[lhs_l.index("b")]
    in_features = lhs.dims[lhs_l.index("f")]
    out_features = out.dims[out_l.index("f")]
    fgc = int(ins.attrs.get("feature_group_count", "1"))
    bgc = int(ins.attrs.get("batch_group_count", "1"))
    window = _parse_window(ins.attrs.get("window"))
    if len(window) != len(spatial):
        raise ValueError(f"convolution %{ins.name}: window has {len(window)} dims, dim_labels {len(spatial)}")
    taps = 1
    for sd, w in zip(spatial, window):
        in_size = lhs.dims[lhs_l.index(sd)]
        k_size = rhs.dims[rhs_l.index(sd)]
        out_size = out.dims[out_l.index(sd)]
        if k_size != w["size"]:
            raise ValueError(f"convolution %{ins.name}: kernel dim {k_size} != window size {w['size']}")
        taps *= conv_valid_positions(in_size, out_size, k_size, w["stride"], w["pad_low"], w["lhs_dilation"],
                                     w["rhs_dilation"])
    return 2 * (batch // bgc) * out_features * (in_features // fgc) * taps


# Custom-call targets known to be matmuls: counting them needs their dimension numbers, which we do not parse.
_MATMUL_CUSTOM_CALL = re.compile(r"gemm|matmul|\$conv|convolution", re.IGNORECASE)

# Opcodes whose `to_apply` is a scalar reducer/comparator, never executed as a whole computation per call.
_SCALAR_TO_APPLY = {"reduce", "reduce-window", "scatter", "sort", "select-and-scatter", "all-reduce",
                    "all-reduce-start", "reduce-scatter", "map", "reduce-precision"}


def _gemm_lhs_contracting(backend_config: str | None) -> list[int] | None:
    """``lhs_contracting_dimensions`` of a library gemm custom-call's backend_config JSON, or None."""
    if not backend_config or "lhs_contracting_dimensions" not in backend_config:
        return None
    try:
        cfg = json.loads(backend_config)
        if isinstance(cfg, str):                         # older text: backend_config="{...}"
            cfg = json.loads(cfg)
    except ValueError:
        return None
    stack = [cfg]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "lhs_contracting_dimensions" in x:
                return [int(v) for v in x["lhs_contracting_dimensions"]]
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def _computation_refs(attr: str) -> list[str]:
    return [r.strip().lstrip("%") for r in attr.strip("{} ").split(",") if r.strip()]


# ----------------------------------------------------------------------------------------------------------------------
# Trip counts
# ----------------------------------------------------------------------------------------------------------------------

_KNOWN_TRIP = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(-?\d+)"?')


class _Resolver:
    """Symbolic evaluation of scalar HLO values, enough to recognise the standard counted-loop pattern.

    Expressions: ('const', int), ('iv', i) (element i of the loop state tuple), ('add', a, b), ('cmp', dir, a, b),
    ('tuple', comp, [operand names], env), ('param', k) and ('opaque',).
    """

    _PASS = {"copy", "bitcast", "reshape", "convert", "broadcast", "copy-start", "copy-done"}

    def __init__(self, module: Module):
        self.m = module

    def resolve(self, comp: Computation, name: str, env: tuple | None, depth: int = 0):
        if depth > 64:
            return ("opaque",)
        ins = comp.by_name.get(name)
        if ins is None:                                  # header-only parameter
            return ("opaque",)
        op = ins.opcode
        if op == "constant":
            v = ins.raw_args.strip()
            if re.fullmatch(r"-?\d+", v):
                return ("const", int(v))
            return ("opaque",)
        if op == "parameter":
            k = int(ins.raw_args)
            if env is None:
                return ("param", k)
            return env[k] if k < len(env) else ("opaque",)
        if op in self._PASS and ins.operands and not ins.shape.dims:
            return self.resolve(comp, ins.operands[0], env, depth + 1)
        if op == "get-tuple-element":
            base = self.resolve(comp, ins.operands[0], env, depth + 1)
            idx = int(ins.attrs["index"])
            if base == ("param", 0):
                return ("iv", idx)
            if base[0] == "tuple":
                _, tcomp, names, tenv = base
                return self.resolve(tcomp, names[idx], tenv, depth + 1)
            return ("opaque",)
        if op == "tuple":
            return ("tuple", comp, ins.operands, env)
        if op in ("fusion", "call"):
            refs = _computation_refs(ins.attrs.get("calls") or ins.attrs.get("to_apply") or "")
            callee = self.m.computations.get(refs[0]) if refs else None
            if callee is None:
                return ("opaque",)
            sub_env = tuple(self.resolve(comp, o, env, depth + 1) for o in ins.operands)
            return self.resolve(callee, callee.root.name, sub_env, depth + 1)
        if op == "add" and len(ins.operands) == 2:
            return ("add",) + tuple(self.resolve(comp, o, env, depth + 1) for o in ins.operands)
        if op == "compare":
            a, b = (self.resolve(comp, o, env, depth + 1) for o in ins.operands)
            return ("cmp", ins.attrs.get("direction", ""), a, b)
        return ("opaque",)


def derive_trip_count(module: Module, caller: Computation, while_ins: Instruction) -> int | None:
    """Trip count of a standard counted loop, or None when the pattern is not recognised.

    Pattern: the condition is ``state[i] < N`` (or ``N > state[i]``) with N constant; the body sets
    ``state[i] = state[i] + s`` with a constant ``s > 0``; the init tuple sets ``state[i]`` to a constant.
    """
    r = _Resolver(module)
    cond = module.computations[while_ins.attrs["condition"].lstrip("%")]
    body = module.computations[while_ins.attrs["body"].lstrip("%")]
    c = r.resolve(cond, cond.root.name, None)
    if c[0] != "cmp":
        return None
    _, direction, a, b = c
    if direction == "GT":
        direction, a, b = "LT", b, a
    if direction != "LT" or a[0] != "iv" or b[0] != "const":
        return None
    i, limit = a[1], b[1]
    step = r.resolve(body, body.root.name, None)
    if step[0] != "tuple":
        return None
    upd = r.resolve(step[1], step[2][i], step[3])
    if upd[0] != "add":
        return None
    x, y = upd[1], upd[2]
    if x != ("iv", i):
        x, y = y, x
    if x != ("iv", i) or y[0] != "const" or y[1] <= 0:
        return None
    init = r.resolve(caller, while_ins.operands[0], None)
    if init[0] != "tuple":
        return None
    start = r.resolve(init[1], init[2][i], init[3])
    if start[0] != "const":
        return None
    return max(0, -(-(limit - start[1]) // y[1]))


def _known_trip_count(ins: Instruction) -> int | None:
    m = _KNOWN_TRIP.search(ins.attrs.get("backend_config", ""))
    return int(m.group(1)) if m else None


# ----------------------------------------------------------------------------------------------------------------------
# Counting
# ----------------------------------------------------------------------------------------------------------------------

def _own_flops(module: Module, comp: Computation, inputs=None) -> list[tuple[Instruction, str, int, str]]:
    """The matmul instructions of one computation with the FLOPs of one execution (and a note for custom calls)."""
    out = []
    for ins in comp.instructions:
        if ins.opcode == "dot":
            out.append((ins, "elementwise dot" if is_elementwise_dot(comp, ins) else "dot", dot_flops(comp, ins)))
        elif ins.opcode == "convolution":
            out.append((ins, "convolution", conv_flops(comp, ins)))
        elif ins.opcode == "ragged-dot":
            out.append((ins, "dot", ragged_dot_flops(comp, ins)))
        elif "dot" in ins.opcode:                        # ragged-dot, sparse dot...: not modelled
            raise ValueError(f"unsupported matmul opcode {ins.opcode!r} (%{ins.name}) in %{comp.name}")
        elif ins.opcode == "custom-call":
            target = ins.attrs.get("custom_call_target", "").strip('"')
            if "window" in ins.attrs and "dim_labels" in ins.attrs:          # e.g. __cudnn$convForward
                out.append((ins, "convolution", conv_flops(comp, ins)))
                continue
            # cuDNN's fused attention carries dot dimension numbers too (its two matmuls'): priced as a kernel
            fused = target.startswith("__cudnn$fmha")
            contracting = None if fused else _gemm_lhs_contracting(ins.attrs.get("backend_config"))
            if contracting is not None:                                      # e.g. __cublas$gemm
                lhs = _operand_shape(comp, ins, 0)
                res = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
                out.append((ins, "dot", 2 * math.prod(res.dims) * math.prod(lhs.dims[d] for d in contracting)))
            elif _MATMUL_CUSTOM_CALL.search(target) and not fused:
                raise ValueError(f"custom-call %{ins.name} to {target!r} in %{comp.name} looks like a matmul but "
                                 "carries no dot dimension numbers in its backend_config: cannot count it")
            else:
                from .kernels import price_custom_call

                priced = price_custom_call(module, comp, ins, inputs)
                if priced is not None:
                    out.append((ins, "kernel" if priced.counted else "not counted", priced.flops, priced.note))
    return [o if len(o) == 4 else o + ("",) for o in out]


def _call_edges(ins: Instruction) -> list[tuple[str, str]]:
    """(callee, role) pairs of one instruction; role in {'call', 'body', 'condition', 'branch', 'scalar'}."""
    a = ins.attrs
    op = ins.opcode
    edges = []
    if op == "while":
        edges.append((a["body"].lstrip("%"), "body"))
        edges.append((a["condition"].lstrip("%"), "condition"))
        return edges
    if op == "conditional":
        if "branch_computations" in a:
            edges += [(c, "branch") for c in _computation_refs(a["branch_computations"])]
        else:
            edges += [(a[k].lstrip("%"), "branch") for k in ("true_computation", "false_computation") if k in a]
        return edges
    if op in ("async-update", "async-done"):             # same wrapped computation as the async-start
        return edges
    if "calls" in a:
        edges += [(c, "call") for c in _computation_refs(a["calls"])]
    if "called_computations" in a:
        edges += [(c, "call") for c in _computation_refs(a["called_computations"])]
    if "to_apply" in a:
        edges.append((a["to_apply"].lstrip("%"), "scalar" if op in _SCALAR_TO_APPLY else "call"))
    for k in ("select", "scatter"):
        if k in a and op == "select-and-scatter":
            edges.append((a[k].lstrip("%"), "scalar"))
    return edges


def count_module(module: Module, raw_cost_analysis_flops: float | None = None, report: bool = False,
                 inputs=None) -> MatmulCount:
    """The loop-aware count of a parsed module. ``report``: a loop whose trip count the program does not fix, or a
    conditional whose branches cost differently, is listed as not counted (with its body's or branches' FLOPs)
    instead of raising (the program counter's way; the proof helpers raise). ``inputs``: a kernel's run-time inputs
    given or assumed (:class:`maxflops.xla.kernels.RunTimeInputs`)."""
    comps = module.computations
    own = {name: _own_flops(module, c, inputs) for name, c in comps.items()}

    # Does a computation (transitively, through executed edges) contain a matmul?
    has_dots: dict[str, bool] = {}

    def _has(name: str, stack=()) -> bool:
        if name in has_dots:
            return has_dots[name]
        if name in stack:
            raise ValueError(f"recursive HLO call graph at %{name}")
        res = bool(own[name])
        for ins in comps[name].instructions:
            for callee, role in _call_edges(ins):
                if role in ("call", "body", "branch") and _has(callee, stack + (name,)):
                    res = True
        has_dots[name] = res
        return res

    for name in comps:
        _has(name)

    # Loop-aware cost of one execution of a computation (needed to compare conditional branches).
    cost_memo: dict[str, int] = {}

    def _cost(name: str) -> int:
        if name not in cost_memo:
            total = sum(f for _, _, f, _ in own[name])
            for ins in comps[name].instructions:
                for callee, factor in _edge_factors(name, ins, loop_aware=True):
                    total += factor * _cost(callee)
            cost_memo[name] = total
        return cost_memo[name]

    trip_memo: dict[tuple[str, str], int] = {}
    unknown: dict[tuple[str, str], tuple[Instruction, str]] = {}   # (caller, instruction) -> (it, why)

    def _trip(caller: str, ins: Instruction) -> int:
        key = (caller, ins.name)
        if key not in trip_memo:
            body = ins.attrs["body"].lstrip("%")
            n = _known_trip_count(ins)
            if n is None:
                n = derive_trip_count(module, comps[caller], ins)
            if n is None:
                if has_dots[body] and report:
                    unknown[key] = (ins, f"a while loop whose trip count the program does not fix (data-dependent): "
                                         f"its body's matmuls, {_cost(body):,} FLOPs an iteration, not counted")
                    n = 0
                elif has_dots[body]:
                    raise ValueError(
                        f"while loop %{ins.name} (in %{caller}, body %{body}) has no known trip count: its "
                        "backend_config has no known_trip_count and its condition is not the standard pattern "
                        "(induction variable LT a constant, constant init, constant positive step), yet its body "
                        "contains matmuls")
                else:
                    n = 1                                # no matmuls inside: the value does not matter
            trip_memo[key] = n
        return trip_memo[key]

    def _edge_factors(caller: str, ins: Instruction, loop_aware: bool) -> list[tuple[str, int]]:
        edges = _call_edges(ins)
        if not edges:
            return []
        if ins.opcode == "while":
            body = ins.attrs["body"].lstrip("%")
            return [(body, _trip(caller, ins) if loop_aware else 1)]
        if ins.opcode == "conditional":
            branches = [c for c, _ in edges]
            costs = [_cost(b) for b in branches]
            if len(set(costs)) > 1 and report:
                unknown[(caller, ins.name)] = (ins, "a conditional whose branches cost differently ("
                                               + ", ".join(f"{c:,}" for c in costs) + " FLOPs): which runs is "
                                               "data-dependent, none counted")
                return []
            if len(set(costs)) > 1:
                raise ValueError(
                    f"conditional %{ins.name} (in %{caller}) has branches with different matmul FLOPs "
                    f"{dict(zip(branches, costs))}: which branch runs is data-dependent, so the count would be "
                    "ambiguous (branches costing the same are accepted)")
            return [(branches[0], 1)] if branches else []
        copies = int(ins.attrs.get("copies", "1"))       # a shard_map body, run by each of its devices
        return [(c, copies) for c, role in edges if role == "call"]

    # Topological order of computations reachable from ENTRY (callers before callees).
    order: list[str] = []
    seen: set[str] = set()

    def _visit(name: str):
        seen.add(name)
        for ins in comps[name].instructions:
            for callee, role in _call_edges(ins):
                if role in ("call", "body", "branch") and callee not in seen:
                    _visit(callee)
        order.append(name)

    _visit(module.entry)
    order.reverse()

    # Propagate multipliers from ENTRY down the call graph, per op_name context. In the pre-optimization module the
    # op_names inside a called computation are relative to it ("mlp/dot_general"), so they are prefixed with the
    # op_name of the call site; op_names that already start with the module's root scope (e.g. "jit(f)", the case
    # throughout optimized modules) are absolute and kept as they are.
    root = _root_scope(comps[module.entry])

    def _absolute(prefix: str, op_name: str) -> str:
        if not op_name:
            return prefix
        if not prefix or (root is not None and (op_name == root or op_name.startswith(root + "/"))):
            return op_name
        return prefix + "/" + op_name

    # ctx[computation][prefix] = [loop-aware multiplier, naive multiplier]
    ctx: dict[str, dict[str, list[int]]] = {name: {} for name in order}
    ctx[module.entry][""] = [1, 1]
    for name in order:
        for prefix, (m, nm) in ctx[name].items():
            if m == 0 and nm == 0:
                continue
            for ins in comps[name].instructions:
                edges = _edge_factors(name, ins, True)
                if not edges:
                    continue
                naive_edges = dict(_edge_factors(name, ins, False))
                callee_prefix = _absolute(prefix, ins.op_name)
                for callee, factor in edges:
                    slot = ctx[callee].setdefault(callee_prefix, [0, 0])
                    slot[0] += m * factor
                    slot[1] += nm * naive_edges.get(callee, 0)

    acc: dict[tuple[str, str, str], list] = {}           # (computation, instruction, op_name) -> [kind, flops, m]
    naive = 0
    for name in order:
        for prefix, (m, nm) in ctx[name].items():
            for ins, kind, flops, note in own[name]:
                if m == 0 and nm == 0:
                    continue
                key = (name, ins.name, _absolute(prefix, ins.op_name))
                acc.setdefault(key, [kind, flops, 0, note])[2] += m
                naive += flops * nm
    for (caller, _), (ins, why) in unknown.items():      # what could not be counted, named where it runs
        for prefix, (m, _) in ctx.get(caller, {}).items():
            if m:
                key = (caller, ins.name, _absolute(prefix, ins.op_name))
                acc.setdefault(key, ["not counted", 0, 0, why])[2] += m
    dots = tuple(Dot(ins_name, kind, op_name, flops, m, note)
                 for (_, ins_name, op_name), (kind, flops, m, note) in acc.items())
    total = sum(d.flops * d.multiplier for d in dots)
    return MatmulCount(total, naive, raw_cost_analysis_flops, dots)


def _root_scope(entry: Computation) -> str | None:
    """The first op_name component shared by most of ENTRY's instructions, e.g. "jit(f)"; None when there is none."""
    counts: dict[str, int] = {}
    for ins in entry.instructions:
        on = ins.op_name
        if "/" in on:
            first = on.split("/", 1)[0]
            counts[first] = counts.get(first, 0) + 1
    return max(counts, key=counts.get) if counts else None


