"""Each reference kernel alone, over several shapes: XLA's loop-aware matmul count == the engine's hardware count.

Shapes cover odd lengths, a partial last chunk, windows, chunks and top-k above and below the length, GQA
groups of 1 and > 1 and MQA, forward, train (gradients of every input) and decode. The expected figure is the
engine's hardware component of a one-layer config built from the same shapes.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import maxflops
from maxflops.families.attention import proof as A
from maxflops.families.dsa import proof as S
from maxflops.families.gdn import proof as G
from maxflops.proofkit import kernels as K
from maxflops.xla.hlo import count_lowered

pytestmark = pytest.mark.slow

RNG = np.random.default_rng(0)


def arr(*shape):
    return jnp.asarray(RNG.normal(size=shape), jnp.float32)


def engine(mode="prefill", **kw):
    import warnings

    base = dict(num_decoder_layers=1, emb_dim=16, vocab_size=32, mlp_dim=24, mode=mode)
    with warnings.catch_warnings():  # the cases give every mixer's keys, zero where a case has no such layer
        warnings.simplefilter("ignore", maxflops.InertKeyWarning)
        return maxflops.count(maxflops.model_config(**{**base, **kw})).hardware_components


def xla(fn, *args, train=False):
    if train:  # gradients of every input: each forward matmul adds its two backward matmuls
        forward = fn
        fn = jax.grad(lambda *a: jnp.sum(forward(*a) ** 2), argnums=tuple(range(len(args))))
    return count_lowered(fn, *args).matmul_flops


LETTER = {"global": "G", "window": "L", "chunk": "C", "bidirectional": "G"}

ATTN = [  # (mixer, span, L, H, Hkv, impl, bq, bkv)
    ("global", 0, 11, 4, 2, "ideal", 1, 1),
    ("global", 0, 11, 6, 2, "blocked", 4, 3),
    ("global", 0, 7, 2, 2, "dense", 1, 1),
    ("window", 3, 11, 4, 1, "ideal", 1, 1),
    ("window", 20, 9, 4, 4, "blocked", 2, 5),
    ("window", 4, 13, 6, 3, "blocked", 5, 2),
    ("chunk", 4, 11, 4, 2, "ideal", 1, 1),  # chunks of 4, 4, 3
    ("chunk", 16, 9, 2, 1, "blocked", 4, 4),
    ("chunk", 5, 13, 4, 2, "dense", 1, 1),
    ("bidirectional", 0, 9, 4, 2, "blocked", 4, 4),
]


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("mixer,span,L,H,hkv,impl,bq,bkv", ATTN)
def test_attention(mixer, span, L, H, hkv, impl, bq, bkv, train):
    B, d = 2, 8
    q, k, v = arr(B, L, H, d), arr(B, L, hkv, d), arr(B, L, hkv, d)
    got = xla(lambda q, k, v: A.attention(q, k, v, mixer, span, impl, bq, bkv), q, k, v, train=train)
    exp = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B,
                 num_query_heads=H, num_kv_heads=hkv, head_dim=d, attention_layer_pattern=LETTER[mixer],
                 sliding_window_size=span if mixer == "window" else 0,
                 chunk_attn_window_size=span if mixer == "chunk" else 0, causal=mixer != "bidirectional",
                 attention_impl=impl, attention_block_q=bq, attention_block_kv=bkv)
    assert got == exp["core_attention"]


def test_flash_backward_recomputes_qk():
    B, L, H, d = 2, 9, 4, 8
    q, k, v = arr(B, L, H, d), arr(B, L, 2, d), arr(B, L, 2, d)
    got = xla(lambda q, k, v: A.attention(q, k, v, "global", 0, "blocked", 4, 4, flash=True), q, k, v, train=True)
    exp = engine("train", max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=2,
                 head_dim=d, attention_impl="blocked", attention_block_q=4, attention_block_kv=4,
                 flash_backward_recompute=True)
    assert got == exp["core_attention"]


@pytest.mark.parametrize("mixer,span,impl,bkv", [("global", 0, "ideal", 1), ("window", 4, "ideal", 1),
                                                 ("chunk", 5, "ideal", 1), ("global", 0, "dense", 1),
                                                 ("window", 4, "blocked", 3), ("chunk", 5, "blocked", 2)])
@pytest.mark.parametrize("kv", [0, 3, 12])
def test_attention_decode(mixer, span, impl, bkv, kv):
    B, H, d = 3, 4, 8
    q, k, v = arr(B, 1, H, d), arr(B, kv + 1, 2, d), arr(B, kv + 1, 2, d)
    got = xla(lambda q, k, v: A.attention_decode(q, k, v, mixer, span, impl, bkv), q, k, v)
    exp = engine("decode", decode_kv_length=kv, per_device_batch_size=B, num_query_heads=H, num_kv_heads=2,
                 head_dim=d, attention_layer_pattern=LETTER[mixer],
                 sliding_window_size=span if mixer == "window" else 0,
                 chunk_attn_window_size=span if mixer == "chunk" else 0, attention_impl=impl,
                 attention_block_kv=bkv)
    assert got == exp["core_attention"]


MLA = dict(attention_type="mla", num_query_heads=4, num_kv_heads=4, q_lora_rank=12, kv_lora_rank=10,
           qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=6)


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl", ["ideal", "gather_k"])
@pytest.mark.parametrize("K_,L", [(4, 11), (16, 9), (1, 5)])
def test_dsa_sparse_attention(K_, L, impl, train):
    B, H, dqk, dv = 2, 4, 10, 6
    q, k, v = arr(B, L, H, dqk), arr(B, L, H, dqk), arr(B, L, H, dv)
    scores = jnp.where(jnp.tril(jnp.ones((L, L), bool)), arr(B, L, L), K.NEG)
    top = S.topk_indices(scores, K_)
    got = xla(lambda q, k, v: S.dsa_attention(q, k, v, top, K_, impl), q, k, v, train=train)
    exp = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B,
                 use_sparse_indexer=True, index_topk=K_, dsa_impl=impl, **MLA)
    assert got == exp["core_attention"]


@pytest.mark.parametrize("impl,bq,bkv", [("ideal", 1, 1), ("dense", 1, 1), ("blocked", 4, 3)])
@pytest.mark.parametrize("q_lora", [12, 0])
def test_dsa_indexer(q_lora, impl, bq, bkv):
    B, L, D, n, hd = 2, 11, 16, 3, 4
    x, q_lat = arr(B, L, D), arr(B, L, q_lora or D)
    p = {"idx_wq": arr(q_lora or D, n * hd), "idx_wk": arr(D, hd), "idx_w": arr(D, n)}
    got = count_lowered(lambda p, x, ql: S.indexer_scores(p, x, ql, n, hd, impl, bq, bkv), p, x, q_lat)
    exp = engine(max_target_length=L, per_device_batch_size=B, use_sparse_indexer=True, index_n_heads=n,
                 index_head_dim=hd, index_topk=4, attention_impl=impl, attention_block_q=bq,
                 attention_block_kv=bkv, **{**MLA, "q_lora_rank": q_lora})
    scoped = got.by_scope(["indexer_proj", "indexer_score"])
    assert (scoped["indexer_proj"], scoped["indexer_score"]) == (exp["indexer_proj"], exp["indexer_score"])


@pytest.mark.parametrize("absorbed", [False, True])
@pytest.mark.parametrize("q_lora", [12, 0])
@pytest.mark.parametrize("train", [False, True])
def test_mla(absorbed, q_lora, train):
    B, L, D, H, kl, nope, rope, v = 2, 9, 16, 4, 10, 6, 4, 6
    p = {"wkv_a": arr(D, kl + rope), "wkv_b": arr(kl, H * (nope + v)), "wo": arr(H * v, D)}
    p |= {"wq_a": arr(D, q_lora), "wq_b": arr(q_lora, H * (nope + rope))} if q_lora else {"wq": arr(D, H * (nope + rope))}

    def layer(p, x):
        if absorbed:
            q, k, vv, _ = A.mla_absorbed_qkv(p, x, H, q_lora, kl, nope, rope)
            with jax.named_scope("core_attention"):
                o = A.attention(q, k, vv, "global", 0, "ideal")
            return A.mla_absorbed_out(p, o, H, kl, nope)
        q, k, vv, _ = A.mla_qkv(p, x, H, q_lora, kl, nope, rope, v)
        with jax.named_scope("core_attention"):
            o = A.attention(q, k, vv, "global", 0, "ideal")
        with jax.named_scope("out_proj"):
            return K.dense(o.reshape(B, L, -1), p["wo"])

    x = arr(B, L, D)
    fn = jax.grad(lambda p, x: jnp.sum(layer(p, x) ** 2), argnums=(0, 1)) if train else layer
    got = count_lowered(fn, p, x).by_scope(["qkv_proj", "core_attention", "out_proj"])
    exp = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B, emb_dim=D,
                 mla_absorbed=absorbed, **{**MLA, "q_lora_rank": q_lora, "kv_lora_rank": kl})
    assert {k: got[k] for k in ("qkv_proj", "core_attention", "out_proj")} == \
        {k: exp[k] for k in ("qkv_proj", "core_attention", "out_proj")}


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("L,ker", [(9, 3), (2, 4), (13, 1)])
def test_gated_delta_net(L, ker, train):
    B, D, nk, nv, dk, dv = 2, 16, 2, 4, 4, 3
    p = {"in_qkvz": arr(D, 2 * nk * dk + 2 * nv * dv), "in_ba": arr(D, 2 * nv),
         "conv": arr(ker, 1, 2 * nk * dk + nv * dv), "out": arr(nv * dv, D)}
    x = arr(B, L, D)
    fn = lambda p, x: G.gdn(p, x, nk, nv, dk, dv, ker)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(G.gdn(p, x, nk, nv, dk, dv, ker) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "gdn_conv", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x).by_scope(names)
    exp = engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B, emb_dim=D,
                 attention_layer_pattern="D", gdn_num_key_heads=nk, gdn_num_value_heads=nv, gdn_key_head_dim=dk,
                 gdn_value_head_dim=dv, gdn_conv_kernel_dim=ker)
    assert {n: got[n] for n in names} == {n: exp[n] for n in names}


@pytest.mark.parametrize("gated", [True, False])
@pytest.mark.parametrize("impl,cf", [("ideal", 1.0), ("capacity", 1.25), ("capacity", 0.5), ("dense", 1.0)])
@pytest.mark.parametrize("shared,gate", [(0, False), (2, False), (1, True)])
@pytest.mark.parametrize("latent", [0, 5])
def test_moe(impl, cf, gated, shared, gate, latent):
    """Every moe_impl, gated or not, with shared experts and their gate, and as a latent MoE (experts on a 5-wide
    latent behind D -> 5 and 5 -> D): XLA's count of the train step == the engine's, component by component."""
    B, L, D, E, k, F = 2, 7, 16, 6, 2, 8
    X = latent or D
    names = ["up", "down"] + (["gate"] if gated else [])
    p = {"router": arr(D, E)} | {f"experts_{n}": arr(E, *((F, X) if n == "down" else (X, F))) for n in names}
    if latent:
        p |= {"latent_in": arr(D, X), "latent_out": arr(X, D)}
    for i in range(shared):
        p |= {f"shared{i}_{n}": arr(*((F, D) if n == "down" else (D, F))) for n in names}
    if gate:
        p["shared_gate"] = arr(D, 1)
    x = arr(B, L, D)
    fn = jax.grad(lambda p, x: jnp.sum(K.moe(p, x, E, k, gated, impl, cf, shared, gate) ** 2), argnums=(0, 1))
    scopes = ["moe_router", "moe_routed", "moe_shared", "moe_latent_proj"]
    got = count_lowered(fn, p, x).by_scope(scopes)
    exp = engine("train", max_target_length=L, per_device_batch_size=B, emb_dim=D, num_experts=E,
                 num_experts_per_tok=k, moe_mlp_dim=F, shared_experts=shared, shared_expert_gate=gate,
                 moe_impl=impl, capacity_factor=cf, mlp_activations=("silu", "linear") if gated else ("gelu",),
                 moe_latent_size=latent)
    assert {n: got[n] for n in scopes} == {n: exp.get(n, 0) for n in scopes}


@pytest.mark.parametrize("gated", [True, False])
def test_dense_mlp(gated):
    B, L, D, F = 2, 5, 16, 24
    p = {"up": arr(D, F), "down": arr(F, D)} | ({"gate": arr(D, F)} if gated else {})
    x = arr(B, L, D)
    got = xla(lambda p, x: K.mlp(p, x, gated), p, x, train=True)
    exp = engine("train", max_target_length=L, per_device_batch_size=B, emb_dim=D, mlp_dim=F,
                 mlp_activations=("silu", "linear") if gated else ("gelu",))
    assert got == exp["mlp"]
