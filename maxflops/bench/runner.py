"""Running the cases: the peak, the mesh, compile, count (XLA's loop-aware matmuls), time; a row per case."""

from __future__ import annotations

import math
import platform
import statistics
import sys
import time
import traceback

from . import cases as _cases
from .cases import PRESETS, QUICK
from .output import _short


def _count(fn, args, module, div):
    """(compiled, XLA's loop-aware matmul FLOPs per device): the optimized module is per device already; the
    lowered one is global, so it is divided by the devices sharing the work. A row of custom kernels XLA cannot
    count ('none') is counted by the program counter (Pallas TPU kernels from their own code); None where one of
    its custom calls has no price."""
    from ..xla.hlo import count_lowered, count_matmuls
    from ..xla.program import count_program

    lowered = fn.lower(*args)
    compiled = lowered.compile()
    if module == "none":
        counted = count_program(compiled)
        return compiled, None if counted.not_counted else counted.flops
    if module == "lowered":
        return compiled, count_lowered(lowered).matmul_flops // div
    return compiled, count_matmuls(compiled).matmul_flops


def _keep_program(name: str, compiled) -> None:
    """A custom-kernel row's compiled program (HLO text, constants printed) added to ``programs.zip`` in the run's
    output folder (``MAXFLOPS_BENCH_OUT``), one archive for every row: commit it as
    ``benchmarks/device_programs/<device kind>.zip`` and the tests price the kernels of what the device compiled."""
    import os
    import pathlib
    import re
    import zipfile

    from ..xla.program import program_text

    folder = os.environ.get("MAXFLOPS_BENCH_OUT")
    if not folder:
        return
    pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
    text = program_text(compiled)[0]                    # the HLO text the counter reads, constants printed
    with zipfile.ZipFile(pathlib.Path(folder) / "programs.zip", "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr(re.sub(r"[^A-Za-z0-9.]+", "_", name).strip("_") + ".hlo", text)


def _counted_for_tpu(case) -> dict:
    """A TPU-only Pallas row on a CPU machine: its TPU program lowered here (jax.export) and counted, its Pallas
    kernels priced from their own code, against the engine's figure; not timed."""
    from ..xla.program import count_program

    model, hardware = case.analytic()
    fn, fargs, _ = case.run(None)
    counted = count_program(fn, *fargs, platform="tpu")
    missing = "; ".join(d.note for d in counted.not_counted)
    return dict(status="counted", model_flops=model, hardware_flops=hardware,
                xla_matmul_flops=None if missing else counted.flops, xla_module="tpu program",
                xla_equal=None if missing else counted.flops == hardware,
                note="the TPU program lowered here by jax.export, its Pallas kernels priced from their own code"
                     + (f"; not counted: {missing}" if missing else ""))


def _time(compiled, args, repeats: int) -> float:
    import jax

    jax.block_until_ready(compiled(*args))  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measured_bandwidth(megabytes: int = 256, repeats: int = 5) -> float:
    """Bytes/s of reading one large array once (a sum): the reference where no peak is known (a new output array
    per call would time the allocator, not the memory)."""
    import jax
    import jax.numpy as jnp

    a = jnp.ones((megabytes * 2 ** 20 // 4,), jnp.float32)
    f = jax.jit(lambda x: jnp.sum(x))
    return a.nbytes / _time(f.lower(a).compile(), [a], repeats)


def hbm_bytes(fn, args, div: int) -> int:
    """The row's compulsory HBM bytes per device: its arguments read once and its results written once (a lower
    bound: intermediates that do not stay on chip are extra). Sharded arguments count their shard."""
    import jax

    def shard_bytes(x):
        shards = getattr(x, "addressable_shards", None)
        return shards[0].data.nbytes if shards else x.nbytes

    read = sum(shard_bytes(x) for x in jax.tree_util.tree_leaves(args))
    written = sum(o.size * o.dtype.itemsize for o in jax.tree_util.tree_leaves(jax.eval_shape(fn, *args)))
    return read + written // div


def measured_matmul_rate(dtype, n: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of one large square matmul: the reference where no peak is known (CPUs, unknown chips)."""
    import jax
    import jax.numpy as jnp

    a = jnp.ones((n, n), dtype) * 0.5
    f = jax.jit(lambda x, y: x @ y)
    return 2 * n ** 3 / _time(f.lower(a, a).compile(), [a, a], repeats)


def _mesh(spec: str | None):
    if not spec:
        return None
    import jax
    import numpy as np
    from jax.sharding import Mesh

    names, sizes = [], []
    for part in spec.split(","):
        name, _, size = part.partition("=")
        if name not in ("data", "model") or not size.isdigit() or int(size) < 1:
            raise ValueError(f"--mesh: {part!r} is not data=N or model=M")
        names.append(name)
        sizes.append(int(size))
    if math.prod(sizes) > jax.device_count():
        raise ValueError(f"--mesh {spec!r} needs {math.prod(sizes)} devices, {jax.device_count()} available")
    return Mesh(np.array(jax.devices()[: math.prod(sizes)]).reshape(sizes), tuple(names))


def _setting(args):
    """(backend, device kind, preset name, preset, dtype, dtype name) of this machine and these flags."""
    import jax
    import jax.numpy as jnp

    backend = jax.default_backend()
    kind = jax.devices()[0].device_kind
    preset_name = args.preset or (backend if backend in PRESETS else "cpu")
    preset = (QUICK if args.quick else PRESETS)[preset_name]
    dtype = jnp.float32 if preset_name == "cpu" else jnp.bfloat16
    return backend, kind, preset_name, preset, dtype, "float32" if preset_name == "cpu" else "bfloat16"


def list_rows(args) -> dict:
    """The rows a run with these flags has, numbered from 1, without running any (``--list``)."""
    import jax

    backend, kind, preset_name, preset, dtype, _ = _setting(args)
    cases = _cases.build_cases(preset, backend, dtype, args.model)
    return {"backend": backend, "device_kind": kind, "jax": jax.__version__, "preset": preset_name,
            "quick": args.quick, "rows": [{"index": i, "kernel": c.name, "shapes": c.shapes}
                                          for i, c in enumerate(cases, 1)]}


def run_bench(args) -> dict:
    import json

    import jax

    from .. import peaks

    if args.distributed:
        jax.distributed.initialize()
    backend, kind, preset_name, preset, dtype, dtype_name = _setting(args)
    mesh = _mesh(args.mesh)
    if args.peak_tflops:
        peak, peak_src = args.peak_tflops * 1e12, "--peak-tflops"
    else:
        found = peaks.lookup(kind, dtype_name)
        if found and backend != "cpu":
            peak, peak_src = found[1], f"{found[0]} dense {found[2]} peak (table)"
        else:
            peak = measured_matmul_rate(dtype, 1024 if args.quick else 2048)
            peak_src = f"measured {dtype_name} matmul rate on {kind or backend} (no table entry)"
    if args.peak_gbps:
        bw, bw_src = args.peak_gbps * 1e9, "--peak-gbps"
    elif peaks.bandwidth(kind) and backend != "cpu":
        bw, bw_src = peaks.bandwidth(kind), "HBM peak (table)"
    else:
        bw = measured_bandwidth(64 if args.quick else 256)
        bw_src = f"measured read bandwidth on {kind or backend} (no table entry)"
    log = (lambda *a: print(*a, file=sys.stderr, flush=True)) if not args.silent else (lambda *a: None)
    log(f"maxflops.bench: backend {backend}, device {kind!r} x {jax.device_count()}, preset {preset_name}"
        f"{' (quick)' if args.quick else ''}, peak {peak / 1e12:.1f} TFLOP/s ({peak_src})")
    rows = []
    cases = _cases.build_cases(preset, backend, dtype, args.model)
    only = getattr(args, "only", None)
    if only and max(only) > len(cases):
        raise ValueError(f"--only: this run has {len(cases)} rows, not {max(only)} (--list lists them)")
    jsonl = getattr(args, "jsonl", None)
    meta = {"backend": backend, "device_kind": kind, "jax": jax.__version__, "preset": preset_name,
            "quick": args.quick, "dtype": dtype_name}

    def record(i, row):
        if jsonl:                                        # each row as it finishes: a run cut short keeps its rows
            with open(jsonl, "a") as f:
                f.write(json.dumps({**meta, "index": i, "row": row}) + "\n")

    for i, case in enumerate(cases, 1):
        if only and i not in only:
            continue
        row = {"kernel": case.name, "shapes": case.shapes, "status": "ok", "xla_module": case.module,
               "note": case.why}
        log(f"[{i}/{len(cases)}] {case.name} ...")
        try:
            if case.only == ("tpu",) and backend == "cpu" and case.module == "none":
                row.update(_counted_for_tpu(case))    # a Pallas TPU kernel: its TPU program counted here
                rows.append(row)
                record(i, row)
                log(f"    {_short(row)}")
                continue
            if case.only and backend not in case.only:
                raise _cases.Skip(f"needs {'/'.join(case.only).upper()}")
            model, hardware = case.analytic()
            fn, fargs, div = case.run(mesh)
            compiled, xla = _count(fn, fargs, case.module, div)
            if case.module == "none":
                _keep_program(case.name, compiled)
            seconds = _time(compiled, fargs, args.repeats)
            nbytes = hbm_bytes(fn, fargs, div)
            flop_time, byte_time = hardware / div / peak, nbytes / bw
            row.update(model_flops=model // div, hardware_flops=hardware // div, xla_matmul_flops=xla,
                       xla_equal=None if xla is None else xla == hardware // div, seconds=seconds,
                       model_tflops_per_s=model / div / seconds / 1e12,
                       hardware_tflops_per_s=hardware / div / seconds / 1e12,
                       pct_of_peak=100 * hardware / div / seconds / peak, devices_sharing=div,
                       hbm_bytes=nbytes, gbytes_per_s=nbytes / seconds / 1e9, pct_of_bandwidth=100 * byte_time / seconds,
                       bound="memory" if byte_time > flop_time else "compute",
                       pct_of_roofline=100 * max(flop_time, byte_time) / seconds)
            if case.module == "none":  # no matmul count: keep XLA's cost analysis (a Pallas kernel's own estimate)
                from ..xla.hlo import _cost_flops

                row["xla_cost_analysis_flops"] = _cost_flops(compiled)
            if case.engine_bytes is not None:
                engine, arrays = case.engine_bytes(fargs)
                row.update(engine_bytes=engine, engine_bytes_equal=engine == arrays)
            # Global: the work split over `div` devices, or (multi-host, no mesh) one copy per process.
            copies = jax.process_count() if div == 1 else 1
            row["global_model_flops"], row["global_hardware_flops"] = model * copies, hardware * copies
        except _cases.Skip as e:  # this backend (or environment) cannot run this kernel
            row.update(status="skipped", note=str(e))
        except Exception as e:  # a kernel that should run and did not: the run goes on, then exits non-zero
            row.update(status="failed", note=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
            if args.verbose:
                traceback.print_exc()
        rows.append(row)
        record(i, row)
        log(f"    {_short(row)}")
    return {"jax": jax.__version__, "jaxlib": _jaxlib_version(), "backend": backend, "device_kind": kind,
            "device_count": jax.device_count(), "process_count": jax.process_count(), "preset": preset_name,
            "quick": args.quick, "dtype": dtype_name, "peak_flops": peak, "peak_source": peak_src,
            "peak_bytes_per_s": bw, "peak_bandwidth_source": bw_src,
            "mesh": args.mesh, "command": " ".join(sys.argv), "python": platform.python_version(), "rows": rows}


def _jaxlib_version():
    try:
        import jaxlib

        return jaxlib.__version__
    except Exception:  # pragma: no cover
        return "?"


