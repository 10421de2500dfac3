"""HLO text -> computations and instructions: the parser behind ``maxflops.xla.hlo`` (a string-aware bracket
scanner, shapes, attributes, instructions, computations)."""

from __future__ import annotations

import dataclasses
import re

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
_STRING_TAIL = re.compile(r'(?:[^"\\]|\\.)*"')


def _open_string(line: str, in_string: bool) -> bool:
    """Whether a string literal is still open at the end of ``line`` (``in_string``: one was open at its start)."""
    if not in_string and '"' not in line:
        return False
    if in_string:                                        # where the open string closes, if it does
        m = _STRING_TAIL.match(line)
        if m is None:
            return True
        line = line[m.end():]
    return '"' in _STRING_RE.sub("", line)


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


# the characters that matter to bracket matching and splitting: a string literal (to its end) or a bracket or comma
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[()\[\]{},]')


def _match_bracket(s: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``s[start]`` (string-literal aware)."""
    depth = 0
    for m in _TOKENS.finditer(s, start):
        c = m.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return m.end()
    raise ValueError(f"unbalanced brackets in HLO text: {s[start:start + 200]!r}")


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split ``s`` at ``sep`` characters that are outside brackets and string literals; strip the pieces."""
    parts = []
    cur_start = 0
    if sep == ",":                                       # (the common case: a regex over the few characters that
        depth = 0                                        # matter, not a loop over every character)
        for m in _TOKENS.finditer(s):
            c = m.group()
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(s[cur_start:m.start()].strip())
                cur_start = m.end()
    else:
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
    in_string = False
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
        if not line.strip() and not in_string:
            continue
        buf.append(line.strip() if not in_string else line)
        if _open_string(line, in_string):                # a string attribute printed over several lines
            in_string = True                             # (a kernel's metadata JSON): join until it closes
            continue
        if in_string:
            in_string = False
            depth = _depth_delta(" ".join(buf))
        else:
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


def operand_shape(comp: Computation, ins: Instruction, i: int) -> Shape:
    """The shape of operand ``i`` of ``ins``: as the instruction prints it, else its producer's in ``comp``."""
    if i < len(ins.operand_shapes) and ins.operand_shapes[i] is not None:
        return ins.operand_shapes[i]
    return comp.shape_of(ins.operands[i])
