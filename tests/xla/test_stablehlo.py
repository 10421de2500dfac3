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


@pytest.mark.parametrize("manual", [("x",), ("x", "y")], ids=["one manual axis of two", "both axes"])
def test_a_shard_map_body_counts_once_per_device_that_runs_it(manual):
    """A shard_map exported for a 2 x 2 mesh (an abstract mesh: nothing runs). Its body is a device's along the
    manual axes and the whole program's along the rest, so the whole program runs it once per device of the manual
    axes: the program counts what the same matmuls without shard_map count (the module before partitioning is the
    whole program's), and says it is the whole program's. XLA's HLO form hides the manual axes in a custom call's
    frontend attributes: the HLO reader counts the body once (the only difference)."""
    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

    from maxflops.xla import count_program

    mesh = AbstractMesh((2, 2), ("x", "y"))
    body = lambda a, b: jnp.tanh(a @ b) @ b.T                       # noqa: E731
    f = jax.shard_map(body, mesh=mesh, in_specs=(P(manual), P()), out_specs=P(manual), axis_names=set(manual))
    a = jax.ShapeDtypeStruct((8, 16), F32, sharding=NamedSharding(mesh, P(manual)))
    b = jax.ShapeDtypeStruct((16, 4), F32, sharding=NamedSharding(mesh, P()))
    exported = jax.export.export(jax.jit(f), platforms=["tpu"])(a, b)
    text = exported.mlir_module()
    assert "manual_computation" in text
    whole = 2 * (2 * 8 * 16 * 4)
    c = count_program(exported)
    assert c.flops == whole == count_program(jax.jit(body), a, b, platform="tpu").flops
    assert c.devices == 4 and "a shard_map body counted once for each device that runs it" in c.summary()
    assert f"per device where the work splits evenly: {whole // 4:,}" in c.summary()
    via_hlo = count_module(parse_hlo_module(_stablehlo_to_hlo_text(text)), report=True)
    assert via_hlo.matmul_flops * (2 ** len(manual)) == whole


def test_a_saved_sharded_program_says_its_devices(tmp_path, capsys):
    """Saved as StableHLO text and counted from the command line, a program for 4 devices says so, whole."""
    import json

    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

    from maxflops.xla.program import main

    mesh = AbstractMesh((4,), ("x",))
    f = jax.shard_map(lambda a, b: a @ b, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))
    a = jax.ShapeDtypeStruct((8, 16), F32, sharding=NamedSharding(mesh, P("x")))
    b = jax.ShapeDtypeStruct((16, 4), F32, sharding=NamedSharding(mesh, P()))
    (tmp_path / "step.mlir").write_text(jax.export.export(jax.jit(f), platforms=["tpu"])(a, b).mlir_module())
    assert main([str(tmp_path / "step.mlir"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["devices"], out["flops"]) == (4, 2 * 8 * 16 * 4)


def test_a_kernels_tables_through_sharding_and_shard_map_are_read():
    """A kernel called in a shard_map body with its block tables passed in from outside through sharding
    constraints, as MaxText passes splash's: read through shardy's ops to the constants, the kernel is priced as
    the tiles its causal mask visits (brute force over the dense mask), on each device of the mesh. XLA's HLO form of the same program hands the
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
    devices = 2                                          # each runs the whole (replicated) attention
    assert not c.not_counted and c.kernel_flops == devices * H * tiles * 2 * (2 * B * B * D)
    via_hlo = count_module(parse_hlo_module(_stablehlo_to_hlo_text(text)), report=True)
    assert via_hlo.kernel_flops == 0 and len(via_hlo.not_counted) == 1


@pytest.mark.parametrize("same", [True, False], ids=["every head causal", "causal and local heads"])
def test_a_kernel_sharded_over_heads_is_priced_on_each_devices_shard(same):
    """Splash sharded over heads as MaxText shards it (the kernel's own manual_sharding_spec): each of the 2 devices
    runs the kernel over its shard of the mask tables. The same shard on every device: priced once per device, the
    brute-force count of the tiles of one head's causal mask each. Shards that differ: named not counted, saying so."""
    import numpy as np
    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

    from maxflops.xla import count_program

    sk = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_kernel")
    sm = pytest.importorskip("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask")
    L, H, D, B = 512, 2, 128, 128
    masks = [sm.CausalMask((L, L))] * 2 if same else \
        [sm.CausalMask((L, L)), sm.LocalMask((L, L), window_size=(99, 0), offset=0)]
    kernel = sk.make_splash_mha(sm.MultiHeadMask(masks), head_shards=2, q_seq_shards=1,
                                block_sizes=sk.BlockSizes(block_q=B, block_kv=B, block_kv_compute=B))
    mesh = AbstractMesh((2,), ("x",))
    spec = kernel.manual_sharding_spec(NamedSharding(mesh, P("x", None)))

    def f(q, k, v):
        return jax.shard_map(lambda q, k, v, kern: kern(q, k, v), mesh=mesh, in_specs=(P("x"), P("x"), P("x"), spec),
                             out_specs=P("x"), check_vma=False)(q, k, v, kernel)

    x = jax.ShapeDtypeStruct((H, L, D), F32, sharding=NamedSharding(mesh, P("x")))
    c = count_program(jax.jit(f), x, x, x, platform="tpu")
    if not same:
        assert c.flops == 0 and "differs between the 2 devices of its shard_map" in c.not_counted[0].note
        return
    rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
    tiles = sum(bool((cols <= rows)[i:i + B, j:j + B].any()) for i in range(0, L, B) for j in range(0, L, B))
    assert not c.not_counted and c.kernel_flops == 2 * tiles * 2 * (2 * B * B * D)   # 2 devices, a head each


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


def test_an_mlir_string_reads_back_as_its_bytes():
    """mlir_string_bytes against MLIR's own escaping rule (printEscapedString: a backslash doubled, printable ASCII
    but the quote as itself, every other byte \\XX), over random bytes heavy in backslashes, quotes and hex
    letters, and the forms it also takes (\\" for a quote, UTF-8 text)."""
    import random

    from maxflops.xla.stablehlo import mlir_string_bytes

    def printed(b: bytes) -> str:
        return "".join("\\\\" if c == 0x5C else chr(c) if 32 <= c < 127 and c != 0x22 else f"\\{c:02X}" for c in b)

    rng = random.Random(0)
    for _ in range(2000):
        b = bytes(rng.choice([0x5C, 0x22, 0x35, 0x43, 0x78, 0x41, 0, 255, rng.randrange(256)])
                  for _ in range(rng.randrange(40)))
        assert mlir_string_bytes(printed(b)) == b
    assert mlir_string_bytes('a\\"b') == b'a"b'
    assert mlir_string_bytes("é\\41") == "é".encode() + b"A"
    assert mlir_string_bytes("\\\\\\41\\5c") == b"\\A\\"
