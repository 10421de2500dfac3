"""Pallas GPU kernels lowered with Triton (``__gpu$xla.gpu.triton``), exported for a GPU on this CPU machine and
priced by running their Triton module over the launch grid (maxflops.xla.triton).

Held against code nobody here wrote: jax's own GPU flash attention (``jax.experimental.pallas.ops.gpu.attention``),
forward and training, causal and full, tiles of their own: the price equals a brute-force count of the dense mask's
tiles times the matmuls per tile read from that kernel's source (forward: QK^T and PV; its backward kernel: a dkv
loop with QK^T, dO V^T, P^T dO, dS^T Q and a dq loop with QK^T, dO V^T, dS K); the kernel run by the Pallas
interpreter on CPU equals dense attention; maxflops' analytic count with the same knobs equals the program; a
kernel that skips blocks (``pl.when`` on its program ids) costs the blocks it runs. Unverified on a GPU: no device
has run these programs.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402

from maxflops.xla import count_program  # noqa: E402
from repo import needs_tokamax, tokamax_json  # noqa: E402

A = pytest.importorskip("jax.experimental.pallas.ops.gpu.attention")
pltr = pytest.importorskip("jax.experimental.pallas.triton")

F32 = jnp.float32


def tiles(L: int, bq: int, bk: int, causal: bool) -> int:
    """Tiles of bq x bk holding a visible (query, key) pair, from the dense mask."""
    rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
    mask = cols <= rows if causal else np.ones((L, L), bool)
    return sum(bool(mask[i:i + bq, j:j + bk].any()) for i in range(0, L, bq) for j in range(0, L, bk))


def mha_fn(causal, train, bs, interpret=False):
    def f(q, k, v):
        return A.mha(q, k, v, None, causal=causal, block_sizes=bs, interpret=interpret)

    if not train:
        return f
    return lambda q, k, v: jax.grad(lambda q, k, v: f(q, k, v).sum(), argnums=(0, 1, 2))(q, k, v)


B, L, H, D = 1, 512, 2, 64


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
@pytest.mark.parametrize("fwd,dkv,dq", [((64, 32), (32, 32), (32, 32)), ((32, 64), (16, 32), (32, 64))],
                         ids=["q64 k32", "q32 k64, backward tiles of their own"])
def test_jax_gpu_flash_attention_priced_as_its_tiles(causal, train, fwd, dkv, dq):
    bs = A.BlockSizes(block_q=fwd[0], block_k=fwd[1], block_q_dkv=dkv[0], block_kv_dkv=dkv[1], block_q_dq=dq[0],
                      block_kv_dq=dq[1])
    x = jax.ShapeDtypeStruct((B, L, H, D), F32)
    c = count_program(mha_fn(causal, train, bs), x, x, x, platform="cuda")
    assert not c.not_counted, c.summary()
    per_tile = lambda bq, bk: 2 * bq * bk * D                       # noqa: E731 - one tile matmul
    want = B * H * tiles(L, *fwd, causal) * 2 * per_tile(*fwd)
    if train:                                                        # its backward's dkv loop and dq loop
        want += B * H * (tiles(L, *dkv, causal) * 4 * per_tile(*dkv) + tiles(L, *dq, causal) * 3 * per_tile(*dq))
    assert c.kernel_flops == want
    names = sorted(d.note.split()[4].rstrip(":") for d in c.kernels)
    assert names == (["mha_backward", "mha_forward", "mha_preprocess_backward"] if train else ["mha_forward"])


@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
def test_engine_blocked_equals_the_triton_program(train):
    from maxflops.proofkit.case import component, engine

    t = 32
    bs = A.BlockSizes(block_q=t, block_k=t, block_q_dkv=t, block_kv_dkv=t, block_q_dq=t, block_kv_dq=t)
    x = jax.ShapeDtypeStruct((B, L, H, D), F32)
    c = count_program(mha_fn(True, train, bs), x, x, x, platform="cuda")
    b = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B, num_query_heads=H,
               num_kv_heads=H, head_dim=D, attention_impl="blocked", attention_block_q=t, attention_block_kv=t,
               **(dict(flash_backward_recompute=True, flash_backward_split=True) if train else {}))
    assert component(b, "core_attention")[1] == c.kernel_flops


def test_the_interpreted_kernel_is_causal_attention():
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((1, 128, 2, 16)), F32) for _ in range(3))
    bs = A.BlockSizes(block_q=32, block_k=32, block_q_dkv=32, block_kv_dkv=32, block_q_dq=32, block_kv_dq=32)
    got = mha_fn(True, False, bs, interpret=True)(q, k, v)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k)
    s = jnp.where(jnp.tril(jnp.ones((128, 128), bool)), s, -jnp.inf)
    want = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)
    assert np.allclose(np.asarray(got), np.asarray(want), atol=1e-4)


def test_a_kernel_that_skips_blocks_costs_the_blocks_it_runs():
    """A blocked matmul with a K loop, skipping the output blocks above the diagonal (``pl.when``)."""
    M, bm, bk = 128, 32, 16

    def kernel(x_ref, y_ref, o_ref):
        i, j = pl.program_id(0), pl.program_id(1)

        @pl.when(j <= i)
        def _():
            o_ref[...] = jax.lax.fori_loop(0, M // bk, lambda s, acc: acc + jnp.dot(
                x_ref[:, pl.ds(s * bk, bk)], y_ref[pl.ds(s * bk, bk), :]), jnp.zeros((bm, bm), F32))

    def f(x, y):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((M, M), F32), grid=(M // bm, M // bm),
                              in_specs=[pl.BlockSpec((bm, M), lambda i, j: (i, 0)),
                                        pl.BlockSpec((M, bm), lambda i, j: (0, j))],
                              out_specs=pl.BlockSpec((bm, bm), lambda i, j: (i, j)),
                              compiler_params=pltr.CompilerParams())(x, y)

    x = jax.ShapeDtypeStruct((M, M), F32)
    c = count_program(f, x, x, platform="cuda")
    n = M // bm
    assert c.kernel_flops == (n * (n + 1) // 2) * 2 * bm * bm * M
    assert "matmuls at 10 of its 16 program ids" in c.kernels[0].note


def test_both_readers_agree_on_a_triton_program():
    from maxflops.xla import stablehlo
    from maxflops.xla.hlo_count import count_module
    from maxflops.xla.hlo_parse import parse_hlo_module
    from maxflops.xla.program import _export, _stablehlo_to_hlo_text

    bs = A.BlockSizes(block_q=64, block_k=32, block_q_dkv=32, block_kv_dkv=32, block_q_dq=32, block_kv_dq=32)
    x = jax.ShapeDtypeStruct((B, L, H, D), F32)
    text = _export(jax.jit(mha_fn(True, True, bs)), "cuda", ((x, x, x), {})).mlir_module()
    direct = count_module(stablehlo.read_text(text), report=True)
    via_hlo = count_module(parse_hlo_module(_stablehlo_to_hlo_text(text)), report=True)
    assert direct.kernel_flops == via_hlo.kernel_flops > 0 and not direct.not_counted and not via_hlo.not_counted


_TOKAMAX = """
import json, sys
import jax, jax.numpy as jnp
import tokamax
from maxflops.xla import count_program

# tokamax picks its kernel and tiles from the device: an abstract H100 answers, and its cross-compile switch lets
# it lower here (nothing runs)
dev = jax.sharding.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=None, platform="cuda")
mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=dev)
x = jax.ShapeDtypeStruct((1, 512, 2, 64), jnp.bfloat16)
out = {}
for causal in (True, False):
    f = lambda q, k, v: tokamax.dot_product_attention(q, k, v, is_causal=causal, implementation="triton")
    with tokamax.config.cross_compile(True), jax.sharding.use_abstract_mesh(mesh):
        c = count_program(f, x, x, x, platform="cuda")
    out[str(causal)] = dict(kernel_flops=c.kernel_flops, notes=[d.note for d in c.kernels],
                            not_counted=[d.note for d in c.not_counted])
print(json.dumps(out))
"""


@needs_tokamax("lowers tokamax's Triton attention for a GPU and prices it")
def test_tokamax_triton_attention_priced_as_its_tiles():
    """tokamax's Triton flash attention (its own Pallas kernel, its own tiles for an H100), exported for a GPU here:
    priced as the tiles of 64 query rows its grid shows (2 heads x 8 programs) against the dense mask; its key
    tiles are tokamax's choice, and any that divides 64 gives this count (the causal bound falls on 64)."""
    got = tokamax_json(_TOKAMAX, timeout=600)
    for causal in (True, False):
        case = got[str(causal)]
        assert not case["not_counted"] and len(case["notes"]) == 1
        assert "pallas_flash_attention: grid 2x8x1" in case["notes"][0]
        assert case["kernel_flops"] == 2 * tiles(512, 64, 64, causal) * 2 * (2 * 64 * 64 * 64)
