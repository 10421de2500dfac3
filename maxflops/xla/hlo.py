"""Loop-aware matmul FLOP counter for XLA HLO modules.

XLA's ``cost_analysis()`` counts the body of a ``while`` loop once, whatever its trip count, so a scanned model
(``lax.scan``, ``nn.scan``, MaxText's ``scan_layers``) reports about one layer's FLOPs. This module parses the HLO
text of a module, builds its call graph (fusions, while bodies, calls, conditionals, async wrappers), and counts every
``dot`` and ``convolution`` once per execution: each computation gets a *multiplier*, the sum over its call sites of
the caller's multiplier times the trip count of the loop (1 for plain calls and fusions).

Only matmul FLOPs are counted (``dot`` and ``convolution``); elementwise ops, reductions and transcendentals are not,
because their counts move between the lowered and the optimized module (XLA's optimizer fuses, splits and
rewrites them), while every dot it keeps is the same dot.

Conventions, matching ``HloCostAnalysis``:

- ``dot``: ``2 * prod(result dims) * prod(lhs dims at lhs_contracting_dims)``.
- ``convolution``: ``2 * batch / batch_group_count * out_features * (in_features / feature_group_count)
  * prod over spatial dims of the number of (output position, kernel tap) pairs whose input index falls inside the
  unpadded (and un-dilated) input``: padding taps cost nothing.

Entry points:

- :func:`count_hlo_text`: any HLO text (``compiled.as_text()``, or ``lowered.as_text(dialect="hlo")``).
- :func:`count_matmuls`: the optimized (compiled) module of a function / ``Lowered`` / ``Compiled``: what runs. With
  SPMD partitioning the compiled module is per device, so the count is per device.
- :func:`count_lowered`: the pre-optimization module: global (not per device) and before CSE, so ``jax.checkpoint``
  recompute is visible.

Trip counts come from the ``"known_trip_count":{"n":"12"}`` entry of a ``while``'s ``backend_config`` (the optimized
module carries it when the bound is static); failing that, from the standard loop pattern (the condition compares an
induction variable LT a constant, the body adds a positive constant to it, and the init tuple starts it at a
constant), which is what ``lax.scan`` and ``fori_loop`` lower to. A loop whose body (transitively) holds a matmul and
whose trip count is neither annotated nor derivable raises ``ValueError``.

Conditionals: the branches must have the same (loop-aware) matmul FLOPs, counted once; otherwise ``ValueError``
(which branch runs is data-dependent). ``condition=`` computations and scalar ``to_apply`` reducers/comparators
(reduce, sort, scatter, all-reduce...) are not counted; ``call`` ``to_apply`` targets are. Library matmul
custom-calls (cuBLAS gemm: dimension numbers in the backend_config; cuDNN convolutions: window/dim_labels) are
counted; another custom-call whose target looks like a matmul raises rather than be dropped silently.

Scopes: ``Dot.op_name`` is the instruction's metadata op_name. In the pre-optimization module the op_names inside a
called computation (a scan body, a nested jit) are relative to it ("mlp/dot_general"); they are made absolute by
prefixing the call site's op_name, so :meth:`MatmulCount.by_scope` works on both modules. A computation reached
under several op_names yields one ``Dot`` per op_name.

This module imports jax lazily (only :func:`count_matmuls` and :func:`count_lowered` need it).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Sequence

__all__ = ["Dot", "MatmulCount", "count_hlo_text", "count_matmuls", "count_lowered", "parse_hlo_module",
           "conv_valid_positions"]


# ----------------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Dot:
    """One matmul-like HLO instruction that executes."""

    name: str          # HLO instruction name (without '%')
    kind: str          # "dot" or "convolution"
    op_name: str       # metadata op_name ('' if none), with named scopes: "jit(f)/qkv_proj/dot_general"
    flops: int         # FLOPs of one execution
    multiplier: int    # executions per module run: product of enclosing while trip counts, summed over call sites


@dataclasses.dataclass(frozen=True)
class MatmulCount:
    """Matmul FLOPs of one HLO module."""

    matmul_flops: int                      # sum(d.flops * d.multiplier): loop-aware
    naive_matmul_flops: int                # every loop body counted once, as cost_analysis does
    raw_cost_analysis_flops: float | None  # XLA's cost_analysis()['flops'] (0.0 if the key is absent; None if n/a)
    dots: tuple[Dot, ...]

    def by_scope(self, names: Sequence[str]) -> dict[str, int]:
        """Split the loop-aware FLOPs by scope name.

        Each dot goes to the first entry of ``names`` (in the order given) that appears as a component of its
        ``op_name``; dots matching none go to ``"other"``. Components are the pieces of ``op_name`` split on ``/``,
        ``(`` and ``)``, so that scopes wrapped by transformations count too: in
        ``jit(f)/transpose(jvp(qkv_proj))/dot_general`` the components include ``qkv_proj`` (and also ``jit``,
        ``f``, ``transpose``, ``jvp``, ``dot_general``). Every name in ``names`` and ``"other"`` is a key.
        """
        names = list(names)
        out = {n: 0 for n in names}
        out.setdefault("other", 0)
        for d in self.dots:
            comps = set(_scope_components(d.op_name))
            for n in names:
                if n in comps:
                    out[n] += d.flops * d.multiplier
                    break
            else:
                out["other"] += d.flops * d.multiplier
        return out


def _scope_components(op_name: str) -> list[str]:
    return [c for c in re.split(r"[/()]+", op_name) if c]


# ----------------------------------------------------------------------------------------------------------------------
# Low-level text helpers (quote- and bracket-aware)
# ----------------------------------------------------------------------------------------------------------------------

_OPEN = {"(": ")", "{": "}", "[": "]"}
_CLOSE = {")", "}", "]"}


def _strip_comments(s: str) -> str:
    """Remove ``/* ... */`` comments that are outside string literals."""
    if "/*" not in s:
        return s
    out = []
    i, n = 0, len(s)
    in_str = False
    while i < n:
        c = s[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(s[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == "/" and s.startswith("/*", i):
            j = s.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')


def _depth_delta(s: str) -> int:
    """Net bracket depth of ``s`` (all of (), {}, []), ignoring string literals."""
    if '"' in s:
        s = _STRING_RE.sub("", s)
    return s.count("(") + s.count("{") + s.count("[") - s.count(")") - s.count("}") - s.count("]")


def _scan(s: str, start: int = 0):
    """Yield (index, char, depth after it) for the characters of ``s`` outside string literals."""
    depth = 0
    in_str = False
    i, n = start, len(s)
    while i < n:
        c = s[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        else:
            depth += (c in _OPEN) - (c in _CLOSE)
            yield i, c, depth
        i += 1


def _match_bracket(s: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``s[start]`` (string-literal aware)."""
    for i, c, depth in _scan(s, start):
        if c in _CLOSE and depth == 0:
            return i + 1
    raise ValueError(f"unbalanced brackets in HLO text: {s[start:start + 200]!r}")


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split ``s`` at ``sep`` characters that are outside brackets and string literals; strip the pieces."""
    parts = []
    cur_start = 0
    for i, c, depth in _scan(s):
        if c == sep and depth == 0:
            parts.append(s[cur_start:i].strip())
            cur_start = i + 1
    last = s[cur_start:].strip()
    if last or parts:
        parts.append(last)
    return [p for p in parts if p != ""]


# ----------------------------------------------------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Shape:
    """An HLO array shape (``dims``) or tuple shape (``elements``)."""

    dtype: str                               # element type, e.g. 'f32'; 'tuple' for tuples
    dims: tuple[int, ...] = ()
    elements: tuple["Shape", ...] = ()

    @property
    def is_tuple(self) -> bool:
        return self.dtype == "tuple"


_ARRAY_RE = re.compile(r"^([a-z][a-z0-9]*)\[([^\]]*)\]")


def parse_shape(text: str) -> Shape:
    """Parse an HLO type: ``f32[8,16]{1,0}``, ``f32[]``, ``pred[]``, ``(s32[], f32[4,8]{1,0})``, ``token[]``...

    Layouts (``{1,0}``, ``{1,0:T(8,128)}``), ``/*index=5*/`` comments and dynamic bounds (``<=8``) are accepted; a
    dynamic dimension counts at its bound.
    """
    t = _strip_comments(text).strip()
    if t.startswith("("):
        end = _match_bracket(t, 0)
        return Shape("tuple", (), tuple(parse_shape(p) for p in _split_top(t[1:end - 1])))
    m = _ARRAY_RE.match(t)
    if not m:
        raise ValueError(f"cannot parse HLO shape {text!r}")
    dims = []
    for d in m.group(2).split(","):
        d = d.strip()
        if not d:
            continue
        d = d.lstrip("<=")
        if d == "?":
            raise ValueError(f"unbounded dynamic dimension in HLO shape {text!r}")
        dims.append(int(d))
    return Shape(m.group(1), tuple(dims))


def _take_type(s: str) -> tuple[str, str]:
    """Split ``s`` into (leading HLO type text, rest)."""
    s = s.lstrip()
    if s.startswith("("):
        end = _match_bracket(s, 0)
        return s[:end], s[end:]
    m = _ARRAY_RE.match(s)
    if not m:
        raise ValueError(f"expected an HLO type at {s[:80]!r}")
    end = m.end()
    if end < len(s) and s[end] == "{":               # layout
        end = _match_bracket(s, end)
    return s[:end], s[end:]


# ----------------------------------------------------------------------------------------------------------------------
# Module structure
# ----------------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Instruction:
    name: str
    shape: Shape
    opcode: str
    operands: list[str]                      # operand instruction names (without '%')
    operand_shapes: list[Shape | None]       # shapes printed inline with operands (old HLO text), else None
    attrs: dict[str, str]                    # attribute text by key ('metadata', 'backend_config', 'calls', ...)
    raw_args: str                            # the text inside opcode(...)
    is_root: bool = False

    @property
    def op_name(self) -> str:
        m = re.search(r'op_name="((?:[^"\\]|\\.)*)"', self.attrs.get("metadata", ""))
        return re.sub(r"\\(.)", r"\1", m.group(1)) if m else ""


@dataclasses.dataclass
class Computation:
    name: str
    is_entry: bool
    params: dict[str, Shape]                 # header parameters (name -> shape); may be empty (lowered text)
    instructions: list[Instruction]
    by_name: dict[str, Instruction]

    @property
    def root(self) -> Instruction:
        for ins in self.instructions:
            if ins.is_root:
                return ins
        return self.instructions[-1]

    def shape_of(self, name: str) -> Shape:
        ins = self.by_name.get(name)
        if ins is not None:
            return ins.shape
        if name in self.params:
            return self.params[name]
        raise ValueError(f"unknown operand %{name} in computation %{self.name}")


@dataclasses.dataclass
class Module:
    computations: dict[str, Computation]
    entry: str


_HEADER_RE = re.compile(r"^(ENTRY\s+)?%?([^\s(]+)\s*(.*)\{\s*$")


def _parse_header(line: str) -> tuple[str, bool, dict[str, Shape]]:
    m = _HEADER_RE.match(line.strip())
    if not m:
        raise ValueError(f"cannot parse HLO computation header {line!r}")
    is_entry, name, rest = bool(m.group(1)), m.group(2), m.group(3).strip()
    params: dict[str, Shape] = {}
    if rest.startswith("("):
        end = _match_bracket(rest, 0)
        for p in _split_top(_strip_comments(rest[1:end - 1])):
            pname, _, ptype = p.partition(":")
            params[pname.strip().lstrip("%")] = parse_shape(ptype)
    return name, is_entry, params


def _parse_attrs(rest: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for part in _split_top(rest):
        key, eq, val = part.partition("=")
        if eq:
            attrs[key.strip()] = val.strip()
    return attrs


def _parse_instruction(text: str) -> Instruction:
    s = text.strip()
    is_root = False
    if s.startswith("ROOT "):
        is_root = True
        s = s[5:].lstrip()
    name, eq, rhs = s.partition("=")
    if not eq:
        raise ValueError(f"cannot parse HLO instruction {text!r}")
    name = name.strip().lstrip("%")
    type_text, rest = _take_type(rhs)
    rest = rest.lstrip()
    paren = rest.find("(")
    if paren < 0:
        raise ValueError(f"cannot parse HLO instruction {text!r}")
    opcode = rest[:paren].strip()
    end = _match_bracket(rest, paren)
    raw_args = rest[paren + 1:end - 1]
    operands: list[str] = []
    operand_shapes: list[Shape | None] = []
    if opcode not in ("constant", "parameter", "iota", "rng-get-and-update-state"):
        for op in _split_top(_strip_comments(raw_args)):
            op = op.strip()
            if op.startswith("%") or not (op.startswith("(") or _ARRAY_RE.match(op)):
                operands.append(op.lstrip("%"))
                operand_shapes.append(None)
            else:                                        # old style: "f32[8,16]{1,0} %x"
                t, nm = _take_type(op)
                operands.append(nm.strip().lstrip("%"))
                operand_shapes.append(parse_shape(t))
    attrs = _parse_attrs(rest[end:].lstrip().lstrip(","))
    return Instruction(name, parse_shape(type_text), opcode, operands, operand_shapes, attrs, raw_args, is_root)


def parse_hlo_module(text: str) -> Module:
    """Parse HLO text into computations and instructions.

    Accepts the optimized module (``compiled.as_text()``: ``%``-prefixed names, signatures in the headers, FileNames /
    StackFrames sections) and the pre-optimization one (``lowered.as_text(dialect="hlo")``: bare names, headers
    without signatures). Instructions split over several lines (bracketed) are joined.
    """
    computations: dict[str, Computation] = {}
    entry = None
    cur: Computation | None = None
    buf: list[str] = []
    depth = 0
    for line in text.splitlines():
        if cur is None:
            if not line.strip() or line[:1].isspace() or line.startswith("HloModule"):
                continue
            if line.rstrip().endswith("{") and not re.match(r"^\d+\s", line):
                name, is_entry, params = _parse_header(line)
                cur = Computation(name, is_entry, params, [], {})
            continue
        if not buf and line.strip() == "}":
            computations[cur.name] = cur
            if cur.is_entry:
                entry = cur.name
            cur = None
            continue
        if not line.strip():
            continue
        buf.append(line.strip())
        depth += _depth_delta(line)
        if depth <= 0:
            ins = _parse_instruction(" ".join(buf))
            cur.instructions.append(ins)
            cur.by_name[ins.name] = ins
            buf, depth = [], 0
    if cur is not None:
        raise ValueError(f"HLO text ends inside computation %{cur.name}")
    if not computations:
        raise ValueError("no HLO computations found in the text")
    if entry is None:
        raise ValueError("HLO text has no ENTRY computation")
    return Module(computations, entry)


# ----------------------------------------------------------------------------------------------------------------------
# FLOPs of one instruction
# ----------------------------------------------------------------------------------------------------------------------

def _int_list(attr: str | None) -> list[int]:
    if not attr:
        return []
    return [int(x) for x in re.findall(r"-?\d+", attr)]


def _operand_shape(comp: Computation, ins: Instruction, i: int) -> Shape:
    if i < len(ins.operand_shapes) and ins.operand_shapes[i] is not None:
        return ins.operand_shapes[i]
    return comp.shape_of(ins.operands[i])


def dot_flops(comp: Computation, ins: Instruction) -> int:
    """``2 * prod(result dims) * prod(lhs dims at lhs_contracting_dims)``."""
    lhs = _operand_shape(comp, ins, 0)
    k = math.prod(lhs.dims[d] for d in _int_list(ins.attrs.get("lhs_contracting_dims")))
    out = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
    return 2 * math.prod(out.dims) * k


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

def _own_flops(module: Module, comp: Computation) -> list[tuple[Instruction, str, int]]:
    """The matmul instructions of one computation with the FLOPs of one execution."""
    out = []
    for ins in comp.instructions:
        if ins.opcode == "dot":
            out.append((ins, "dot", dot_flops(comp, ins)))
        elif ins.opcode == "convolution":
            out.append((ins, "convolution", conv_flops(comp, ins)))
        elif "dot" in ins.opcode:                        # ragged-dot, sparse dot...: not modelled
            raise ValueError(f"unsupported matmul opcode {ins.opcode!r} (%{ins.name}) in %{comp.name}")
        elif ins.opcode == "custom-call":
            target = ins.attrs.get("custom_call_target", "").strip('"')
            if "window" in ins.attrs and "dim_labels" in ins.attrs:          # e.g. __cudnn$convForward
                out.append((ins, "convolution", conv_flops(comp, ins)))
                continue
            contracting = _gemm_lhs_contracting(ins.attrs.get("backend_config"))
            if contracting is not None:                                      # e.g. __cublas$gemm
                lhs = _operand_shape(comp, ins, 0)
                res = ins.shape.elements[0] if ins.shape.is_tuple else ins.shape
                out.append((ins, "dot", 2 * math.prod(res.dims) * math.prod(lhs.dims[d] for d in contracting)))
            elif _MATMUL_CUSTOM_CALL.search(target):
                raise ValueError(f"custom-call %{ins.name} to {target!r} in %{comp.name} looks like a matmul but "
                                 "carries no dot dimension numbers in its backend_config: cannot count it")
    return out


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


def count_module(module: Module, raw_cost_analysis_flops: float | None = None) -> MatmulCount:
    comps = module.computations
    own = {name: _own_flops(module, c) for name, c in comps.items()}

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
            total = sum(f for _, _, f in own[name])
            for ins in comps[name].instructions:
                for callee, factor in _edge_factors(name, ins, loop_aware=True):
                    total += factor * _cost(callee)
            cost_memo[name] = total
        return cost_memo[name]

    trip_memo: dict[tuple[str, str], int] = {}

    def _trip(caller: str, ins: Instruction) -> int:
        key = (caller, ins.name)
        if key not in trip_memo:
            body = ins.attrs["body"].lstrip("%")
            n = _known_trip_count(ins)
            if n is None:
                n = derive_trip_count(module, comps[caller], ins)
            if n is None:
                if has_dots[body]:
                    raise ValueError(
                        f"while loop %{ins.name} (in %{caller}, body %{body}) has no known trip count: its "
                        "backend_config has no known_trip_count and its condition is not the standard pattern "
                        "(induction variable LT a constant, constant init, constant positive step), yet its body "
                        "contains matmuls")
                n = 1                                    # no matmuls inside: the value does not matter
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
            if len(set(costs)) > 1:
                raise ValueError(
                    f"conditional %{ins.name} (in %{caller}) has branches with different matmul FLOPs "
                    f"{dict(zip(branches, costs))}: which branch runs is data-dependent, so the count would be "
                    "ambiguous (branches costing the same are accepted)")
            return [(branches[0], 1)] if branches else []
        return [(c, 1) for c, role in edges if role == "call"]

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
            for ins, kind, flops in own[name]:
                if m == 0 and nm == 0:
                    continue
                key = (name, ins.name, _absolute(prefix, ins.op_name))
                acc.setdefault(key, [kind, flops, 0])[2] += m
                naive += flops * nm
    dots = tuple(Dot(ins_name, kind, op_name, flops, m) for (_, ins_name, op_name), (kind, flops, m) in acc.items())
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


def count_hlo_text(text: str, raw_cost_analysis_flops: float | None = None) -> MatmulCount:
    """Count the matmul FLOPs of an HLO module given as text.

    ``naive_matmul_flops`` counts every while body once (trip counts taken as 1) but keeps call multiplicities, as
    ``cost_analysis`` does; it equals ``sum(d.flops)`` when every computation has a single call site (the case in
    optimized modules). ``raw_cost_analysis_flops`` is passed through (None: unavailable).
    """
    return count_module(parse_hlo_module(text), raw_cost_analysis_flops)


# ----------------------------------------------------------------------------------------------------------------------
# jax entry points
# ----------------------------------------------------------------------------------------------------------------------

def _cost_flops(stage) -> float | None:
    try:
        ca = stage.cost_analysis()
    except Exception:  # noqa: BLE001 - not all backends/versions implement it
        return None
    if ca is None:
        return None
    if isinstance(ca, (list, tuple)):                    # jax 0.4.x: one dict per module
        if not ca:
            return None
        ca = ca[0]
    return float(ca.get("flops", 0.0))


def _lower(fn_or_stage, args, kwargs):
    import jax

    if isinstance(fn_or_stage, (jax.stages.Lowered, jax.stages.Compiled)):
        if args or kwargs:
            raise TypeError("arguments given with an already lowered/compiled stage")
        return fn_or_stage
    if not callable(fn_or_stage):
        raise TypeError(f"expected a callable, jax.stages.Lowered or jax.stages.Compiled, got {type(fn_or_stage)}")
    fn = fn_or_stage if hasattr(fn_or_stage, "lower") else jax.jit(fn_or_stage)
    return fn.lower(*args, **kwargs)


def count_matmuls(fn_or_stage, *args, **kwargs) -> MatmulCount:
    """Loop-aware matmul FLOPs of the optimized module: what runs (per device under SPMD partitioning).

    ``fn_or_stage``: a ``jax.stages.Compiled``, a ``jax.stages.Lowered`` (compiled here), or a callable (jitted if it
    is not already, lowered with ``*args, **kwargs``, compiled). ``raw_cost_analysis_flops`` is the compiled
    module's ``cost_analysis()['flops']``, which counts loop bodies once.
    """
    import jax

    stage = _lower(fn_or_stage, args, kwargs)
    compiled = stage.compile() if isinstance(stage, jax.stages.Lowered) else stage
    return count_hlo_text(compiled.as_text(), _cost_flops(compiled))


def count_lowered(fn_or_lowered, *args, **kwargs) -> MatmulCount:
    """Loop-aware matmul FLOPs of the pre-optimization module: global (not per device), no CSE.

    Use it to see ``jax.checkpoint`` recompute, which XLA may CSE away in the optimized module. Trip counts are
    derived from the loop conditions (the pre-optimization module carries no ``known_trip_count``); a loop with
    matmuls and a non-standard condition raises ``ValueError``. ``raw_cost_analysis_flops`` is
    ``lowered.cost_analysis()['flops']``. A ``shard_map`` body is already per device in this module (XLA sees it
    with per-device shapes), so only the rest of the module is global.
    """
    import jax

    stage = _lower(fn_or_lowered, args, kwargs)
    if isinstance(stage, jax.stages.Compiled):
        raise TypeError("count_lowered needs a jax.stages.Lowered or a callable, not a Compiled executable "
                        "(its text is the optimized module; use count_matmuls)")
    try:
        text = stage.as_text(dialect="hlo", debug_info=True)   # debug_info keeps metadata op_name
    except TypeError:                                          # older jax: no debug_info keyword
        text = stage.as_text(dialect="hlo")
    return count_hlo_text(text, _cost_flops(stage))
