"""Speed of the program counter beside the lowering it reads, written to benchmarks/RESULTS.md (``--out PATH``
writes elsewhere).

    python benchmarks/bench_program.py

Rows: a 64-layer train step scanned (one body, trip count 64) and unrolled (64 bodies), a splash attention
training step exported for TPU (three Pallas kernels priced by running their Mosaic modules over their grids), and
jax's FlashAttention 3 training step exported for a GPU (three Mosaic GPU kernels priced by running their launches
block by block and warp by warp; one shim: its CUDA runtime check answered, as in tests/xla/test_mosaic_gpu.py). For
each, the median time of lowering it (``jit(f).lower`` or ``jax.export``) and of counting what that gave
(``count_program``, which reads the StableHLO module and counts it), and their ratio; beside them, counting the same
program through XLA's conversion to HLO text, the reader it used before.
"""

from __future__ import annotations

import os
import pathlib
import platform
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def _median(fn, repeats: int = 5, fresh: bool = False) -> float:
    import jax

    times = []
    for _ in range(repeats):
        if fresh:
            jax.clear_caches()  # jax memoizes a lowering: each repeat lowers anew, as a first call does
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def stack_step(layers: int, scanned: bool, d: int = 256):
    import jax
    import jax.numpy as jnp

    def layer(h, w):
        a = jnp.tanh(h @ w[0])
        return h + a @ w[1]

    def loss(ws, x):
        if scanned:
            h = jax.lax.scan(lambda h, w: (layer(h, w), None), x, ws)[0]
        else:
            h = x
            for i in range(layers):
                h = layer(h, ws[i])
        return (h * h).sum()

    ws = jax.ShapeDtypeStruct((layers, 2, d, d), jnp.float32)
    x = jax.ShapeDtypeStruct((128, d), jnp.float32)
    return jax.jit(jax.grad(loss)), (ws, x)


def splash_step(L: int = 4096, H: int = 8, D: int = 128, block: int = 512):
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    tiles = {k: block for k in ("block_q", "block_kv", "block_kv_compute", "block_q_dkv", "block_kv_dkv",
                                "block_kv_dkv_compute", "block_q_dq", "block_kv_dq")}
    kernel = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((L, L))] * H), head_shards=1, q_seq_shards=1,
                                block_sizes=sk.BlockSizes(**tiles))
    step = jax.jit(jax.grad(lambda q, k, v: kernel(q, k, v).sum(), argnums=(0, 1, 2)))
    x = jax.ShapeDtypeStruct((H, L, D), jnp.float32)
    return step, (x, x, x)


def fa3_step(L: int = 4096, H: int = 8, D: int = 128, block: int = 64):
    import types

    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import attention_mgpu as am

    am.cuda_versions = types.SimpleNamespace(cuda_runtime_get_version=lambda: 12092)  # nothing runs
    cfg = am.TuningConfig(block_q=block, block_kv=block, max_concurrent_steps=2, block_q_dkv=block,
                          block_kv_dkv=block, block_q_dq=block, block_kv_dq=block)
    step = jax.jit(jax.grad(lambda q, k, v: am.attention(q, k, v, cfg).astype(jnp.float32).sum(), argnums=(0, 1, 2)))
    x = jax.ShapeDtypeStruct((1, L, H, D), jnp.float16)
    return step, (x, x, x)


def main() -> None:
    import jax

    from maxflops.xla import count_program
    from maxflops.xla.hlo_count import count_module
    from maxflops.xla.hlo_parse import parse_hlo_module
    from maxflops.xla.mosaic import _load_cached
    from maxflops.xla.mosaic_gpu import _load_cached as _load_gpu
    from maxflops.xla.program import program_text

    def via_hlo(stage):
        return count_module(parse_hlo_module(program_text(stage)[0]), report=True)

    rows = []
    for label, (fn, args) in (("64-layer train step, scanned", stack_step(64, True)),
                              ("64-layer train step, unrolled", stack_step(64, False))):
        lower = _median(lambda: fn.lower(*args), fresh=True)
        lowered = fn.lower(*args)
        count = _median(lambda: count_program(lowered))
        text = _median(lambda: via_hlo(lowered))
        rows.append((label + f" ({count_program(lowered).flops:,} FLOPs)", "fn.lower(...)", lower, count, text))
    for label, how, platform_, (fn, args), cache in (
            ("splash training step for TPU, L=4096, 8 heads, tiles 512", "jax.export for 'tpu'", "tpu",
             splash_step(), _load_cached),
            ("FlashAttention 3 (Mosaic GPU) training step for a GPU, L=4096, 8 heads, tiles 64",
             "jax.export for 'cuda'", "cuda", fa3_step(), _load_gpu)):

        def export():
            return jax.export.export(fn, platforms=[platform_])(*args)

        lower = _median(export, fresh=True)
        exported = export()

        def fresh_count():
            cache.cache_clear()  # each kernel's module parsed again, as a first count would
            return count_program(exported)

        def fresh_via_hlo():
            cache.cache_clear()
            return via_hlo(exported)

        count = _median(fresh_count)
        text = _median(fresh_via_hlo)
        rows.append((f"{label} ({fresh_count().kernel_flops:,} kernel FLOPs)", how, lower, count, text))

    lines = ["## Program counter", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}, jax {jax.__version__}; "
             f"{time.strftime('%Y-%m-%d')}. Median of 5; `python benchmarks/bench_program.py` regenerates this "
             "section. Counting reads the StableHLO module the lowering made (maxflops.xla.stablehlo) and counts it; "
             "'through HLO text' counts the same program as the counter did before: XLA converts the module to HLO "
             "text, which is parsed and counted.", "",
             "| program | lowered by | lowering | counting | counting / lowering | through HLO text |",
             "|---|---|---:|---:|---:|---:|"]
    for label, how, lo, co, tx in rows:
        lines.append(f"| {label} | {how} | {lo * 1e3:.1f} ms | {co * 1e3:.1f} ms | {co / lo:.0%} | "
                     f"{tx * 1e3:.1f} ms ({tx / lo:.0%}) |")
    section = "\n".join(lines) + "\n"
    print(section)
    out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else HERE / "RESULTS.md"
    from bench_analytic import _write_section

    _write_section(out, "## Program counter", section)


if __name__ == "__main__":
    main()
