"""StableHLO read straight from MLIR into the counter's module, so counting a lowered or exported program does not
first convert it to HLO (XLA's conversion and the HLO text took most of the counting time: benchmarks/RESULTS.md).

The module built here is the one :func:`maxflops.xla.hlo_parse.parse_hlo_module` builds from the HLO text of the
same program, as XLA's converter writes it: ``func.func`` -> a computation (``main`` the entry), ``func.call``,
``stablehlo.composite`` and shardy's ``manual_computation`` -> ``call``, ``stablehlo.while`` -> ``while`` over a
tuple with its condition and body as computations, ``stablehlo.case`` / ``if`` -> ``conditional``, an op with several
results -> a tuple and its ``get-tuple-element``s, ``dot_general`` / ``convolution`` / ``chlo.ragged_dot`` /
``custom_call`` with their attributes written as HLO writes them, integer constants with their values (read when
asked), op names from each op's location (the name jax gives it, its named scopes included). Every other op keeps
its operands and result; the scalar regions of reductions, sorts and scatters are not read (they hold no matmul, and
a region that does is refused). ``tests/xla/test_stablehlo.py`` holds the two readers equal, dot for dot, over the
programs the counter's tests use.

A program this reader cannot read raises :class:`Unsupported`; the program counter then converts it to HLO text as
before.
"""

from __future__ import annotations

import json
import re

from .hlo_parse import Computation, Instruction, Module, Shape


class Unsupported(ValueError):
    """A construct this reader does not translate (the counter falls back to XLA's HLO conversion)."""


_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([a-zA-Z][\w]*)")
_INT_TYPE = re.compile(r"(u?)i(\d+)$")
_DTYPES = {"i1": "pred", "f32": "f32", "f64": "f64", "f16": "f16", "bf16": "bf16", "index": "s64"}
_NAME_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)"')
_INTS = re.compile(r"-?\d+")
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2}|.)")
_shape_cache: dict[str, Shape] = {}
_type_cache: dict = {}                                   # MLIR type -> shape, emptied at each read


def _dtype(et: str) -> str:
    if et in _DTYPES:
        return _DTYPES[et]
    m = _INT_TYPE.match(et)
    if m:
        return ("u" if m.group(1) else "s") + m.group(2)
    return et.lower()                                    # f8E4M3FN -> f8e4m3fn, as HLO names it


def shape_of(t) -> Shape:
    """The HLO shape of an MLIR type (a ranked tensor or a token; anything else is Unsupported)."""
    got = _type_cache.get(t)                             # (types are unique in their context: no printing)
    if got is not None:
        return got
    s = str(t)
    got = _shape_cache.get(s)
    if got is not None:
        _type_cache[t] = got
        return got
    m = _TENSOR.match(s)
    if m is not None:
        dims_text, et = m.groups()
        if "?" in dims_text:
            raise Unsupported(f"a dynamic dimension in {s}")
        got = Shape(_dtype(et), tuple(int(d) for d in dims_text.split("x")[:-1]))
    elif "token" in s:
        got = Shape("token")
    else:
        raise Unsupported(f"type {s}")
    _shape_cache[s] = _type_cache[t] = got
    return got


def mlir_string_bytes(body: str) -> bytes:
    """The bytes of an MLIR string literal's body as MLIR prints it: ``\\XX`` a byte in hex, ``\\\\`` and ``\\"``
    themselves, every other character its UTF-8."""
    raw = body.encode("utf-8")
    if b"\\" not in raw:
        return raw
    # Each escape becomes Python's \xXX and Python's decoder (C speed: a kernel's bytecode is mostly escapes)
    # reads them. Scanning left to right, a backslash pair can only be an escaped backslash (a hex escape's second
    # character is a digit), so these replacements never split an escape.
    py = raw.replace(b"\\\\", b"\\5C").replace(b'\\"', b"\\22").replace(b"\\", b"\\x")
    try:
        return py.decode("unicode_escape").encode("latin-1")   # unicode_escape reads other bytes as Latin-1
    except UnicodeDecodeError:                           # a backslash before another character: itself
        out, pos = bytearray(), 0
        for m in _ESCAPE.finditer(body):
            out += body[pos:m.start()].encode("utf-8")
            g = m.group(1)
            out += bytes([int(g, 16)]) if len(g) == 2 else g.encode("utf-8")
            pos = m.end()
        return bytes(out + body[pos:].encode("utf-8"))


def dict_text(backend_config: str) -> str:
    """A custom call's backend config as MLIR prints its dictionary (``{grid_x = 2 : i32, ir = "ML\\EFR..."}``):
    as given, or unwrapped when it comes as a JSON string (HLO text's form)."""
    if backend_config.startswith('"'):
        try:
            return json.loads(backend_config)
        except ValueError:
            pass
    return backend_config


def _unescape(s: str) -> str:
    """An MLIR string literal's body as text (an op's name in its location)."""
    return s if "\\" not in s else mlir_string_bytes(s).decode("utf-8", "replace")


class _Ins(Instruction):
    """An instruction whose shape and op name are read from its MLIR op when asked (most are never asked)."""

    src = None                                           # the MLIR op
    result = None                                        # which of its results this is (None: all of them)

    @property
    def shape(self) -> Shape:
        got = self.__dict__.get("_shape")
        if got is None:
            results = self.src.results
            if self.result is not None:
                got = shape_of(results[self.result].type)
            elif len(results) == 1:
                got = shape_of(results[0].type)
            else:
                got = Shape("tuple", (), tuple(shape_of(r.type) for r in results))
            self.__dict__["_shape"] = got
        return got

    @shape.setter
    def shape(self, v):
        self.__dict__["_shape"] = v

    @property
    def op_name(self) -> str:
        got = self.__dict__.get("_op_name")
        if got is None:
            m = _NAME_LOC.search(str(self.src.location)) if self.src is not None and self.result is None else None
            got = self.__dict__["_op_name"] = _unescape(m.group(1)) if m else ""
        return got


class _Const(_Ins):
    """A constant whose literal (the HLO text of its values, integers only) is written when asked."""

    value = None

    @property
    def raw_args(self) -> str:
        got = self.__dict__.get("_raw")
        if got is None:
            got = self.__dict__["_raw"] = _literal(self.value, self.shape)
        return got

    @raw_args.setter
    def raw_args(self, v):
        self.__dict__["_raw"] = v


def _literal(attr, shape: Shape) -> str:
    """HLO's literal text of an integer (or boolean) dense constant; 'float' for anything else (never read as
    integers by the counter)."""
    from jax._src.lib.mlir import ir

    if not (shape.dtype == "pred" or shape.dtype[:1] in "su" and shape.dtype[1:].isdigit()):
        return "float"
    n = 1
    for d in shape.dims:
        n *= d
    try:
        dense = ir.DenseIntElementsAttr(attr)
    except (TypeError, ValueError):
        return "opaque"
    if dense.is_splat:
        v = dense.get_splat_value()
        v = int(ir.IntegerAttr(v).value) if not isinstance(v, int) else v
        vals = [v] * n
    elif shape.dtype == "pred":
        vals = [int(dense[i]) for i in range(n)]
    else:
        import numpy as np

        vals = np.array(dense).ravel().tolist()
    if shape.dtype == "pred":
        words = ["true" if v else "false" for v in vals]
    else:
        words = [str(v) for v in vals]
    return words[0] if not shape.dims else "{" + ", ".join(words) + "}"


def _ints(attr) -> list[int]:
    """The integers an attribute holds, its type left out: ``array<i64: 2, 1>``, ``dense<[[1, 1]]> : tensor<1x2xi64>``,
    ``1 : i64``, ``[0, 1]``."""
    if attr is None:
        return []
    s = str(attr)
    if s.startswith("array<"):
        s = s[s.index(":") + 1:]
    else:
        s = s.split(" : ", 1)[0]
    return [int(x) for x in _INTS.findall(s)]


def _braced(xs) -> str:
    return "{" + ",".join(str(x) for x in xs) + "}"


# ops whose regions hold scalar code (a reducer, a comparator): not read, but refused if they hold more
_COMPUTES = ("dot", "convolution", "custom_call", "call", "while", "case", "composite", "manual_computation")
_OPCODES = {"stablehlo.dot_general": "dot", "stablehlo.dot": "dot", "stablehlo.convolution": "convolution",
            "chlo.ragged_dot": "ragged-dot", "stablehlo.ragged_dot": "ragged-dot",
            "stablehlo.custom_call": "custom-call", "stablehlo.while": "while", "stablehlo.case": "conditional",
            "stablehlo.if": "conditional", "func.call": "call", "call": "call", "stablehlo.composite": "call",
            "sdy.manual_computation": "call", "stablehlo.broadcast_in_dim": "broadcast",
            "stablehlo.bitcast_convert": "bitcast-convert", "stablehlo.optimization_barrier": "optimization-barrier",
            "stablehlo.get_tuple_element": "get-tuple-element",
            # shardy's annotations pass their operand on (XLA's converter writes them as Sharding custom calls)
            "sdy.sharding_constraint": "copy", "sdy.reshard": "copy", "sdy.propagation_barrier": "copy"}
_RETURNS = {"func.return", "stablehlo.return", "sdy.return", "return"}
_WITH_ATTRS = {"stablehlo.constant", "stablehlo.dot_general", "stablehlo.convolution", "chlo.ragged_dot",
               "stablehlo.ragged_dot", "stablehlo.composite", "stablehlo.compare", "stablehlo.get_tuple_element",
               "func.call", "call"}
_NAMED = re.compile(r"[^A-Za-z0-9_.-]+")


class _Reader:
    def __init__(self, ir):
        self.ir = ir
        self.comps: dict[str, Computation] = {}
        self.names: dict = {}                            # MLIR value -> instruction name
        self.home: dict[str, Instruction] = {}           # instruction name -> instruction (every computation's)
        self.meshes: dict[str, dict[str, int]] = {}      # shardy's meshes: name -> axis sizes
        self.n = 0

    def read(self, module) -> Module:
        ir = self.ir
        _type_cache.clear()
        entry = None
        self.meshes = meshes_of(module)
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not len(op.regions[0].blocks):
                continue                                 # a declaration
            self._computation(name, op.regions[0].blocks[0], tuple_param=False)
            if name == "main":
                entry = name
        if entry is None:
            raise Unsupported("the module has no main function")
        self.comps[entry].is_entry = True
        out = Module(self.comps, entry)
        out.mlir = module                                # instructions read their shapes and names from it lazily
        parts = _ints(module.operation.attributes["mhlo.num_partitions"]) \
            if "mhlo.num_partitions" in module.operation.attributes else []
        out.devices = parts[0] if parts else 1
        return out

    # -- computations ----------------------------------------------------------------------------------------------

    def _name(self, opcode: str) -> str:
        self.n += 1
        return f"{opcode}.{self.n}"

    def _add(self, comp: Computation, ins: Instruction) -> Instruction:
        comp.instructions.append(ins)
        comp.by_name[ins.name] = ins
        self.home[ins.name] = ins
        return ins

    def _computation(self, name: str, block, tuple_param: bool, tuple_return: bool = False) -> Computation:
        comp = Computation(name, False, {}, [], {})
        self.comps[name] = comp
        args = list(block.arguments)
        if tuple_param:                                  # a while's state: one tuple, read element by element
            shapes = tuple(shape_of(a.type) for a in args)
            p = self._add(comp, _Ins(self._name("parameter"), Shape("tuple", (), shapes), "parameter", [], [], {},
                                     "0"))
            for i, a in enumerate(args):
                g = self._add(comp, _Ins(self._name("get-tuple-element"), shapes[i], "get-tuple-element", [p.name],
                                         [p.shape], {"index": str(i)}, p.name))
                self.names[a] = g.name
        else:
            for i, a in enumerate(args):
                p = self._add(comp, _Ins(self._name("parameter"), shape_of(a.type), "parameter", [], [], {}, str(i)))
                self.names[a] = p.name
        for op in block.operations:
            self._op(comp, op.operation, tuple_return)
        return comp

    def _region(self, parent: str, kind: str, region, tuple_param: bool, tuple_return: bool = False) -> str:
        name = f"{parent}.{kind}.{self.n + 1}"
        self._computation(name, region.blocks[0], tuple_param, tuple_return)
        return name

    def _ref(self, comp: Computation, value) -> str:
        """The name of ``value`` as ``comp`` uses it; a constant captured from an enclosing computation is copied
        in (XLA's converter passes captured values in; a constant is what a trip count or a kernel's table needs)."""
        name = self.names.get(value)
        if name is None:
            raise Unsupported("a value used before it is defined")
        if name not in comp.by_name:
            src = self.home.get(name)
            if isinstance(src, _Const):
                copy = _Const(name, None, "constant", [], [], {}, None)
                copy.value, copy.src = src.value, src.src
                comp.instructions.append(copy)
                comp.by_name[name] = copy
        return name

    # -- one op ----------------------------------------------------------------------------------------------------

    def _op(self, comp: Computation, op, tuple_return: bool) -> None:
        ir = self.ir
        mname = op.name
        if mname in _RETURNS:
            names = [self._ref(comp, v) for v in op.operands]
            if len(names) == 1 and not tuple_return:
                ins = comp.by_name.get(names[0])
                if ins is None:
                    ins = self._add(comp, _Ins(self._name("copy"), shape_of(op.operands[0].type), "copy", names,
                                               [None], {}, names[0]))
                ins.is_root = True
            else:
                shapes = tuple(shape_of(v.type) for v in op.operands)
                self._add(comp, _Ins(self._name("tuple"), Shape("tuple", (), shapes), "tuple", names,
                                     list(shapes), {}, ", ".join(names), is_root=True))
            return
        opcode = _OPCODES.get(mname)
        if opcode is None:
            opcode = _OPCODES[mname] = mname.rsplit(".", 1)[-1].replace("_", "-")
        a = op.attributes if mname in _WITH_ATTRS or opcode == "custom-call" else None
        if mname == "stablehlo.composite" and ir.StringAttr(a["name"]).value == "chlo.ragged_dot":
            opcode = "ragged-dot"                        # XLA runs this composite as its ragged-dot, not the
        #                                                  decomposition (a dense dot per group)
        results = op.results
        attrs: dict[str, str] = {}
        operands = [self._ref(comp, v) for v in op.operands]
        operand_shapes: list = []                        # (read where the counter reads them: matmuls, kernels)

        if opcode == "constant":
            ins = _Const("", None, "constant", [], [], attrs, None)
            ins.value = a["value"]
        else:
            if opcode in ("dot", "convolution", "ragged-dot", "custom-call"):
                operand_shapes = [shape_of(v.type) for v in op.operands]
            if mname == "stablehlo.dot_general":
                dn = str(a["dot_dimension_numbers"])
                for side in ("lhs", "rhs"):
                    for key, hlo in (("batching", "batch"), ("contracting", "contracting")):
                        m = re.search(rf"{side}_{key}_dimensions = \[([^\]]*)\]", dn)
                        attrs[f"{side}_{hlo}_dims"] = _braced(_ints(m.group(1)) if m else [])
            elif mname == "stablehlo.dot":
                attrs["lhs_contracting_dims"] = _braced([len(operand_shapes[0].dims) - 1])
                attrs["rhs_contracting_dims"] = "{0}"
            elif opcode == "ragged-dot" and mname == "stablehlo.composite":
                dn = str(ir.DictAttr(a["composite_attributes"])["ragged_dot_dimension_numbers"])
                groups = re.findall(r"dense<([^>]*)>", dn)   # six arrays, in the order of chlo's attribute
                for key, got in zip(("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting", "lhs_ragged",
                                     "rhs_group"), groups):
                    attrs[f"{key}_dims"] = _braced(_ints(got))
            elif opcode == "ragged-dot":
                dn = str(a["ragged_dot_dimension_numbers"])
                for key, hlo in (("lhs_batching", "lhs_batch"), ("rhs_batching", "rhs_batch"),
                                 ("lhs_contracting", "lhs_contracting"), ("rhs_contracting", "rhs_contracting"),
                                 ("lhs_ragged", "lhs_ragged"), ("rhs_group", "rhs_group")):
                    m = re.search(rf"{key}_dimensions = \[([^\]]*)\]", dn)
                    attrs[f"{hlo}_dims"] = _braced(_ints(m.group(1)) if m else [])
            elif opcode == "convolution":
                attrs.update(self._conv_attrs(a, operand_shapes))
            elif opcode == "custom-call":
                attrs["custom_call_target"] = '"' + ir.StringAttr(a["call_target_name"]).value + '"'
                key = "backend_config" if "backend_config" in a else "mhlo.backend_config"  # (typed FFI's)
                if key in a:
                    bc = a[key]
                    try:
                        text = ir.StringAttr(bc).value
                    except (TypeError, ValueError):
                        text = str(bc)                   # a typed FFI call's dictionary
                    attrs["backend_config"] = json.dumps(text)
                if "called_computations" in a:
                    attrs["called_computations"] = _braced(
                        "%" + ir.FlatSymbolRefAttr(c).value for c in ir.ArrayAttr(a["called_computations"]))
            elif opcode == "compare":
                attrs["direction"] = str(a["comparison_direction"]).rstrip(">").split()[-1]
            elif opcode == "get-tuple-element":
                attrs["index"] = str(_ints(a["index"])[0])
            elif mname in ("func.call", "call"):
                attrs["to_apply"] = "%" + ir.FlatSymbolRefAttr(a["callee"]).value
            elif mname == "stablehlo.composite":
                attrs["to_apply"] = "%" + ir.FlatSymbolRefAttr(a["decomposition"]).value
            ins = _Ins("", None, opcode, operands, operand_shapes, attrs, "")
        ins.src = op
        # a kernel named as XLA's converter names it, after the op's name ("pallas_call.12"); the rest after opcodes
        base = _NAMED.sub("_", ins.op_name.rsplit("/", 1)[-1]) if opcode == "custom-call" else ""
        ins.name = self._name(base or opcode)
        if len(op.regions):
            self._regions(comp, ins, mname, list(op.regions), operands)
        self._add(comp, ins)
        if len(results) == 1:
            self.names[results[0]] = ins.name
        else:
            for i, r in enumerate(results):
                g = self._add(comp, _Ins(self._name("get-tuple-element"), None, "get-tuple-element", [ins.name],
                                         [None], {"index": str(i)}, ins.name))
                g.src, g.result = op, i
                self.names[r] = g.name

    def _regions(self, comp: Computation, ins: Instruction, mname: str, regions, operands) -> None:
        if mname == "stablehlo.while":
            t = self._add(comp, _Ins(self._name("tuple"), Shape("tuple", (), tuple(ins.shape.elements) if
                                                               ins.shape.is_tuple else (ins.shape,)),
                                     "tuple", list(operands), [None] * len(operands), {}, ", ".join(operands)))
            if not ins.shape.is_tuple:
                ins.shape = t.shape
            ins.operands, ins.operand_shapes, ins.raw_args = [t.name], [t.shape], t.name
            ins.attrs["condition"] = "%" + self._region(comp.name, "cond", regions[0], True)
            ins.attrs["body"] = "%" + self._region(comp.name, "body", regions[1], True, True)
        elif ins.opcode == "conditional":
            names = [self._region(comp.name, "branch", r, False) for r in regions]
            ins.attrs["branch_computations"] = _braced("%" + n for n in names)
        elif mname == "sdy.manual_computation":
            ins.attrs["to_apply"] = "%" + self._region(comp.name, "manual", regions[0], False)
            self._manual(comp, ins, regions[0].blocks[0])
        else:
            for r in regions:
                for b in r.blocks:
                    for o in b.operations:
                        if any(w in o.operation.name for w in _COMPUTES):
                            raise Unsupported(f"{o.operation.name} inside the region of {mname}")

    def _manual(self, comp: Computation, ins: Instruction, block) -> None:
        """A shard_map body runs on each device of its manual axes (its shapes are a device's along those axes, the
        whole program's along the rest, which XLA partitions as it does any code): ``copies`` is their product. An
        argument split along them reaches each device as its own shard: the call takes a ``manual-shard`` of it (dims
        and pieces in ``splits``), whose value a constant's shards give when they are all equal
        (:func:`maxflops.xla.kernels.constant_values`: a kernel's tables the same on every device)."""
        got = manual_axes(ins.src, self.meshes)
        if got is None:
            return
        ins.attrs["copies"] = str(got[1])
        args = list(block.arguments)
        for i, splits in enumerate(manual_splits(ins.src, self.meshes)):
            splits = [f"{d}:{n}" for d, n in splits]
            if splits:
                src = ins.operands[i]
                shard = self._add(comp, _Ins(self._name("manual-shard"), shape_of(args[i].type), "manual-shard",
                                             [src], [None], {"splits": ",".join(splits)}, src))
                ins.operands[i] = shard.name

    @staticmethod
    def _conv_attrs(a, shapes) -> dict[str, str]:
        labels = str(a["dimension_numbers"])
        labels = labels[labels.index("<") + 1:labels.rindex(">")]
        labels = re.sub(r"[\s,\[]", "", labels).replace("]x", "_").replace("]", "")
        rhs_labels = labels.split("_", 1)[1].split("->")[0]
        spatial = sorted(c for c in rhs_labels if c.isdigit())
        n = len(spatial)
        size = [shapes[1].dims[rhs_labels.index(d)] for d in spatial]

        def get(key, count):
            got = _ints(a[key]) if key in a else []
            if len(got) == 1 and count > 1:              # a splat: dense<0> : tensor<1x2xi64>
                got = got * count
            return got if got else [1 if key != "padding" else 0] * count

        stride, pad = get("window_strides", n), get("padding", 2 * n)
        lhs_d, rhs_d = get("lhs_dilation", n), get("rhs_dilation", n)
        x = "x".join
        window = (f"{{size={x(map(str, size))} pad={x(f'{pad[2 * i]}_{pad[2 * i + 1]}' for i in range(n))} "
                  f"stride={x(map(str, stride))} lhs_dilate={x(map(str, lhs_d))} rhs_dilate={x(map(str, rhs_d))}}}")
        out = {"dim_labels": labels, "window": window}
        for key in ("feature_group_count", "batch_group_count"):
            if key in a:
                out[key] = str(_ints(a[key])[0])
        return out


def meshes_of(module) -> dict[str, dict[str, int]]:
    """shardy's meshes of a module: name -> axis sizes (``sdy.mesh @mesh = <["x"=2, "y"=4]>``)."""
    from jax._src.lib.mlir import ir

    out = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "sdy.mesh":
            axes = re.findall(r'"([^"]+)"\s*=\s*(\d+)', str(op.attributes["mesh"]))
            out[ir.StringAttr(op.attributes["sym_name"]).value] = {k: int(v) for k, v in axes}
    return out


def manual_axes(op, meshes) -> tuple[dict[str, int], int] | None:
    """A shard_map's (``sdy.manual_computation``) manual axes of its mesh and the devices they span; None without
    manual axes."""
    a = op.attributes
    manual = re.findall(r'"([^"]+)"', str(a["manual_axes"])) if "manual_axes" in a else []
    if not manual:
        return None
    used = re.findall(r"<@([\w.$-]+)", str(a["in_shardings"]) + str(a["out_shardings"]))
    mesh = meshes.get(used[0]) if used else (next(iter(meshes.values())) if len(meshes) == 1 else None)
    if mesh is None or any(n not in mesh for n in manual):
        raise Unsupported(f"a shard_map over axes {manual} of a mesh the module does not define")
    copies = 1
    for n in manual:
        copies *= mesh[n]
    return {n: mesh[n] for n in manual}, copies


def manual_splits(op, meshes, results: bool = False) -> list[list[tuple[int, int]]]:
    """For each argument of a shard_map's body, the (dimension, pieces) its operand is split along the manual axes
    (empty: each device gets the whole operand); with ``results``, for each result, the dimensions along which the
    devices' values are joined (empty: every device returns the whole, the same)."""
    got = manual_axes(op, meshes)
    count = len(op.results) if results else len(op.regions[0].blocks[0].arguments)
    out: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    if got is None:
        return out
    manual = got[0]
    key = "out_shardings" if results else "in_shardings"
    texts = re.findall(r"<@[\w.$-]+, \[(.*?)\]>", str(op.attributes[key]))[:count]
    for i, dims_text in enumerate(texts):
        for d, dim in enumerate(re.findall(r"\{([^}]*)\}", dims_text)):
            n = 1
            for axis in re.findall(r'"([^"]+)"', dim):
                n *= manual.get(axis, 1)
            if n > 1:
                out[i].append((d, n))
    return out


def read_module(module) -> Module:
    """The counter's module of an MLIR StableHLO module (``lowered.compiler_ir("stablehlo")``)."""
    from jax._src.lib.mlir import ir

    with module.context:
        return _Reader(ir).read(module)


def read_text(text: str) -> Module:
    """The counter's module of StableHLO text (``exported.mlir_module()``, ``lowered.as_text()``)."""
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir

    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # noqa: BLE001 - MLIR's parse error
            raise Unsupported(f"MLIR cannot parse the text ({str(e).splitlines()[0] if str(e) else e})") from None
        return _Reader(ir).read(module)
