"""A config's model FLOPs as a function of the step's length and batch: traced once, evaluated per count.

For a fixed config, every model figure of a step of full sequences is a linear form in a few statistics of the
step: the tokens L*B, the batch B, the length L, and functions of the length summed over the batch's rows, f(L)*B
(attended pairs, conv taps, the sums a convention's approximation reads). ``trace`` runs the ordinary pricing once
with those statistics as symbols (``Sym``): each component comes out as its coefficients over them, and ``compile``
turns the coefficients into a small function of (L, B). A count at a new length or batch then evaluates that
function instead of pricing every layer kind again: the same Python ints and Fractions, combined exactly, so the
same integers after rounding (``tests/core/test_stepform.py`` holds every shipped config, mode and convention to it).

A symbol refuses every operation that is not linear in the statistics or whose result depends on their values
(the product of two symbols, division, comparison, truth, conversion, hashing), and the statistics' own methods
are the only way to read the step, so a pricing that branches on the step or is not linear in it cannot be traced:
its counts are priced the ordinary way. The one branch on the length the pricing may ask, ``longer_than`` (whether
sequences are longer than a threshold), is taken at the length of the trace and kept as a guard: a form applies at
the lengths on the same side of every threshold, and another length is traced anew.
"""

from __future__ import annotations

import types
from fractions import Fraction

from . import masks
from .breakdown import assemble
from .parameters import parameters
from .components import ATTENTION, ordered
from .config import apply_overrides
from .checks import check_step
from .schema import check_value, coerce
from .resolve import resolve_key
from .sequences import Uniform, batch

TOKENS, COUNT, LENGTH, ONE = ("tokens",), ("count",), ("length",), ("one",)
_SIMPLE = {TOKENS, COUNT, LENGTH, ONE}  # the statistics known from (L, B) alone


class Sym:
    """A linear form over the step's statistics: {basis: coefficient}, coefficients Python ints or Fractions."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict):
        self.terms = terms

    def __add__(self, other):
        if type(other) is Sym:
            out = dict(self.terms)
            for b, k in other.terms.items():
                out[b] = out.get(b, 0) + k
            return Sym(out)
        if _exact(other):
            if not other:
                return self
            out = dict(self.terms)
            out[ONE] = out.get(ONE, 0) + other
            return Sym(out)
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        if _exact(other):
            return Sym({b: k * other for b, k in self.terms.items()})
        return NotImplemented  # a symbol times a symbol (or a float) is not an exact linear form

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        if type(other) is Sym or _exact(other):
            return self + other * -1
        return NotImplemented

    def __rsub__(self, other):
        if _exact(other):
            return self * -1 + other
        return NotImplemented

    def _refuse(self, *args):
        raise TypeError("the step's length or batch used other than linearly: this pricing is not traced")

    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _refuse
    __divmod__ = __rdivmod__ = __pow__ = __rpow__ = __abs__ = __pos__ = _refuse
    __bool__ = __int__ = __float__ = __index__ = __round__ = __trunc__ = __floor__ = __ceil__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _refuse


def _exact(x) -> bool:
    return type(x) is int or type(x) is Fraction or type(x) is bool


class _Seqs:
    """The step's rows as symbols, for one trace (``maxflops.sequences.Uniform``'s interface)."""

    def __init__(self, length: int, guards: list):
        self._length, self._guards, self._wholes = length, guards, {}
        self.count, self.tokens, self.length = Sym({COUNT: 1}), Sym({TOKENS: 1}), Sym({LENGTH: 1})

    def sum(self, f):
        return Sym({("sum", _frozen(f, 0)): 1})

    sum_scalar = sum

    def exact_pairs(self, mixer, span):
        return Sym({("pairs", mixer, span): 1})

    def whole(self, f, *args):
        """A figure of the whole step (a peer's batch-level rule): one basis, ``f`` of each step's sequences and of
        ``args`` (plain values, or forms in the tokens, batch and length alone, evaluated at each step)."""
        for a in args:
            if type(a) is Sym and not a.terms.keys() <= _SIMPLE:
                raise TypeError("a whole-step figure of a summed statistic: not traced")
            if type(a) is not Sym:
                _held(a, 0)
        f = _frozen(f, 0)
        # the same rule of the same values is one basis (several layer kinds ask it): computed once per count. Only
        # a module-level function of exact values (ints, strings, Fractions: each with its type) is matched; any
        # other is a basis of its own
        try:
            same = (f.__code__, f.__globals__["__name__"], f.__closure__ is None and f.__defaults__ is None,
                    tuple(tuple((b, _typed(k)) for b, k in a.terms.items()) if type(a) is Sym else _typed(a)
                          for a in args))
            if f.__closure__ is not None or f.__defaults__ is not None:
                raise TypeError
        except TypeError:
            same = None
        basis = None if same is None else self._wholes.get(same)
        if basis is None:
            basis = _Whole(f, args)
            if same is not None:
                self._wholes[same] = basis
        return Sym({basis: 1})

    def longer_than(self, threshold):
        longer = self._length > threshold
        self._guards.append((threshold, longer))
        return self if longer else None


class _Whole:
    """The basis of a whole-step figure: ``f(Uniform(L, B), *args)`` (compared by identity: one per call)."""

    __slots__ = ("f", "args")

    def __init__(self, f, args: tuple):
        self.f, self.args = f, args

    def __getitem__(self, i):  # reads like the tuple bases: [0] is its kind
        return ("whole", self.f)[i]


def trace(price, c, length_key: str, length: int):
    """(guards, rows, head) of ``price(c, seqs)`` -> (rows, head) with the step's statistics as symbols and
    ``c``'s length key and batch as symbols too; None where the pricing is not a linear form in them."""
    guards: list = []
    seqs = _Seqs(length, guards)
    traced = {**c, length_key: seqs.length, "per_device_batch_size": seqs.count}
    try:
        rows, head = price(traced, seqs)
    except Exception:  # noqa: BLE001 - any refusal means: not traceable (the ordinary path prices it, or raises)
        return None
    for part in (*rows, head):
        for v in part.values():
            if not (type(v) is Sym or _exact(v)):
                return None
    return guards, rows, head


def _frozen(f, depth: int):
    """``f`` with the values its closure holds now: the ordinary path calls a summed function at once, the form
    later, after the pricing may have rebound a variable the function reads (Python closures read variables, not
    values). Only plain values are held (numbers, strings, tuples of them, functions frozen the same way); a
    closure over anything else, or over a symbol, is refused (not traceable)."""
    if depth > 4 or not isinstance(f, types.FunctionType) or f.__kwdefaults__:
        raise TypeError("a summed function the step form cannot freeze: not traced")
    cells = tuple(types.CellType(_held(cell.cell_contents, depth)) for cell in f.__closure__ or ())
    defaults = tuple(_held(x, depth) for x in f.__defaults__ or ()) or None
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, defaults, cells or None)


def _held(x, depth: int):
    if x is None or type(x) in _PLAIN:
        return x
    if type(x) is tuple:
        return tuple(_held(v, depth + 1) for v in x)
    if isinstance(x, types.FunctionType):
        return _frozen(x, depth + 1)
    if isinstance(x, (types.BuiltinFunctionType, types.ModuleType)):
        return x
    raise TypeError(f"a summed function holds a {type(x).__name__}: not traced")


_PLAIN = {int, bool, str, Fraction}  # (a float could round differently once coefficients are multiplied first)


def _typed(x):
    """``x`` with its type, for matching rules: exact values only (TypeError for any other)."""
    if type(x) in _PLAIN or x is None:
        return type(x), x
    if type(x) is tuple:
        return tuple, tuple(_typed(v) for v in x)
    raise TypeError(type(x).__name__)


def _exact_value(v):
    """A summed or whole-step figure at a step, checked exact (an int or a Fraction) before the form uses it."""
    if type(v) is int or type(v) is Fraction:
        return v
    raise NotExact(f"a step form's statistic came out as a {type(v).__name__}")


class NotExact(ArithmeticError):
    """A form met a statistic that is not an exact number: the count falls back to the ordinary pricing."""


def compile_form(rows: list, head: dict, multiplicity: tuple, mtp: tuple, whole_batch: bool):
    """A function (L, B) -> (rows, head, components, learnable-weight, attention) of a count: the traced
    coefficients times the statistics at L and B, each component rounded as ``count`` rounds it (per row, to the
    FLOP, half to even), then summed as ``maxflops.breakdown`` sums rows: ``multiplicity[i]`` rows of kind i, MTP
    rows (``mtp[i]``) into 'mtp', components in report order. ``whole_batch``: B is an int (an integer
    coefficient times an integer statistic needs no rounding), else every figure is rounded."""
    bases: dict = {}
    ns: dict = {"pairs": masks.pairs, "_r": _round, "Uniform": Uniform, "_x": _exact_value}

    def name(basis) -> str:
        if basis not in bases:
            j = bases[basis] = len(bases)
            if basis[0] in ("sum", "whole"):
                ns[f"f{j}"] = basis[1]
        return f"b{bases[basis]}"

    def simple(v) -> str:  # a whole-step figure's argument at (L, B)
        if type(v) is not Sym:
            return const(v)
        stat = {TOKENS: "(L * B)", COUNT: "B", LENGTH: "L", ONE: "1"}
        return "(" + " + ".join(f"{const(k)} * {stat[b]}" for b, k in v.terms.items()) + ")" if v.terms else "0"

    def const(k) -> str:
        if type(k) is int:
            return repr(k)
        n = f"k{len(ns)}"
        ns[n] = k
        return n

    def expr(v) -> str:
        if type(v) is not Sym:
            return const(v) if type(v) is int else f"_r({const(v)})"
        text = " + ".join(f"{const(k)} * {name(b)}" for b, k in v.terms.items()) or "0"
        whole = whole_batch and all(type(k) is not Fraction and b[0] not in ("sum", "whole")
                                    for b, k in v.terms.items())
        return text if whole else f"_r({text})"

    body, parts, sums, att_parts = [], [], {}, []
    for i, part in enumerate((*rows, head)):
        is_head = i == len(rows)
        n = 1 if is_head else multiplicity[i]
        names = []
        for j, (k, v) in enumerate(part.items()):
            body.append(f"    v{i}_{j} = {expr(v)}")
            names.append((k, f"v{i}_{j}"))
            key = "mtp" if not is_head and mtp[i] else k
            sums.setdefault(key, []).append(f"{n} * v{i}_{j}" if n != 1 else f"v{i}_{j}")
            if key == "mtp" and k in ATTENTION:
                att_parts.append(f"{n} * v{i}_{j}")
        parts.append("{" + ", ".join(f"{k!r}: {v}" for k, v in names) + "}")
    order = ordered(dict.fromkeys(sums))  # the report order (and every name declared, or an error naming it)
    for k in order:
        if k in ATTENTION:
            att_parts.append(f"c{list(order).index(k)}")
    lines = ["def form(L, B):"]
    for basis, j in bases.items():
        if basis == TOKENS:
            lines.append(f"    b{j} = L * B")
        elif basis == COUNT:
            lines.append(f"    b{j} = B")
        elif basis == LENGTH:
            lines.append(f"    b{j} = L")
        elif basis == ONE:
            lines.append(f"    b{j} = 1")
        elif basis[0] == "sum":
            lines.append(f"    b{j} = _x(f{j}(L)) * B")
        elif basis[0] == "whole":
            lines.append(f"    b{j} = _x(f{j}(Uniform(L, B){''.join(', ' + simple(a) for a in basis.args)}))")
        else:
            lines.append(f"    b{j} = pairs({basis[1]!r}, {basis[2]!r}, L) * B")
    lines += body
    for m, k in enumerate(order):
        lines.append(f"    c{m} = {_sum(sums[k])}")
    lines.append(f"    attention = {_sum(att_parts)}")
    comps = "{" + ", ".join(f"{k!r}: c{m}" for m, k in enumerate(order)) + "}"
    total = _sum([f"c{m}" for m in range(len(order))])
    lines.append(f"    return [{', '.join(parts[:-1])}], {parts[-1]}, {comps}, {total} - attention, attention")
    exec(compile("\n".join(lines), "<maxflops step form>", "exec"), ns)  # noqa: S102 - our own generated code
    return ns["form"]


def _sum(terms: list) -> str:
    """A sum in generated code: a few terms chained, many as sum() over a tuple (a chain of thousands of '+' nests
    too deep for the compiler)."""
    if not terms:
        return "0"
    return " + ".join(terms) if len(terms) <= 16 else f"sum(({', '.join(terms)},))"


def _round(v):
    return v if type(v) is int else round(v)


def applies(guards, length: int) -> bool:
    return all((length > t) == longer for t, longer in guards)


# --- the step form serving a count: the glue between maxflops.account and the traced forms ----------------------

class _Forms:
    """A base config's traced step forms: (guards, traced, compiled forms by whole batch) by the lengths they
    apply to; empty until a second count of the config at a new step (a config counted once is not traced), False
    where its pricing is not traceable."""

    __slots__ = ("forms",)

    def __init__(self):
        self.forms = []


_FORMS: dict = {}


def step_count(key, price_step, hardware_parts):
    """The Breakdown of the call ``key`` (maxflops.resolve.call_key) from its base config's step form, when its
    overrides are the step's length and batch alone and the form applies; None otherwise (the ordinary path prices
    it). ``price_step(c, plan, seqs, decode, steps)`` is the ordinary pricing of full rows, unrounded (what is
    traced); ``hardware_parts(c, seqs, tokens, packed, steps)`` the hardware side, built on first use."""
    base, typed = key
    c, plan = resolve_key((base, ()))
    if c["prompt_tokens"]:  # (the layers' length is not the step's: priced the ordinary way)
        return None
    mode = c["mode"]
    decode = mode == "decode"
    length_key = "decode_kv_length" if decode else "max_target_length"
    given = {}
    for k, _, v in typed:
        if k != length_key and k != "per_device_batch_size":
            return None
        given[k] = v
    state = _FORMS.get(base)
    if state is None:
        if len(_FORMS) >= 64:
            _FORMS.clear()
        _FORMS[base] = _Forms()
        return None
    if state.forms is False:
        return None
    for k, v in given.items():  # checked as apply_overrides checks them
        given[k] = v = coerce(k, v)
        check_value(k, v)
    step = {"mode": mode, "max_target_length": c["max_target_length"], "num_devices": c["num_devices"],
            "per_device_batch_size": c["per_device_batch_size"], **given}
    check_step(step)
    L, B = given.get(length_key, c[length_key]), batch(step)
    steps = c["gradient_accumulation_steps"] if mode == "train" else 1
    whole = type(B) is int
    for guards, traced, forms in state.forms:
        if applies(guards, L):
            break
    else:
        traced = trace(lambda cs, seqs: price_step(cs, plan, seqs, decode, steps), c, length_key, L)
        if traced is None or len(state.forms) >= 8:  # (past 8 forms: lengths on many sides of many thresholds)
            state.forms = False if traced is None else state.forms
            return None
        guards, forms = traced[0], {}
        state.forms.append((guards, traced, forms))
    form = forms.get(whole)
    try:
        if form is None:
            form = forms[whole] = compile_form(traced[1], traced[2], plan.multiplicity,
                                               tuple(k.mtp for k in plan.kinds), whole)
        rows, head, components, learnable, attention = form(L, B)
    except (NotExact, RecursionError, MemoryError):  # a form that cannot serve: the ordinary pricing
        state.forms = False
        return None
    tokens = B if decode else L * B

    def hardware():
        return hardware_parts(apply_overrides(c, given), Uniform(L, B), tokens, False, steps)

    return assemble(c["model_name"], mode, c["convention"], _round(tokens * steps), components, learnable,
                    attention, (plan, rows, head, hardware, lambda: parameters(apply_overrides(c, given))),
                    c["not_priced"])
