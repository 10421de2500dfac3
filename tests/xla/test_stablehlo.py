"""The StableHLO reader (maxflops.xla.stablehlo) against XLA's own conversion of the same program to HLO: two readers
of one program, the second not ours (XLA writes the HLO text; the HLO parser only reads it), counted by the same
counter, equal dot for dot: each matmul's kind, op name (so every named scope), FLOPs, executions and note, the
priced kernels, what is not counted, the loop-blind total. The programs are the kinds the counter meets: scans and
unrolled stacks, remat, nested jit, conditionals, fori loops, ragged dots, convolutions, shard_map, splash attention
and megablox exported for TPU, cuDNN attention lowered for a GPU, the Flax proof models' train steps and the example
trainer's step."""

from __future__ import annotations

import collections
import warnings

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from maxflops.xla import stablehlo  # noqa: E402
from maxflops.xla.hlo_count import count_module  # noqa: E402
from maxflops.xla.hlo_parse import parse_hlo_module  # noqa: E402
from maxflops.xla.program import _export, _stablehlo_to_hlo_text  # noqa: E402


def _key(count):
    return collections.Counter((d.kind, d.op_name, d.flops, d.multiplier, d.note) for d in count.dots)


def assert_same(text: str, **inputs):
    """Both readers of StableHLO ``text``: equal counts; returns the StableHLO reader's."""
    from maxflops.xla.kernels import RunTimeInputs

    run = RunTimeInputs(**inputs) if inputs else None
    via_hlo = count_module(parse_hlo_module(_stablehlo_to_hlo_text(text)), report=True, inputs=run)
    direct = count_module(stablehlo.read_text(text), report=True, inputs=run)
    assert _key(direct) == _key(via_hlo), (_key(direct) - _key(via_hlo), _key(via_hlo) - _key(direct))
    assert (direct.matmul_flops, direct.naive_matmul_flops) == (via_hlo.matmul_flops, via_hlo.naive_matmul_flops)
    return direct


def lowered_text(fn, *args):
    return jax.jit(fn).lower(*args).as_text(debug_info=True)


def exported_text(fn, platform, *specs):
    return _export(jax.jit(fn) if not hasattr(fn, "lower") else fn, platform, (specs, {})).mlir_module()


F32 = jnp.float32


def _spec(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def stack(layers, scanned, remat=False):
    def layer(h, w):
        with jax.named_scope("mlp"):
            return h + jnp.tanh(h @ w[0]) @ w[1]

    body = jax.checkpoint(layer) if remat else layer

    def loss(ws, x):
        if scanned:
            h = jax.lax.scan(lambda h, w: (body(h, w), None), x, ws)[0]
        else:
            h = x
            for i in range(layers):
                h = body(h, ws[i])
        return (h * h).sum()

    return jax.grad(loss), (_spec(layers, 2, 32, 32), _spec(8, 32))


def control(i, x, w):
    y = jax.lax.cond(i > 0, lambda x: x @ w, lambda x: (x @ w.T) @ w, x)
    y = jax.lax.fori_loop(0, 3, lambda j, y: jnp.tanh(y @ w), y)
    y = jax.lax.fori_loop(0, i, lambda j, y: y @ w, y)                # a trip count the program does not fix
    z = jax.jit(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(y, w)    # a nested jit
    return jax.lax.ragged_dot(z, jnp.stack([w, w]), jnp.array([5, 3], jnp.int32))


CONTROL = (_spec(dtype=jnp.int32), _spec(8, 8), _spec(8, 8))


def conv(x, k, k2):
    y = jax.lax.conv_general_dilated(x, k, (2,), [(1, 2)], rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC"))
    return jax.lax.conv_general_dilated(y, k2, (1,), "SAME", feature_group_count=5,
                                        dimension_numbers=("NWC", "WIO", "NWC"))


CONV = (_spec(2, 16, 4), _spec(3, 4, 5), _spec(3, 1, 5))


@pytest.mark.parametrize("case", ["scanned", "unrolled", "scanned remat", "control", "conv"])
@pytest.mark.parametrize("where", ["cpu lowered", "tpu exported"])
def test_programs_read_equal(case, where):
    fn, specs = {"scanned": lambda: stack(4, True), "unrolled": lambda: stack(4, False),
                 "scanned remat": lambda: stack(4, True, remat=True),
                 "control": lambda: (control, CONTROL), "conv": lambda: (conv, CONV)}[case]()
    text = lowered_text(fn, *specs) if where == "cpu lowered" else exported_text(fn, "tpu", *specs)
    c = assert_same(text)
    assert c.matmul_flops > 0
    if case == "control":            # the data-dependent loop and the unequal branches are named, in both readers
        assert [d.kind for d in c.dots].count("not counted") == 2


def test_shard_map_bodies_read_equal():
    """A shard_map over 4 devices (an abstract mesh: exported, nothing runs): its body, per device, in shardy's
    manual computation."""
    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

    mesh = AbstractMesh((4,), ("x",))
    f = jax.shard_map(lambda a, b: jnp.tanh(a @ b) @ b.T, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))
    a = jax.ShapeDtypeStruct((8, 16), F32, sharding=NamedSharding(mesh, P("x")))
    b = jax.ShapeDtypeStruct((16, 4), F32, sharding=NamedSharding(mesh, P()))
    text = jax.export.export(jax.jit(f), platforms=["tpu"])(a, b).mlir_module()
    assert "manual_computation" in text
    assert assert_same(text).matmul_flops == 2 * (2 * 2 * 16 * 4)      # two matmuls on a device's 2 rows of 8


def test_splash_for_tpu_reads_equal():
    sk = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_kernel")
    sm = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask")
    L, H = 512, 2
    masks = sm.MultiHeadMask([sm.CausalMask((L, L)), sm.LocalMask((L, L), window_size=(99, 0), offset=0)])
    kernel = sk.make_splash_mha(masks, head_shards=1, q_seq_shards=1, block_sizes=sk.BlockSizes(
        block_q=128, block_kv=128, block_kv_compute=128, block_q_dkv=128, block_kv_dkv=128, block_kv_dkv_compute=128,
        block_q_dq=128, block_kv_dq=128))

    def step(q, k, v, seg):
        ids = sk.SegmentIds(seg, seg)
        return jax.grad(lambda q, k, v: kernel(q, k, v, segment_ids=ids).sum(), argnums=(0, 1, 2))(q, k, v)

    x = _spec(H, L, 128)
    c = assert_same(exported_text(step, "tpu", x, x, x, _spec(L, dtype=jnp.int32)))
    assert len(c.kernels) == 3 and not c.not_counted


def test_a_kernels_tables_through_sharding_and_shard_map_are_read():
    """A kernel called in a shard_map body with its block tables passed in from outside through sharding
    constraints, as MaxText passes splash's: read through shardy's ops to the constants, the kernel is priced as
    the tiles its causal mask visits (brute force over the dense mask). XLA's HLO form of the same program hands the
    body its arguments through one tuple-valued GlobalToLocalShape call, which the HLO reader does not see through:
    there the kernel is named not counted."""
    import numpy as np
    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

    sk = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_kernel")
    sm = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask")
    L, H, D, B = 512, 2, 128, 128
    kernel = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((L, L))] * H), head_shards=1, q_seq_shards=1,
                                block_sizes=sk.BlockSizes(block_q=B, block_kv=B, block_kv_compute=B))
    mesh = AbstractMesh((2,), ("x",))

    def f(q, k, v):
        kern = jax.tree.map(lambda a: jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P())), kernel)
        return jax.shard_map(lambda q, k, v, kern: kern(q, k, v), mesh=mesh, in_specs=(P(), P(), P(), P()),
                             out_specs=P(), check_vma=False)(q, k, v, kern)

    x = jax.ShapeDtypeStruct((H, L, D), F32, sharding=NamedSharding(mesh, P()))
    text = exported_text(f, "tpu", x, x, x)
    assert "sdy.sharding_constraint" in text and "manual_computation" in text
    c = count_module(stablehlo.read_text(text), report=True)
    rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
    causal = cols <= rows
    tiles = sum(bool(causal[i:i + B, j:j + B].any()) for i in range(0, L, B) for j in range(0, L, B))
    assert not c.not_counted and c.kernel_flops == H * tiles * 2 * (2 * B * B * D)
    via_hlo = count_module(parse_hlo_module(_stablehlo_to_hlo_text(text)), report=True)
    assert via_hlo.kernel_flops == 0 and len(via_hlo.not_counted) == 1


@pytest.mark.parametrize("sizes", ["balanced", [200, 0, 56, 256]])
def test_megablox_reads_equal(sizes):
    gmm = pytest.importorskip("jax.experimental.pallas.ops.tpu.megablox.gmm")
    m, k, n, g = 512, 256, 256, 4

    def step(x, w, dy, gs):                             # the forward and the weight gradient's kernels
        t = (128, 128, 128)
        return gmm.gmm(x, w, gs, tiling=t), gmm.tgmm(x.T, dy, gs, tiling=t)

    bf16 = jnp.bfloat16
    c = assert_same(exported_text(step, "tpu", _spec(m, k, dtype=bf16), _spec(g, k, n, dtype=bf16),
                                  _spec(m, n, dtype=bf16), _spec(g, dtype=jnp.int32)), group_sizes=sizes)
    assert len(c.kernels) == 2 and not c.not_counted


@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
def test_cudnn_for_a_gpu_reads_equal(train):
    from maxflops.xla.cudnn import assume_cudnn

    def f(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn",
                                            local_window_size=(200, 0))

    fn = (lambda q, k, v: jax.grad(lambda q, k, v: f(q, k, v).astype(F32).sum(), argnums=(0, 1, 2))(q, k, v)) \
        if train else f
    x, kv = _spec(1, 1024, 4, 128, dtype=jnp.bfloat16), _spec(1, 1024, 2, 128, dtype=jnp.bfloat16)
    with assume_cudnn():
        text = exported_text(fn, "cuda", x, kv, kv)
    c = assert_same(text)
    assert c.kernels and not c.not_counted


@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama3.1-8b", "mixtral-8x7b", "deepseek3.2-671b", "nemotron-h-8b", "gemma3-27b"])
def test_flax_train_steps_read_equal(name):
    import maxflops
    from maxflops.xla import model as M

    c, model, params, _ = M.build(maxflops.load_config(name), abstract=True, mode="train")
    step, opt = M.train_step_fn(model)
    state = jax.eval_shape(opt.init, params)
    tokens = _spec(1, M.REDUCED_LENGTH, dtype=jnp.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # (the proof models' own notes are not this test's)
        text = jax.jit(step).lower(params, state, tokens).as_text(debug_info=True)
    assert assert_same(text).matmul_flops > 0


def test_the_example_trainers_step_reads_equal():
    pytest.importorskip("optax")
    from repo import jax_trainer_example

    ex = jax_trainer_example()
    _, params, opt_state, step, batch, _ = ex.setup()
    assert assert_same(step.lower(params, opt_state, batch).as_text(debug_info=True)).matmul_flops > 0


def test_what_the_reader_refuses_is_one_error():
    with pytest.raises(stablehlo.Unsupported, match="MLIR cannot parse"):
        stablehlo.read_text("module { this is not mlir }")
    with pytest.raises(stablehlo.Unsupported, match="no main"):
        stablehlo.read_text("module {\n  func.func private @f() {\n    return\n  }\n}")
