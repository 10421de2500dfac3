"""The program counter on the programs that run on TPUs: jax's own splash attention, exported for TPU on this CPU
machine, priced by running the kernel's Mosaic module over its grid (maxflops.xla.mosaic).

Held three ways, none of them the pricer's own code:
- a brute-force count from the dense mask (numpy): a tile costs its matmuls when any of its (query, key) pairs is
  visible, per kernel with that kernel's tile sizes; the matmuls per tile read from splash's source (forward: QK^T and
  PV; dq kernel: QK^T, dO V^T, dS K; dkv kernel: QK^T, dO V^T, P^T dO, dS^T Q, and dS K when fused);
- the dense mask is the kernel's: the kernel run by the Pallas interpreter on CPU equals dense masked attention with it;
- maxflops' analytic count with the kernel's knobs equals the program's count.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from maxflops.xla import count_program  # noqa: E402
from maxflops.xla.hlo import count_hlo_text  # noqa: E402

sk = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_kernel")
sm = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask")

D = 128  # head dim (splash's lanes)


def dense_mask(kind: str, L: int, span: int = 0, seed: int = 0) -> np.ndarray:
    rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
    if kind == "causal":
        return cols <= rows
    if kind == "local":                       # the query and span-1 keys before it
        return (cols <= rows) & (cols > rows - span)
    if kind == "chunked":
        return (cols <= rows) & (cols // span == rows // span)
    if kind == "full":
        return np.ones((L, L), bool)
    if kind == "blocks":                      # irregular: random 64 x 64 patches over a causal mask
        rng = np.random.default_rng(seed)
        patches = rng.random((L // 64, L // 64)) < 0.35
        return (cols <= rows) & np.kron(patches, np.ones((64, 64), bool)).astype(bool) | (cols == rows)
    raise ValueError(kind)


def splash_mask(kind: str, L: int, span: int = 0):
    if kind == "causal":
        return sm.CausalMask((L, L))
    if kind == "local":
        return sm.LocalMask((L, L), window_size=(span - 1, 0), offset=0)
    if kind == "full":
        return sm.FullMask((L, L))
    # chunked as a table: splash's ChunkedCausalMask computes its chunks in the kernel with a floor division whose
    # TPU lowering (jax 0.10.2) asks the chip's generation, which a CPU machine cannot answer
    return sm.NumpyMask(dense_mask(kind, L, span))


def tiles(mask: np.ndarray, bq: int, bkv: int) -> int:
    """Tiles of bq x bkv holding a visible pair (brute force over the dense mask)."""
    L = mask.shape[0]
    return sum(bool(mask[i:i + bq, j:j + bkv].any()) for i in range(0, L, bq) for j in range(0, L, bkv))


def splash_fn(kinds, L, H, Hkv, blocks, train, segments=False, fused=False, interpret=False):
    """jax's splash kernel (per-head masks ``kinds``: (kind, span) pairs) as a jitted function of q, k, v."""
    masks = sm.MultiHeadMask([splash_mask(k, L, s) for k, s in kinds])
    if fused:                                    # the fused backward has no dq kernel, so no dq tiles
        blocks = {k: v for k, v in blocks.items() if not k.endswith("_dq")}
    bs = sk.BlockSizes(**blocks, use_fused_bwd_kernel=fused) if train else \
        sk.BlockSizes(**{k: v for k, v in blocks.items() if k in ("block_q", "block_kv", "block_kv_compute")})
    make = sk.make_splash_mqa if Hkv == 0 else sk.make_splash_mha
    kernel = make(masks, block_sizes=bs, head_shards=1, q_seq_shards=1, interpret=interpret)

    def fwd(q, k, v, seg=None):
        return kernel(q, k, v, segment_ids=sk.SegmentIds(seg, seg) if seg is not None else None)

    if not train:
        return jax.jit(fwd)
    return jax.jit(jax.grad(lambda q, k, v, seg=None: fwd(q, k, v, seg).astype(jnp.float32).sum(), argnums=(0, 1, 2)))


def specs(L, H, Hkv, segments):
    q = jax.ShapeDtypeStruct((H, L, D), jnp.float32)
    kv = jax.ShapeDtypeStruct((L, D) if Hkv == 0 else (Hkv, L, D), jnp.float32)
    out = [q, kv, kv]
    if segments:
        out.append(jax.ShapeDtypeStruct((L,), jnp.int32))
    return out


def expected(kinds, L, H, blocks, train, fused=False) -> int:
    """The brute-force price of the splash calls of one run: tiles x the kernel's matmuls per tile."""
    dense = [dense_mask(k, L, s) for k, s in kinds]
    if len(dense) == 1:
        dense = dense * H

    def per_kernel(bq, bkv, units):                  # units: multiples of 2 * bq * bkv * D
        return sum(tiles(m, bq, bkv) for m in dense) * 2 * bq * bkv * D * units

    total = per_kernel(blocks["block_q"], blocks["block_kv"], 2)
    if train:
        total += per_kernel(blocks["block_q_dkv"], blocks["block_kv_dkv"], 5 if fused else 4)
        if not fused:
            total += per_kernel(blocks["block_q_dq"], blocks["block_kv_dq"], 3)
    return total


def _blocks(bq, bkv, bkv_c=None, bwd=None):
    b = dict(block_q=bq, block_kv=bkv, block_kv_compute=bkv_c or bkv)
    dq, dkv = bwd or ((bq, bkv), (bq, bkv))
    b.update(block_q_dq=dq[0], block_kv_dq=dq[1], block_q_dkv=dkv[0], block_kv_dkv=dkv[1],
             block_kv_dkv_compute=dkv[1])
    return b


L = 512
CASES = {
    # name: (per-head masks, H, Hkv (0: MQA), blocks)
    "causal MHA 128": ([("causal", 0)], 2, 2, _blocks(128, 128)),
    "causal GQA 4/2, q 256 kv 128": ([("causal", 0)], 4, 2, _blocks(256, 128)),
    "causal MQA, kv 256 computed by 128": ([("causal", 0)], 2, 0, _blocks(128, 256, 128)),
    "local window 200 (not a multiple of the tile)": ([("local", 200)], 2, 2, _blocks(128, 128)),
    "chunked 192": ([("chunked", 192)], 2, 1, _blocks(128, 128)),
    "full": ([("full", 0)], 2, 2, _blocks(256, 256)),
    "irregular blocks (numpy mask)": ([("blocks", 0)], 2, 2, _blocks(128, 128)),
    "per-head masks: causal and local 100": ([("causal", 0), ("local", 100)], 2, 2, _blocks(128, 128)),
    "causal, backward tiles differ (dq 256x128, dkv 128x256)": ([("causal", 0)], 2, 2,
                                                                _blocks(128, 128, bwd=((256, 128), (128, 256)))),
}


@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
@pytest.mark.parametrize("name", list(CASES))
def test_splash_for_tpu_priced_as_the_tiles_its_mask_visits(name, train):
    kinds, H, Hkv, blocks = CASES[name]
    c = count_program(splash_fn(kinds, L, H, Hkv, blocks, train), *specs(L, H, Hkv, False), platform="tpu")
    assert c.stage == "exported" and c.platforms == ("tpu",)
    assert not c.not_counted
    names = sorted(d.note.split()[3].rstrip(":") for d in c.kernels)
    assert all(n.startswith(("splash_mha_", "splash_mqa_")) for n in names), names
    assert len(names) == (3 if train else 1), names
    assert c.kernel_flops == expected(kinds, L, H, blocks, train)


@pytest.mark.parametrize("fused", [False, True], ids=["dq and dkv kernels", "fused backward"])
def test_splash_with_segment_ids_prices_the_static_mask(fused):
    """Packed rows: segment ids are runtime data, so splash skips only what its static mask skips; the fused
    backward computes dq inside the dkv kernel (one backward kernel, dS K once more there)."""
    kinds, blocks = [("causal", 0)], _blocks(128, 128)
    c = count_program(splash_fn(kinds, L, 2, 2, blocks, True, segments=True, fused=fused),
                      *specs(L, 2, 2, True), platform="tpu")
    assert len(c.kernels) == (2 if fused else 3) and not c.not_counted
    assert c.kernel_flops == expected(kinds, L, 2, blocks, True, fused=fused)


def _reference(q, k, v, mask):
    s = np.einsum("hqd,hkd->hqk", q, k)
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("hqk,hkd->hqd", p, v)


@pytest.mark.parametrize("kind,span", [("causal", 0), ("local", 100), ("chunked", 96), ("blocks", 0)])
def test_the_dense_mask_is_the_kernels(kind, span):
    """The kernel run by the Pallas interpreter on CPU equals dense attention under the brute force's mask, so the
    tiles counted above are the tiles of the mask the kernel applies."""
    Ls, H = 256, 2
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((H, Ls, D)).astype(np.float32) for _ in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        out = splash_fn([(kind, span)], Ls, H, H, _blocks(128, 128), False, interpret=True)(q, k, v)
    want = _reference(q, k, v, dense_mask(kind, Ls, span)[None])
    np.testing.assert_allclose(np.asarray(out), want, rtol=2e-4, atol=2e-4)  # float32 sums in another order


def test_engine_blocked_equals_the_splash_program_forward():
    """maxflops' analytic count with splash's knobs (attention_impl='blocked', its tiles) equals the program."""
    from maxflops.proofkit.case import component, engine

    for letter, kind, span in (("G", "causal", 0), ("L", "local", 200), ("C", "chunked", 192)):
        H, blk = 2, 128
        c = count_program(splash_fn([(kind, span)], L, H, H, _blocks(blk, blk), False), *specs(L, H, H, False),
                          platform="tpu")
        spans = {"L": {"sliding_window_size": span}, "C": {"chunk_attn_window_size": span}}.get(letter, {})
        b = engine(max_target_length=L, per_device_batch_size=1, num_query_heads=H, num_kv_heads=H, head_dim=D,
                   attention_layer_pattern=letter, attention_impl="blocked", attention_block_q=blk,
                   attention_block_kv=blk, **spans)
        assert component(b, "core_attention")[1] == c.kernel_flops, kind


def test_a_kernel_on_runtime_tables_is_named_not_counted():
    """A Pallas TPU kernel whose branch reads a scalar-prefetch table the step computes at run time: named, with
    the reason, and no FLOPs; the rest of the program still counted."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(flags_ref, x_ref, w_ref, o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)

        @pl.when(flags_ref[pl.program_id(0)] > 0)
        def _():
            o_ref[...] = jnp.dot(x_ref[...], w_ref[...])

    def f(flags, x, w):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(4,),
            in_specs=[pl.BlockSpec((128, 128), lambda i, fl: (i, 0)), pl.BlockSpec((128, 128), lambda i, fl: (0, 0))],
            out_specs=pl.BlockSpec((128, 128), lambda i, fl: (i, 0)))
        y = pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((512, 128), jnp.float32))(
            flags, x, w)
        return y @ w

    x = jax.ShapeDtypeStruct((512, 128), jnp.float32)
    w = jax.ShapeDtypeStruct((128, 128), jnp.float32)
    runtime = count_program(f, jax.ShapeDtypeStruct((4,), jnp.int32), x, w, platform="tpu")
    assert len(runtime.not_counted) == 1 and "does not fix" in runtime.not_counted[0].note
    assert runtime.flops == 2 * 512 * 128 * 128                     # the dot after it
    # the same kernel with the flags fixed in the program: two of the four blocks run their matmul
    fixed = count_program(lambda x, w: f(jnp.array([1, 0, 0, 1], jnp.int32), x, w), x, w, platform="tpu")
    assert not fixed.not_counted
    assert fixed.kernel_flops == 2 * (2 * 128 * 128 * 128)
    assert fixed.flops == fixed.kernel_flops + 2 * 512 * 128 * 128


def test_every_stage_counts_the_same_scanned_program():
    """A callable, its Lowered, its Compiled and its Exported (CPU) give the same loop-aware matmul count; XLA's
    cost_analysis, beside it, counts the scanned body once."""
    n, d = 6, 64

    def f(w, x):
        def body(h, wi):
            return jnp.tanh(h @ wi), None
        return jax.lax.scan(body, x, w)[0].sum()

    w = jnp.ones((n, d, d), jnp.float32)
    x = jnp.ones((8, d), jnp.float32)
    want = n * 2 * 8 * d * d
    jf = jax.jit(f)
    compiled = count_program(jf.lower(w, x).compile())
    assert count_program(f, w, x).flops == compiled.flops == want
    assert count_program(jf.lower(w, x)).flops == want
    assert count_program(jax.export.export(jf, platforms=["cpu"])(w, x)).flops == want
    assert count_program(f, w, x, platform="tpu").flops == want
    assert compiled.cost_analysis is not None and compiled.cost_analysis < want
    assert "counts each loop body once" in compiled.summary()


def test_an_unknown_custom_call_is_named_not_counted():
    text = """HloModule m
ENTRY %main (p0: f32[4,8], p1: f32[8,6]) -> f32[4,6] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %p1 = f32[8,6]{1,0} parameter(1)
  %s = f32[4,8]{1,0} custom-call(f32[4,8]{1,0} %p0), custom_call_target="Sharding", sharding={replicated}
  ROOT %k = f32[4,6]{1,0} custom-call(f32[4,8]{1,0} %s, f32[8,6]{1,0} %p1), custom_call_target="my_fused_mlp"
}
"""
    r = count_hlo_text(text)
    assert r.matmul_flops == 0
    assert [(d.name, d.kind) for d in r.dots] == [("k", "not counted")]
    assert "my_fused_mlp" in r.not_counted[0].note


def test_bad_input_is_one_clear_error():
    with pytest.raises(TypeError, match="count_program takes"):
        count_program(3)
    with pytest.raises(TypeError, match="takes no arguments"):
        count_program(jax.jit(lambda x: x).lower(1.0), 2.0)
    assert math.prod(()) == 1


@pytest.mark.parametrize("fused", [False, True], ids=["split backward (dq and dkv kernels)", "fused backward"])
@pytest.mark.parametrize("letter,kind,span", [("G", "causal", 0), ("L", "local", 200), ("C", "chunked", 192)])
def test_engine_blocked_train_equals_the_splash_program(letter, kind, span, fused):
    """Training: the engine's flash backward (flash_backward_recompute; flash_backward_split for splash's default
    two backward kernels) equals the exported training step's splash calls."""
    from maxflops.proofkit.case import component, engine

    H, blk = 2, 128
    c = count_program(splash_fn([(kind, span)], L, H, H, _blocks(blk, blk), True, fused=fused),
                      *specs(L, H, H, False), platform="tpu")
    spans = {"L": {"sliding_window_size": span}, "C": {"chunk_attn_window_size": span}}.get(letter, {})
    b = engine("train", max_target_length=L, per_device_batch_size=1, num_query_heads=H, num_kv_heads=H, head_dim=D,
               attention_layer_pattern=letter, attention_impl="blocked", attention_block_q=blk,
               attention_block_kv=blk, flash_backward_recompute=True, flash_backward_split=not fused, **spans)
    assert component(b, "core_attention")[1] == c.kernel_flops


def test_split_backward_needs_the_recompute():
    import maxflops

    with pytest.raises(ValueError, match="flash_backward_split"):
        maxflops.model_config(flash_backward_split=True, mode="train")


def test_a_grid_sized_at_run_time():
    """A Pallas grid whose size is an operand: priced when the program fixes it, named not counted when the step
    computes it (tokamax's splash sizes its grid from the batch's segment ids)."""
    from jax.experimental import pallas as pl

    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = jnp.dot(x_ref[...], w_ref[...])

    def f(n, x, w):
        return pl.pallas_call(kernel, grid=(n,), out_shape=jax.ShapeDtypeStruct((512, 128), jnp.float32),
                              in_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0)),
                                        pl.BlockSpec((128, 128), lambda i: (0, 0))],
                              out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)))(x, w)

    x = jax.ShapeDtypeStruct((512, 128), jnp.float32)
    w = jax.ShapeDtypeStruct((128, 128), jnp.float32)
    runtime = count_program(f, jax.ShapeDtypeStruct((), jnp.int32), x, w, platform="tpu")
    assert runtime.flops == 0 and "sized at run time" in runtime.not_counted[0].note
    fixed = count_program(lambda x, w: f(jnp.int32(3), x, w), x, w, platform="tpu")
    assert fixed.kernel_flops == 3 * 2 * 128 ** 3 and "matmuls at 3 of its 3 grid points" in fixed.kernels[0].note


def test_a_saved_program_counts_from_the_command_line(tmp_path, capsys):
    """``python -m maxflops.xla.program FILE``: a serialized Exported (e.g. saved on a TPU VM or by the device check),
    its StableHLO text, or HLO text; bad files are one clear error."""
    import json

    from maxflops.xla.program import main

    kinds, blocks = [("causal", 0)], _blocks(128, 128)
    exported = jax.export.export(splash_fn(kinds, L, 2, 2, blocks, False), platforms=["tpu"])(*specs(L, 2, 2, False))
    want = expected(kinds, L, 2, blocks, False)
    (tmp_path / "step.mlir").write_text(exported.mlir_module())
    from maxflops.xla.program import program_text

    (tmp_path / "step.hlo").write_text(program_text(exported)[0])
    for name in ("step.mlir", "step.hlo"):
        assert main([str(tmp_path / name), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["kernel_flops"] == want and out["not_counted"] == [], name
    assert main([str(tmp_path / "step.mlir")]) == 0 and "splash_mha_fwd" in capsys.readouterr().out
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01junk")
    assert main([str(tmp_path / "junk.bin")]) == 2
    err = capsys.readouterr().err
    try:  # jax serializes an Exported with flatbuffers, which maxflops does not require
        (tmp_path / "step.bin").write_bytes(exported.serialize())
    except ImportError:
        assert "flatbuffers" in err and err.count("\n") == 1      # one line, naming what it needs
        return
    assert "neither HLO text" in err
    assert main([str(tmp_path / "step.bin"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kernel_flops"] == want


def test_a_string_over_several_lines_is_one_instruction():
    """HLO text prints a string attribute holding newlines over several lines (a kernel's metadata): the parser
    joins them into one instruction, and a bracket inside the string does not count."""
    from maxflops.xla.hlo_parse import _open_string, parse_hlo_module

    assert _open_string('a "b" c', False) is False and _open_string('a "b c', False) is True
    assert _open_string('x" y', True) is False and _open_string('x\\" y', True) is True
    assert _open_string("x y", True) is True and _open_string('x" "y', True) is True
    text = ('HloModule m\nENTRY %main (p: f32[4,8], w: f32[8,6]) -> f32[4,6] {\n  %p = f32[4,8]{1,0} parameter(0)\n'
            '  %w = f32[8,6]{1,0} parameter(1)\n  ROOT %d = f32[4,6]{1,0} dot(%p, %w), lhs_contracting_dims={1}, '
            'rhs_contracting_dims={0}, frontend_attributes={note="a {\nb)\n"}\n}\n')
    m = parse_hlo_module(text)
    assert [i.name for i in m.computations["main"].instructions] == ["p", "w", "d"]
    assert count_hlo_text(text).matmul_flops == 2 * 4 * 6 * 8


def test_an_exported_sharded_program_says_it_is_the_whole_programs():
    """Exported for a mesh of several devices, the module is the one before SPMD partitioning: its count is the whole
    program's, and the summary says so (a Compiled on the devices gives per-device figures)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import jax, jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        from maxflops.xla import count_program
        mesh = Mesh(jax.devices()[:4], ("data",))
        x = jax.ShapeDtypeStruct((64, 128), jnp.float32, sharding=NamedSharding(mesh, P("data", None)))
        w = jax.ShapeDtypeStruct((128, 32), jnp.float32, sharding=NamedSharding(mesh, P()))
        c = count_program(jax.export.export(jax.jit(lambda x, w: x @ w), platforms=["tpu"])(x, w))
        assert c.devices == 4 and c.flops == 2 * 64 * 128 * 32, (c.devices, c.flops)
        assert "exported for 4 devices" in c.summary()
        print("ok")
    """)
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    import os

    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]


def test_ragged_dot_as_a_tpu_program_lowers_it():
    """``lax.ragged_dot`` stays one ``ragged-dot`` in a TPU program: each lhs row meets its group's weights, so the
    forward is what the groups' dense dots add up to (2 K N per row), and so are the input and weight gradients
    (the weight gradient's ragged dimension is the contraction)."""
    M, K, N, sizes = 64, 32, 16, (10, 20, 0, 34)
    per_group = sum(2 * g * K * N for g in sizes)                  # the groups' own dots, one by one

    def f(x, w, g):
        return jax.lax.ragged_dot(x, w, g)

    x, w = jax.ShapeDtypeStruct((M, K), jnp.float32), jax.ShapeDtypeStruct((len(sizes), K, N), jnp.float32)
    g = jax.ShapeDtypeStruct((len(sizes),), jnp.int32)
    assert count_program(f, x, w, g, platform="tpu").flops == per_group
    grad = jax.value_and_grad(lambda x, w, g: (f(x, w, g) ** 2).sum(), argnums=(0, 1))
    assert count_program(grad, x, w, g, platform="tpu").flops == 3 * per_group


def test_data_dependent_control_flow_is_named_not_counted():
    """A loop whose trip count is an argument, or a branch whose sides cost differently: the program counter names
    each, with its body's or branches' FLOPs, and counts the rest; the proof helpers (count_matmuls) still raise."""
    from maxflops.xla import count_matmuls

    def f(n, x, w):
        y = jax.lax.fori_loop(0, n, lambda i, h: jnp.tanh(h @ w), x)
        z = jax.lax.cond(n > 2, lambda: y @ w, lambda: y)
        return z @ w

    x, w = jnp.ones((8, 16), jnp.float32), jnp.ones((16, 16), jnp.float32)
    c = count_program(f, jnp.int32(3), x, w)
    notes = sorted(d.note for d in c.not_counted)
    assert len(notes) == 2 and "branches cost differently (0, 4,096 FLOPs)" in notes[0], notes
    assert "trip count the program does not fix" in notes[1] and "4,096 FLOPs an iteration" in notes[1]
    assert c.flops == 2 * 8 * 16 * 16                              # the last matmul
    with pytest.raises(ValueError, match="no known trip count|branches"):
        count_matmuls(jax.jit(f), jnp.int32(3), x, w)
