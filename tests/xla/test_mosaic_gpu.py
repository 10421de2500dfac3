"""Pallas Mosaic GPU kernels (``mosaic_gpu_v2``), exported for a GPU on this CPU machine and priced by running their
module over the launch, block by block and warpgroup by warpgroup (maxflops.xla.mosaic_gpu).

Held against code nobody here wrote: jax's FlashAttention 3 for Hopper (``jax.experimental.pallas.ops.gpu.
attention_mgpu``), forward causal and full, training full (its backward refuses a causal mask), tiles of its own;
the price equals a brute-force count of the dense mask's tiles times the matmuls per tile read from that kernel's
source (forward: QK^T and PV; its dq kernel: QK^T, dO V^T, dS K; its dkv kernel: QK^T, dO V^T, P^T dO, dS^T Q). jax's
persistent Hopper matmul (``hopper_matmul_mgpu``, a loop over output tiles, clusters of two or none) costs exactly
2 M N K, and so does jax's Blackwell matmul (``blackwell_matmul_mgpu``: ``tcgen05.mma``, pairs of blocks, work
stealing). maxflops' analytic count with the same knobs equals the causal program. Unverified on a GPU: no device has run these programs. One shim: jax's attention asserts a CUDA
runtime version (to refuse a ptxas bug), which a CPU machine lacks; a version outside that range answers.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from maxflops.xla import count_program  # noqa: E402
from repo import needs_tokamax, tokamax_json  # noqa: E402

AM = pytest.importorskip("jax.experimental.pallas.ops.gpu.attention_mgpu")
HM = pytest.importorskip("jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu")

B, L, H, D = 1, 512, 2, 128
F16 = jnp.float16


@pytest.fixture
def cuda_runtime(monkeypatch):
    monkeypatch.setattr(AM, "cuda_versions", types.SimpleNamespace(cuda_runtime_get_version=lambda: 12092))


def tiles(L: int, bq: int, bk: int, causal: bool) -> int:
    """Tiles of bq x bk holding a visible (query, key) pair, from the dense mask."""
    rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
    mask = cols <= rows if causal else np.ones((L, L), bool)
    return sum(bool(mask[i:i + bq, j:j + bk].any()) for i in range(0, L, bq) for j in range(0, L, bk))


def fa3(causal: bool, train: bool, bq: int, bk: int, bwd=(64, 64, 64, 64)):
    cfg = AM.TuningConfig(block_q=bq, block_kv=bk, max_concurrent_steps=2, causal=causal,
                          **({} if causal else dict(block_q_dkv=bwd[0], block_kv_dkv=bwd[1], block_q_dq=bwd[2],
                                                    block_kv_dq=bwd[3])))
    f = lambda q, k, v: AM.attention(q, k, v, cfg)  # noqa: E731
    if not train:
        return f
    return lambda q, k, v: jax.grad(lambda q, k, v: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))(q, k, v)


per_tile = lambda bq, bk: 2 * bq * bk * D  # noqa: E731 - one tile matmul


@pytest.mark.parametrize("bq,bk", [(64, 64), (64, 128), (128, 64)])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_jax_flash_attention_3_forward_priced_as_its_tiles(cuda_runtime, causal, bq, bk):
    x = jax.ShapeDtypeStruct((B, L, H, D), F16)
    c = count_program(fa3(causal, False, bq, bk), x, x, x, platform="cuda")
    assert not c.not_counted, c.summary()
    # each of the kernel's two compute warpgroups takes bq query rows and runs its key loop to its own last row
    assert c.kernel_flops == B * H * tiles(L, bq, bk, causal) * 2 * per_tile(bq, bk)
    (k,) = c.kernels
    assert f"grid 1x{L // (2 * bq)}x{H} of 3 warpgroups" in k.note


@pytest.mark.parametrize("bwd", [(64, 64, 64, 64), (64, 128, 128, 64)], ids=["64s", "dkv q64 k128, dq q128 k64"])
def test_jax_flash_attention_3_training_priced_as_its_tiles(cuda_runtime, bwd):
    x = jax.ShapeDtypeStruct((B, L, H, D), F16)
    c = count_program(fa3(False, True, 64, 64, bwd), x, x, x, platform="cuda")
    assert not c.not_counted, c.summary()
    want = B * H * (tiles(L, 64, 64, False) * 2 * per_tile(64, 64) + tiles(L, *bwd[:2], False) * 4 *
                    per_tile(*bwd[:2]) + tiles(L, *bwd[2:], False) * 3 * per_tile(*bwd[2:]))
    assert c.kernel_flops == want
    assert len(c.kernels) == 3


def test_engine_blocked_equals_the_flash_attention_3_program(cuda_runtime):
    from maxflops.proofkit.case import component, engine

    x = jax.ShapeDtypeStruct((B, L, H, D), F16)
    c = count_program(fa3(True, False, 64, 128), x, x, x, platform="cuda")
    b = engine("prefill", max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=H,
               head_dim=D, attention_impl="blocked", attention_block_q=64, attention_block_kv=128)
    assert component(b, "core_attention")[1] == c.kernel_flops


@pytest.mark.parametrize("m,n,k,cluster", [(512, 1024, 256, None), (768, 1280, 128, None),
                                           (1024, 512, 128, "M")], ids=["square", "oblong", "clusters of 2"])
def test_jax_persistent_hopper_matmul_costs_2mnk(monkeypatch, m, n, k, cluster):
    monkeypatch.setattr(HM, "get_num_sms", lambda: 132)              # an H100's SMs: the persistent grid
    cfg = HM.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=4,
                          cluster_dimension=getattr(HM.MatmulDimension, cluster) if cluster else None)
    a, b = jax.ShapeDtypeStruct((m, k), jnp.bfloat16), jax.ShapeDtypeStruct((k, n), jnp.bfloat16)
    c = count_program(lambda a, b: HM.matmul(a, b, None, cfg), a, b, platform="cuda")
    assert not c.not_counted, c.summary()
    assert c.kernel_flops == 2 * m * n * k
    # two compute warpgroups of 128 rows each: one output tile of 256 x 128 per block that takes one
    assert f"MMAs in {(m // 256) * (n // 128)} of its 132 blocks" in c.kernels[0].note


@pytest.mark.parametrize("m,n,k,collective,tile_n", [(512, 512, 512, False, 128), (1024, 768, 256, False, 256),
                                                      (1024, 1024, 512, True, 128)],
                         ids=["square", "tiles of 128x256", "pairs of blocks (cta_group::2)"])
def test_jax_blackwell_matmul_costs_2mnk(m, n, k, collective, tile_n):
    """A tcgen05.mma's M and N are read from its instruction descriptor, K from its kind; a pair of blocks
    (``collective``) issues one MMA of 256 rows from its first block; work stealing (cluster launch control)
    answered "nothing stolen" runs each launched tile once."""
    BM = pytest.importorskip("jax.experimental.pallas.ops.gpu.blackwell_matmul_mgpu")
    cfg = BM.TuningConfig(tile_m=128, tile_n=tile_n, tile_k=64, max_concurrent_steps=2, collective=collective)
    a, b = jax.ShapeDtypeStruct((m, k), jnp.bfloat16), jax.ShapeDtypeStruct((k, n), jnp.bfloat16)
    c = count_program(lambda a, b: BM.matmul_kernel(a, b, cfg), a, b, platform="cuda")
    assert not c.not_counted, c.summary()
    assert c.kernel_flops == 2 * m * n * k
    blocks = m * n // (128 * tile_n) // (2 if collective else 1)     # a pair's tile is twice as wide
    assert f"MMAs in {blocks // 2 if collective else blocks} of its {blocks} blocks" in c.kernels[0].note


_TOKAMAX = r"""
import json, types
import jax, jax.numpy as jnp
import tokamax
from tokamax._src import gpu_utils, mosaic_gpu as tokamax_mgpu
from tokamax._src.ops.attention import pallas_mosaic_gpu as fwd, pallas_mosaic_gpu_vjp as vjp
from tokamax._src.ops.attention import pallas_mosaic_gpu_kernel_sm90 as sm90, pallas_mosaic_gpu_vjp_common as vjpc
from maxflops.xla import count_program

# tokamax picks its kernel from the device's compute capability and sizes its persistent grid by the device's SMs,
# which a CPU lacks: a Hopper with an H100's 132 SMs answers, and its cross-compile switch lets it lower (nothing runs)
gpu_utils.is_sm80 = lambda device=None: False
gpu_utils.is_sm90 = lambda device=None: True
tokamax_mgpu.backend = types.SimpleNamespace(get_default_device=lambda: types.SimpleNamespace(
    core_count=132, platform="gpu", device_kind="NVIDIA H100 80GB HBM3"))
dev = jax.sharding.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=132, platform="cuda")
mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=dev)
x = jax.ShapeDtypeStruct((1, 1024, 2, 128), jnp.bfloat16)
out = {}
for bq, bk in ((64, 128), (128, 64)):
    impl = fwd.PallasMosaicGpuFlashAttention(config=sm90.Config(block_q=bq, block_kv=bk), vjp=vjp.PallasMosaicGpuFlashAttentionVjp(
        config=vjpc.Config(block_q_dkv=bq, block_kv_dkv=bk, block_q_dq=bk, block_kv_dq=bq)))
    for causal in (True, False):
        f = lambda q, k, v: tokamax.dot_product_attention(q, k, v, is_causal=causal, implementation=(impl,))
        g = lambda q, k, v: jax.grad(lambda q, k, v: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))(q, k, v)
        for train, fn in ((False, f), (True, g)):
            with tokamax.config.cross_compile(True), jax.sharding.use_abstract_mesh(mesh):
                c = count_program(fn, x, x, x, platform="cuda")
            out[f"{bq} {bk} {causal} {train}"] = dict(flops=[d.flops for d in c.kernels],
                                                      notes=[d.note for d in c.kernels],
                                                      not_counted=[d.note for d in c.not_counted])
print(json.dumps(out))
"""


@needs_tokamax("lowers tokamax's Mosaic GPU attention for a Hopper GPU and prices it")
def test_tokamax_mosaic_gpu_attention_priced_as_its_tiles():
    """tokamax's FlashAttention for Hopper (its ``mosaic_gpu`` implementation, tiles set here), exported for a GPU:
    the forward kernel priced as its key loops run. Read from its source (``pallas_mosaic_gpu_kernel_sm90``): a block
    holds two warpgroups of ``block_q`` rows and both run the key loop to the block's last row (``ub = cdiv((qi + 1)
    * 2 * block_q, block_kv)``), so under a causal mask the lower warpgroup visits masked tiles the dense mask's
    count would not; its full-mask backward costs 3 matmuls a tile for dq and 4 for dk and dv. The causal backward is
    counted (no kernel left out) but held here only by being no larger than the full one."""
    got = tokamax_json(_TOKAMAX, timeout=900)
    L, H, D = 1024, 2, 128
    square = 2 * L * L * D * H                                       # one matmul over the whole square, all heads
    for bq, bk in ((64, 128), (128, 64)):
        loop = sum(2 * -(-(qi + 1) * 2 * bq // bk) for qi in range(L // (2 * bq)))   # key steps, both warpgroups
        causal_fwd = H * loop * 2 * (2 * bq * bk * D)
        for causal in (True, False):
            for train in (False, True):
                case = got[f"{bq} {bk} {causal} {train}"]
                assert not case["not_counted"], case
                assert len(case["flops"]) == (3 if train else 1)
                assert "flash_attention_sm90_mosaic_gpu" in case["notes"][0]
                assert case["flops"][0] == (causal_fwd if causal else 2 * square)
                if train and not causal:
                    assert sorted(case["flops"][1:]) == [3 * square, 4 * square]
                if train and causal:
                    full = got[f"{bq} {bk} False True"]["flops"]
                    assert 0 < sum(case["flops"][1:]) < sum(full[1:])
