"""Cross-attention's proof side: its reference kernel (q from the text, k and v from the image tokens, every pair,
o_proj), its Flax layer, its part of the reduced model and its bench case. Imports jax; the family's analytic module
does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import dense


def cross_attention(p, x, image, H, Hkv):
    """x [B, L, D] the text, image [B, T, D] the image tokens (the vision tower's projected outputs). Parameters: wq
    [D, H hd], wk and wv [D, Hkv hd], wo [H hd, D]."""
    B, L, D = x.shape
    T = image.shape[1]
    hd = p["wq"].shape[1] // H
    with jax.named_scope("qkv_proj"):
        q = dense(x, p["wq"]).reshape(B, L, Hkv, H // Hkv, hd)
        k, v = (dense(image, p[w]).reshape(B, T, Hkv, hd) for w in ("wk", "wv"))
    with jax.named_scope("core_attention"):
        s = jax.nn.softmax(jnp.einsum("blkgd,btkd->bkglt", q, k), axis=-1)
        o = jnp.einsum("bkglt,btkd->blkgd", s, v)
    with jax.named_scope("out_proj"):
        return dense(o.reshape(B, L, H * hd), p["wo"])


KERNELS = (cross_attention,)


def params(p, D, H, Hkv, hd):
    return {"wq": p("wq", (D, H * hd)), "wk": p("wk", (D, Hkv * hd)), "wv": p("wv", (D, Hkv * hd)),
            "wo": p("wo", (H * hd, D))}


def layer(c, kind, p, h, top_idx, aux):
    """The layer's image tokens are a parameter [B, T, D] (a stated input whose gradient flows back, as to the
    projector that makes them); each packed document attends them."""
    B, _, D = h.shape
    H, Hkv = c["num_query_heads"], c["num_kv_heads"]
    image = p("image_tokens", (B, c["cross_attention_tokens"], D))
    return cross_attention(params(p, D, H, Hkv, c["head_dim"]), h, image, H, Hkv), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's cross-attention layers attend 5 image tokens (none where the model has none)."""
    return dict(cross_attention_tokens=min(c["cross_attention_tokens"], 5))


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


def bench_cases(ctx) -> list:
    """Llama 3.2 Vision's form at the preset's sizes: H heads over H / 4 KV heads (H >= 4) attending L / 4 image
    tokens."""
    p, arr = ctx.p, ctx.arr
    B, L, D, H = p["B"], p["L"], p["D"], p["H"]
    Hkv, T = max(1, H // 4), max(1, L // 4)
    if D % H or H % Hkv:
        return []
    hd = D // H

    def run(mesh):
        prm = {"wq": arr(D, H * hd), "wk": arr(D, Hkv * hd), "wv": arr(D, Hkv * hd), "wo": arr(H * hd, D)}
        return jax.jit(lambda prm, x, img: cross_attention(prm, x, img, H, Hkv)), [prm, arr(B, L, D), arr(B, T, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="X", ffn_layer_pattern="-", emb_dim=D, per_device_batch_size=B,
                   max_target_length=L, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, cross_attention_tokens=T)
        return components(b, "qkv_proj", "core_attention", "out_proj")

    return [Case("cross-attention to image tokens (Mllama, reference kernel)", f"B={B} L={L} image tokens {T} "
                 f"heads={H}/{Hkv} D={D}", run, analytic)]
