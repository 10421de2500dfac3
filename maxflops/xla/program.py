"""The program counter: the FLOPs of a JAX program as it runs, custom kernels included, from any stage of it.

    from maxflops.xla import count_program
    c = count_program(train_step, state, batch)                 # jit, lower, compile here: what runs on this machine
    c = count_program(train_step, state, batch, platform="tpu")  # the TPU program, from a CPU machine (jax.export)
    c = count_program(jax.export.export(jitted, platforms=["tpu"])(*specs))   # an Exported
    c = count_program(jitted.lower(*args))  /  count_program(compiled)
    print(c.summary())

What is counted: every ``dot`` and ``convolution`` once per execution (while loops times their trip counts: a
scanned 64-layer stack counts 64 layers, where XLA's ``cost_analysis()`` counts one), cuBLAS / cuDNN library matmuls
from their dimension numbers, and every Pallas TPU kernel from its own code over its own grid and block tables (a
block splash attention skips costs nothing; see :mod:`maxflops.xla.mosaic`). A custom call that computes and has no
price is listed in ``not_counted`` with the reason, never a silent 0. ``cost_analysis`` is XLA's own figure beside it
(None where the program cannot be compiled here, e.g. a TPU program on a CPU machine).

Which module: a ``Compiled`` is counted as it runs (optimized, per device under SPMD); a ``Lowered``, an
``Exported`` and ``platform=`` count the module before XLA's optimizations (global shapes unless the program is
already per device, e.g. a ``shard_map`` body; ``jax.checkpoint`` recompute visible). Matmuls are the same dots in
both; a callable with no ``platform`` is compiled here and counted as it runs. A lowered or exported module is read
from its StableHLO (:mod:`maxflops.xla.stablehlo`), a compiled one from its HLO text.
"""

from __future__ import annotations

import dataclasses
import functools

from .hlo_count import MatmulCount, count_module
from .hlo_parse import parse_hlo_module


@dataclasses.dataclass(frozen=True)
class ProgramCount:
    """The FLOPs of one program run (one step): matmuls and priced kernels, what is not counted, XLA's figure."""

    count: MatmulCount
    stage: str                         # "compiled", "lowered" or "exported"
    platforms: tuple[str, ...]         # what the program was built for
    stage_obj: object = dataclasses.field(default=None, repr=False, compare=False)  # asked for XLA's figure
    devices: int = 1                   # a lowered or exported program's device count (its module is the whole program's)

    @functools.cached_property
    def cost_analysis(self) -> float | None:
        """XLA's ``cost_analysis()['flops']`` of that module (None: not available here, e.g. a TPU program on a CPU
        machine); asked on first use (for a Lowered it converts the module again)."""
        return None if self.stage_obj is None else _cost(self.stage_obj)

    @property
    def flops(self) -> int:
        """Matmul FLOPs per run: XLA's dots and library matmuls, loop-aware, plus the priced kernels."""
        return self.count.matmul_flops

    @property
    def kernel_flops(self) -> int:
        return self.count.kernel_flops

    @property
    def kernels(self):
        return self.count.kernels

    @property
    def not_counted(self):
        return self.count.not_counted

    def by_scope(self, names, innermost: bool = False) -> dict[str, int]:
        return self.count.by_scope(names, innermost)

    def summary(self) -> str:
        c = self.count
        ew = c.elementwise_dot_flops
        lines = [f"{self.stage} program for {', '.join(self.platforms) or '?'}: {self.flops:,} FLOPs per run "
                 f"(matmuls {self.flops - self.kernel_flops:,}" + (f", of which elementwise work written as dots "
                                                                   f"{ew:,}" if ew else "")
                 + f"; kernels {self.kernel_flops:,})"]
        if self.devices > 1:
            lines.append(f"  {self.stage} for {self.devices} devices: the module before SPMD partitioning, so these are "
                         "the whole program's FLOPs, a shard_map body counted once for each device that runs it "
                         "(count the Compiled on the devices for per-device figures)")
            if self.flops % self.devices == 0:
                lines.append(f"  per device where the work splits evenly: {self.flops // self.devices:,}")
        for d in c.kernels:
            lines.append(f"  kernel {d.name} x{d.multiplier}: {d.flops * d.multiplier:,} ({d.note})")
        for d in c.not_counted:
            lines.append(f"  NOT COUNTED {d.name} x{d.multiplier}: {d.note}")
        if self.cost_analysis is None:
            lines.append("  XLA cost_analysis: not available for this stage here")
        else:
            diff = []
            if c.naive_matmul_flops != c.matmul_flops:
                diff.append("it counts each loop body once")
            if c.kernel_flops:
                diff.append("it prices custom kernels by their own estimate or as nothing")
            lines.append(f"  XLA cost_analysis: {self.cost_analysis:,.0f} (elementwise work included"
                         + ("; " + "; ".join(diff) if diff else "") + ")")
        return "\n".join(lines)


def reconcile(breakdown, program) -> list[tuple[str, int, int]]:
    """Per component, (name, analytic hardware FLOPs, the program's FLOPs under that named scope): the program's
    matmuls go to the innermost scope named after a component (``jax.named_scope("mlp")``, a Flax module named so),
    the rest to ``other``. ``breakdown``: ``maxflops.count(config)``; ``program``: a ``ProgramCount`` or
    ``MatmulCount``."""
    from .cli import scopes

    names = scopes()
    count = getattr(program, "count", program)
    got = count.by_scope(names, innermost=True)
    want = breakdown.by_kind(hardware=True)
    rows = [(k, want.get(k, 0), got.get(k, 0)) for k in names if want.get(k) or got.get(k)]
    if got.get("other"):
        rows.append(("other", 0, got["other"]))
    return rows


def _print_options():
    from jaxlib import _hlo

    o = _hlo.HloPrintOptions()
    o.print_large_constants = True                       # a kernel's block tables are constants of the program
    return o


def _stablehlo_to_hlo_text(mlir_text: str) -> str:
    from jax._src.lib import xla_client as xc

    comp = xc._xla.mlir.mlir_module_to_xla_computation(mlir_text, use_tuple_args=False, return_tuple=False)
    return comp.get_hlo_module().to_string(_print_options())


def _cost(stage) -> float | None:
    try:
        ca = stage.cost_analysis()
    except Exception:  # noqa: BLE001 - not every backend implements it
        return None
    if isinstance(ca, (list, tuple)):
        ca = ca[0] if ca else None
    return None if ca is None else float(ca.get("flops", 0.0))


def program_module(obj, *args, platform: str | None = None, **kwargs):
    """(the counter's module, stage, platforms, the stage XLA's cost analysis can be asked of, or None) of a
    callable, Lowered, Compiled or Exported. A lowered or exported program is read from its StableHLO
    (:mod:`maxflops.xla.stablehlo`); a compiled one, and a StableHLO program that reader refuses, from HLO text."""
    import jax
    from jax import export as jex

    from . import stablehlo

    if isinstance(obj, jex.Exported) and not (args or kwargs or platform):
        try:
            return stablehlo.read_text(obj.mlir_module()), "exported", tuple(obj.platforms), obj
        except stablehlo.Unsupported:
            pass
    elif isinstance(obj, jax.stages.Lowered) and not (args or kwargs or platform):
        try:
            return stablehlo.read_module(obj.compiler_ir("stablehlo")), "lowered", (jax.default_backend(),), obj
        except stablehlo.Unsupported:
            pass
    elif callable(obj) and not isinstance(obj, (jex.Exported, jax.stages.Lowered, jax.stages.Compiled)) and platform:
        fn = obj if hasattr(obj, "lower") else jax.jit(obj)
        return program_module(_export(fn, platform, _specs(args, kwargs)))
    text, stage, platforms, stage_obj = program_text(obj, *args, platform=platform, **kwargs)
    return parse_hlo_module(text), stage, platforms, stage_obj


def _specs(args, kwargs):
    import jax

    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=getattr(x, "sharding", None))
                        if hasattr(x, "shape") and hasattr(x, "dtype") else x, (args, kwargs))


def program_text(obj, *args, platform: str | None = None, **kwargs) -> tuple[str, str, tuple, object]:
    """(HLO text with its constants, stage, platforms, the stage XLA's cost analysis can be asked of, or None) of a
    callable, Lowered, Compiled or Exported."""
    import jax
    from jax import export as jex

    if isinstance(obj, jex.Exported):
        if args or kwargs or platform:
            raise TypeError("count_program: an Exported takes no arguments and no platform (it has its own)")
        return _stablehlo_to_hlo_text(obj.mlir_module()), "exported", tuple(obj.platforms), obj
    if isinstance(obj, jax.stages.Compiled):
        if args or kwargs or platform:
            raise TypeError("count_program: a Compiled takes no arguments and no platform")
        text = obj.runtime_executable().hlo_modules()[0].to_string(_print_options())
        return text, "compiled", (jax.default_backend(),), obj
    if isinstance(obj, jax.stages.Lowered):
        if args or kwargs or platform:
            raise TypeError("count_program: a Lowered takes no arguments and no platform")
        text = obj.compiler_ir("hlo").get_hlo_module().to_string(_print_options())
        return text, "lowered", (jax.default_backend(),), obj
    if not callable(obj):
        raise TypeError(f"count_program takes a function, jax.stages.Lowered, jax.stages.Compiled or "
                        f"jax.export.Exported; got {type(obj).__name__}")
    fn = obj if hasattr(obj, "lower") else jax.jit(obj)
    if platform:
        return program_text(_export(fn, platform, _specs(args, kwargs)))
    return program_text(fn.lower(*args, **kwargs).compile())


def _export(fn, platform: str, specs):
    """``jax.export`` for ``platform``. A program is exported here to be counted, never stored to run later, so the
    custom calls jax promises no stability for (cuDNN's fused attention, ...) are let through by name."""
    import re

    from jax import export as jex

    allowed: list = []
    for _ in range(64):
        try:
            return jex.export(fn, platforms=[platform], disabled_checks=allowed)(*specs[0], **specs[1])
        except ValueError as e:
            found = set(re.findall(r"custom_call @([^\s(]+)\(", str(e))) - {c.is_custom_call() for c in allowed}
            if "no compatibility guarantees" not in str(e) or not found:
                raise
            allowed += [jex.DisabledSafetyCheck.custom_call(t) for t in sorted(found)]
    raise RuntimeError("count_program: export kept refusing custom calls")


def count_program(obj, *args, platform: str | None = None, megablox_group_sizes="balanced",
                  splash_mask="causal", segment_ids="one_document", **kwargs) -> ProgramCount:
    """Count one run of a JAX program: a callable (with its arguments, or their ``jax.ShapeDtypeStruct``s), a
    ``jax.stages.Lowered``, a ``jax.stages.Compiled`` or a ``jax.export.Exported``.

    ``platform`` ("tpu", "cuda", "rocm", "cpu"): export the callable for that platform and count that program, so a
    TPU or GPU program can be counted on a CPU machine (its Pallas kernels lower as the chip runs them).

    ``megablox_group_sizes``: the rows per group of megablox's grouped matmuls (a MoE's tokens per expert), which the
    step computes at run time: ``"balanced"`` (the default, said in each kernel's note), a list of ints (one per
    group; the step's own routing), or None (those kernels not counted). See :mod:`maxflops.xla.megablox`.

    ``splash_mask``: the tiles a dynamic-mask splash (tokamax's, over DSA's top-k mask) finds active, which the step
    computes at run time: ``"causal"`` (the default: every causally visible tile, said in each kernel's note), the
    step's own [q, kv] boolean mask, or None (not counted). See :mod:`maxflops.xla.splash_dynamic`.

    ``segment_ids``: the batch's segment ids, where a kernel's tables are pruned by them in the program (tokamax's
    static-mask splash with packed rows): ``"one_document"`` (the default: each row one document, no tile pruned, said
    in each kernel's note), the batch's own ids (an int array of the program input's shape, or one row), or None (not
    counted). The program's own ops build the tables from them (:mod:`maxflops.xla.fold`).
    """
    from .kernels import RunTimeInputs

    inputs = RunTimeInputs(megablox_group_sizes, splash_mask, segment_ids)
    module, stage, platforms, stage_obj = program_module(obj, *args, platform=platform, **kwargs)
    devices = getattr(stage_obj, "nr_devices", None) or getattr(module, "devices", 1)
    return ProgramCount(count_module(module, report=True, inputs=inputs), stage, platforms,
                        stage_obj if stage != "exported" else None, devices)


def count_file(path: str, *, megablox_group_sizes="balanced", splash_mask="causal",
               segment_ids="one_document") -> ProgramCount:
    """Count a program saved to a file: ``Exported.serialize()`` bytes, StableHLO text (``lowered.as_text()``,
    ``exported.mlir_module()``) or HLO text (``compiled.as_text()``; large constants printed, for kernels' tables).
    The run-time inputs as :func:`count_program` takes them."""
    import pathlib

    from .kernels import RunTimeInputs

    inputs = RunTimeInputs(megablox_group_sizes, splash_mask, segment_ids)
    data = pathlib.Path(path).read_bytes()
    head = data[:4096].decode("utf-8", "replace")
    if "HloModule" in head:
        text = data.decode("utf-8")
        return ProgramCount(count_module(parse_hlo_module(text), report=True, inputs=inputs), "hlo text", ())
    if "func.func" in head or head.lstrip().startswith(("module", "#loc")):
        from . import stablehlo

        text = data.decode("utf-8")
        try:
            module = stablehlo.read_text(text)
        except stablehlo.Unsupported:
            module = parse_hlo_module(_stablehlo_to_hlo_text(text))
        return ProgramCount(count_module(module, report=True, inputs=inputs), "stablehlo text", (),
                            devices=getattr(module, "devices", 1))
    from jax import export as jex

    try:
        exported = jex.deserialize(bytearray(data))
    except ImportError as e:                             # jax reads its serialization with the flatbuffers package
        raise ValueError(f"{path}: reading a serialized jax.export.Exported needs the flatbuffers package ({e}); or "
                         "save exported.mlir_module() as text and count that") from None
    except Exception as e:  # noqa: BLE001 - anything else is not a program this reads
        raise ValueError(f"{path}: neither HLO text, StableHLO text nor a serialized jax.export.Exported "
                         f"({e})") from None
    return count_program(exported, megablox_group_sizes=megablox_group_sizes, splash_mask=splash_mask,
                         segment_ids=segment_ids)


_INPUT_FLAGS = {"--segment-ids": "segment_ids", "--splash-mask": "splash_mask",
                "--group-sizes": "megablox_group_sizes"}
_WORDS = {"segment_ids": ("one_document",), "splash_mask": ("causal",), "megablox_group_sizes": ("balanced",)}


def _input_flag(flag: str, text: str):
    """A run-time input as the command line gives it: a word the counter takes ('one_document', 'causal',
    'balanced'), 'none', integers joined by commas (group sizes, or one row of segment ids), or a .npy file."""
    key = _INPUT_FLAGS[flag]
    if text in _WORDS[key]:
        return text
    if text == "none":
        return None
    if text.endswith(".npy"):
        import numpy as np

        try:
            return np.load(text, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"{flag}: cannot read {text!r} as a numpy array ({e})") from None
    if key != "splash_mask" and all(part.strip().isdigit() for part in text.split(",")):
        return [int(part) for part in text.split(",")]
    words = ", ".join(repr(w) for w in _WORDS[key] + ("none",))
    raise ValueError(f"{flag}: {text!r} is not {words}, " + ("" if key == "splash_mask" else
                                                            "integers joined by commas, ") + "or a .npy file")


def main(argv=None) -> int:
    """``python -m maxflops.xla.program FILE [--json] [--segment-ids=..] [--splash-mask=..] [--group-sizes=..]``:
    count a saved program (see :func:`count_file`). The run-time inputs: ``--segment-ids`` 'one_document' (the
    default), 'none', one row's ids joined by commas, or a .npy file of the program input's shape;
    ``--splash-mask`` 'causal' (the default), 'none' or a .npy file of the [q, kv] mask; ``--group-sizes``
    'balanced' (the default), 'none', or each group's rows joined by commas (or a .npy file)."""
    import json
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or any(a in ("-h", "--help") for a in argv):
        print(main.__doc__ + "\n\n" + count_file.__doc__)
        return 0 if argv else 2
    as_json = "--json" in argv
    inputs, paths = {}, []
    try:
        for a in argv:
            flag, eq, value = a.partition("=")
            if flag in _INPUT_FLAGS:
                if not eq or not value:
                    raise ValueError(f"{flag}: give a value ({flag}=...)")
                inputs[_INPUT_FLAGS[flag]] = _input_flag(flag, value)
            elif a.startswith("--") and a != "--json":
                raise ValueError(f"unknown flag {a!r} (flags: --json, {', '.join(_INPUT_FLAGS)})")
            elif a != "--json":
                paths.append(a)
    except ValueError as e:
        print(f"maxflops.xla.program: error: {e}", file=sys.stderr)
        return 2
    if len(paths) != 1:
        print("maxflops.xla.program: error: give one program file", file=sys.stderr)
        return 2
    try:
        c = count_file(paths[0], **inputs)
    except (OSError, ValueError) as e:
        print(f"maxflops.xla.program: error: {e}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps({"stage": c.stage, "platforms": list(c.platforms), "flops": c.flops,
                          "kernel_flops": c.kernel_flops, "cost_analysis": c.cost_analysis, "devices": c.devices,
                          "kernels": [dict(name=d.name, flops=d.flops, times=d.multiplier, note=d.note)
                                      for d in c.kernels],
                          "not_counted": [dict(name=d.name, times=d.multiplier, note=d.note)
                                          for d in c.not_counted]}, indent=1))
    else:
        print(c.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
