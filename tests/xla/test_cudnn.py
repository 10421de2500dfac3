"""cuDNN's fused attention priced from its backend config, on the programs jax itself lowers for a GPU.

jax.nn.dot_product_attention(implementation="cudnn") is exported for CUDA on this CPU machine; the one shim
(maxflops.xla.cudnn.assume_cudnn) answers jax's questions about the local cuDNN version and compute capability, so
the custom calls and their backend configs are exactly what jax writes. Held against:
- a brute-force count from the dense mask (numpy, jax.nn's own window rule): a tile costs its matmuls when any of its
  (query, key) pairs is visible; forward QK^T and PV, backward the recomputed QK^T, dO V^T, P^T dO, dS K, dS^T Q;
- maxflops' analytic count with the same knobs (attention_impl='blocked', 128 x 128 tiles).
The tile is an assumption (cuDNN picks its own at run time): unverified on a GPU until a device run.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from maxflops.xla import count_program  # noqa: E402
from maxflops.xla.cudnn import TILE, assume_cudnn, visited_elements  # noqa: E402


def dense_mask(T: int, S: int, causal: bool, left: int | None) -> np.ndarray:
    """jax.nn.dot_product_attention's mask: causal k <= q; a left window l: q <= k + l."""
    q = np.arange(T)[:, None]
    k = np.arange(S)[None, :]
    m = np.ones((T, S), bool)
    if causal:
        m &= k <= q
    if left is not None:
        m &= q <= k + left
    return m


def brute_elements(mask: np.ndarray, tile: int) -> int:
    """Elements of the tiles holding a visible pair (T x S, edge tiles clipped)."""
    return sum(mask[q0:q0 + tile, k0:k0 + tile].size for q0 in range(0, mask.shape[0], tile)
               for k0 in range(0, mask.shape[1], tile) if mask[q0:q0 + tile, k0:k0 + tile].any())


@pytest.mark.parametrize("T,S", [(256, 256), (300, 300), (1024, 1024), (384, 512), (200, 70)])
@pytest.mark.parametrize("causal,left", [(False, None), (True, None), (True, 0), (True, 63), (True, 127),
                                         (True, 200), (True, 1000)])
@pytest.mark.parametrize("tile", [64, 128])
def test_visited_tiles_equal_the_dense_mask(T, S, causal, left, tile):
    mask = "CAUSAL" if causal else "NO_MASK"
    window = 0 if left is None else left + 1            # jax sets cuDNN's sliding_window_length to l + 1
    assert visited_elements(T, S, mask, window, tile) == brute_elements(dense_mask(T, S, causal, left), tile)


def _fn(causal, left, train, lengths=False):
    def f(q, k, v, *seq):
        kw = dict(query_seq_lengths=seq[0], key_value_seq_lengths=seq[0]) if lengths else {}
        return jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation="cudnn",
                                            local_window_size=None if left is None else (left, 0), **kw)

    if not train:
        return f
    return lambda q, k, v, *seq: jax.grad(lambda q, k, v: f(q, k, v, *seq).astype(jnp.float32).sum(),
                                          argnums=(0, 1, 2))(q, k, v)


def _specs(B, L, H, Hkv, qh, vh):
    return (jax.ShapeDtypeStruct((B, L, H, qh), jnp.bfloat16), jax.ShapeDtypeStruct((B, L, Hkv, qh), jnp.bfloat16),
            jax.ShapeDtypeStruct((B, L, Hkv, vh), jnp.bfloat16))


CASES = [  # B, L, H, Hkv, qH, vH, causal, left window
    (2, 1024, 4, 4, 64, 64, True, None),
    (1, 1024, 8, 2, 128, 128, True, None),          # GQA 4:1
    (2, 768, 4, 1, 64, 64, False, None),            # MQA, no mask
    (1, 1024, 4, 2, 128, 128, True, 200),           # sliding window 201, not a multiple of the tile
    (1, 640, 2, 2, 192, 128, True, None),           # MLA's widths: qH 192, vH 128 (jax's cuDNN function itself)
]


def _cudnn_fn(causal, left, train, layout="BTNH"):
    """jax's cuDNN attention called directly (jax.nn's front door wants qH == vH); BNTH layout when asked."""
    from jax._src.cudnn.fused_attention_stablehlo import MaskType, dot_product_attention

    def f(q, k, v):
        if layout == "BNTH":
            q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
        out = dot_product_attention(q, k, v, scale=0.1, mask_type=MaskType.CAUSAL if causal else MaskType.NO_MASK,
                                    qkv_layout=layout, sliding_window_length=None if left is None else left + 1)
        return out

    if not train:
        return f
    return lambda q, k, v: jax.grad(lambda q, k, v: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))(q, k, v)


@pytest.mark.parametrize("B,L,H,Hkv,qh,vh,causal,left", CASES)
@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
def test_jax_cudnn_program_priced_as_its_tiles(B, L, H, Hkv, qh, vh, causal, left, train):
    fn = _fn(causal, left, train) if qh == vh else _cudnn_fn(causal, left, train)
    with assume_cudnn():
        c = count_program(fn, *_specs(B, L, H, Hkv, qh, vh), platform="cuda")
    assert not c.not_counted, c.summary()
    elems = brute_elements(dense_mask(L, L, causal, left), TILE)
    forward = 2 * B * H * elems * (qh + vh)
    backward = 2 * B * H * elems * (3 * qh + 2 * vh)
    names = [k.note.split(":")[0] for k in c.kernels]
    if train:
        assert sorted(names) == ["cuDNN flash attention backward", "cuDNN flash attention forward"], c.summary()
        assert c.kernel_flops == forward + backward
    else:
        assert names == ["cuDNN flash attention forward"] and c.kernel_flops == forward
    assert c.flops == c.kernel_flops                 # nothing else in the program is a matmul


@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
@pytest.mark.parametrize("H,Hkv,left", [(4, 4, None), (8, 2, 200)])
def test_engine_blocked_equals_the_cudnn_program(train, H, Hkv, left):
    from maxflops.proofkit.case import component, engine

    B, L, d = 2, 1024, 128
    with assume_cudnn():
        c = count_program(_fn(True, left, train), *_specs(B, L, H, Hkv, d, d), platform="cuda")
    window = {} if left is None else dict(attention_layer_pattern="L", sliding_window_size=left + 1)
    b = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B, num_query_heads=H,
               num_kv_heads=Hkv, head_dim=d, attention_impl="blocked", attention_block_q=TILE,
               attention_block_kv=TILE, **(dict(flash_backward_recompute=True) if train else {}), **window)
    assert component(b, "core_attention")[1] == c.kernel_flops


@pytest.mark.parametrize("train", [False, True], ids=["forward", "train"])
def test_the_bnth_layout_reads_the_same(train):
    """Heads before tokens (qkv_layout BNTH): other dimension numbers in the config, the same matmuls."""
    B, L, H, d = 1, 512, 4, 64
    with assume_cudnn():
        a = count_program(_cudnn_fn(True, 100, train, "BNTH"), *_specs(B, L, H, H, d, d), platform="cuda")
        b = count_program(_cudnn_fn(True, 100, train), *_specs(B, L, H, H, d, d), platform="cuda")
    elems = brute_elements(dense_mask(L, L, True, 100), TILE)
    assert a.kernel_flops == b.kernel_flops == 2 * B * H * elems * (2 * d + (5 * d if train else 0))


def test_padding_and_the_assumed_tile_are_said():
    with assume_cudnn():
        c = count_program(_fn(True, None, False, lengths=True), *_specs(2, 512, 2, 2, 64, 64),
                          jax.ShapeDtypeStruct((2,), jnp.int32), platform="cuda")
    note = c.kernels[0].note
    assert "mask PADDING_CAUSAL" in note and "padding lengths are run-time data" in note
    assert "128 x 128 tiles assumed" in note


def test_a_fused_attention_is_not_taken_for_a_gemm():
    """Its backend config carries dot dimension numbers (its two matmuls'), as a cuBLAS gemm's does: it was once
    counted as one gemm of its output's shape."""
    with assume_cudnn():
        c = count_program(_fn(False, None, False), *_specs(1, 256, 2, 2, 64, 64), platform="cuda")
    assert c.flops == c.kernel_flops == 2 * 2 * 256 * 256 * 128


def test_programs_a_gpu_compiled_price_as_their_bench_rows():
    """The device check keeps each custom-kernel row's compiled program (programs.zip, committed as
    benchmarks/device_programs/<device kind>.zip beside the rows in benchmarks/device_rows.jsonl): recounted here,
    every cuDNN call in it is priced and the program equals the row's analytic hardware FLOPs."""
    import json
    import re
    import zipfile

    from maxflops.xla.hlo_count import count_module
    from maxflops.xla.hlo_parse import parse_hlo_module
    from repo import ROOT

    archives = sorted((ROOT / "benchmarks" / "device_programs").glob("*.zip"))
    rows_file = ROOT / "benchmarks" / "device_rows.jsonl"
    if not archives:
        pytest.skip("no GPU run has saved its programs yet (benchmarks/device_programs/ holds none): the device "
                    "check makes them")
    rows = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    by_name = {re.sub(r"[^A-Za-z0-9.]+", "_", r["kernel"]).strip("_") + ".hlo": r for r in rows}
    checked = 0
    for archive in archives:
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                text = z.read(member).decode()
                if "__cudnn$fmha" not in text or member not in by_name:
                    continue
                c = count_module(parse_hlo_module(text), report=True)
                assert not c.not_counted, (member, [d.note for d in c.not_counted])
                assert c.matmul_flops == by_name[member]["hardware_flops"], member
                checked += 1
    assert checked, f"{archives}: no cuDNN program matching a row of {rows_file.name}"
