"""The patch family's proof side: BLT's two cross-attentions as reference kernels (patch queries over their bytes;
bytes over their patch's keys), its Flax layers, its part of the reduced model and its bench case. Imports jax; the
family's analytic module does not.

The patches are a stated input: the kernels take a static layout, byte i in patch ``ids[i]`` (non-decreasing), and
the count does not depend on where the bounds fall. ``impl``: 'ideal' attends each patch's bytes alone (a varlen
kernel over the patches: k L pairs); 'dense' the whole rectangle, masked (transformers' eager attention).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import NEG, dense
from ...sequences import patches_of
from . import patch_width


def layout(L: int, P: int) -> np.ndarray:
    """A static layout of L bytes in P patches: byte i in patch i P // L (every patch one byte, and the last empty,
    when P = L + 1, as a patcher that opens a patch at every byte gives)."""
    return np.arange(L) * P // L


def _rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)


def _spans(ids, P):
    """Each patch's bytes as (first, end): empty where the patch has none."""
    first = np.searchsorted(ids, np.arange(P), "left")
    end = np.searchsorted(ids, np.arange(P), "right")
    return list(zip(first.tolist(), end.tolist()))


def _attend(q, k, v, ids, P, kq, impl, patches_query: bool):
    """q [B, Q, H, hd], k and v [B, K, Hkv, hd]. Patches as queries (Q = P kq, K = L) or bytes as queries (Q = L,
    K = P kq); each patch's kq positions meet the patch's bytes."""
    B, Q, H, hd = q.shape
    Hkv = k.shape[2]
    g = H // Hkv
    q = q.reshape(B, Q, Hkv, g, hd)
    if impl == "dense":
        slots = np.arange(P * kq) // kq
        keep = (slots[:, None] == ids[None, :]) if patches_query else (ids[:, None] == slots[None, :])
        s = jnp.where(jnp.asarray(keep), jnp.einsum("bqkgd,bskd->bkgqs", q, k), NEG)
        o = jnp.einsum("bkgqs,bskd->bqkgd", jax.nn.softmax(s, -1), v)
        return o.reshape(B, Q, H * hd)
    outs = []
    for j, (a, e) in enumerate(_spans(ids, P)):  # a varlen kernel over the patches
        qs, ks = (slice(j * kq, (j + 1) * kq), slice(a, e)) if patches_query else (slice(a, e),
                                                                                   slice(j * kq, (j + 1) * kq))
        rows = qs.stop - qs.start
        if a == e:  # an empty patch: its queries see nothing (and no byte asks its keys)
            if patches_query:
                outs.append(jnp.zeros((B, rows, Hkv, g, hd), q.dtype))
            continue
        s = jnp.einsum("bqkgd,bskd->bkgqs", q[:, qs], k[:, ks])
        outs.append(jnp.einsum("bkgqs,bskd->bqkgd", jax.nn.softmax(s, -1), v[:, ks]))
    return jnp.concatenate(outs, 1).reshape(B, Q, H * hd)


def patch_encode(p, h, ids, P, kq, H, Hkv, impl="ideal"):
    """BLT's local-encoder cross-attention: h [B, L, D] the bytes. Each patch's max over its bytes (no matmul; an empty
    patch 0), projected D -> kq D (``patch_proj``): P kq queries, which attend their patch's bytes; the output
    projection; the queries added. Parameters: w_patch [D, kq D], wq [D, H hd], wk and wv [D, Hkv hd], wo [H hd, D].
    Returns [B, P kq, D]."""
    B, L, D = h.shape
    hd = p["wq"].shape[1] // H
    pooled = jax.ops.segment_max(h.transpose(1, 0, 2), jnp.asarray(ids), P)
    pooled = jnp.where(jnp.isfinite(pooled), pooled, 0).transpose(1, 0, 2)  # [B, P, D]
    with jax.named_scope("patch_proj"):
        queries = dense(pooled, p["w_patch"]).reshape(B, P * kq, D)
    with jax.named_scope("qkv_proj"):
        q = dense(_rms(queries), p["wq"]).reshape(B, P * kq, H, hd)
        x = _rms(h)
        k, v = (dense(x, p[w]).reshape(B, L, Hkv, hd) for w in ("wk", "wv"))
    with jax.named_scope("core_attention"):
        o = _attend(q, k, v, ids, P, kq, impl, True)
    with jax.named_scope("out_proj"):
        return queries + dense(o, p["wo"])


def patch_decode(p, h, keys, ids, P, kq, H, Hkv, impl="ideal"):
    """BLT's local-decoder cross-attention: h [B, L, D] the bytes, keys [B, P kq, D] the patch stream's projected
    output; each byte attends its patch's kq keys. Parameters: wq [D, H hd], wk and wv [D, Hkv hd], wo [H hd, D].
    Returns [B, L, D]."""
    B, L, D = h.shape
    hd = p["wq"].shape[1] // H
    with jax.named_scope("qkv_proj"):
        q = dense(_rms(h), p["wq"]).reshape(B, L, H, hd)
        x = _rms(keys)
        k, v = (dense(x, p[w]).reshape(B, P * kq, Hkv, hd) for w in ("wk", "wv"))
    with jax.named_scope("core_attention"):
        o = _attend(q, k, v, ids, P, kq, impl, False)
    with jax.named_scope("out_proj"):
        return dense(o, p["wo"])


KERNELS = (patch_encode, patch_decode)


def params(p, D, H, Hkv, hd, kq=0):
    out = {"wq": p("wq", (D, H * hd)), "wk": p("wk", (D, Hkv * hd)), "wv": p("wv", (D, Hkv * hd)),
           "wo": p("wo", (H * hd, D))}
    if kq:
        out["w_patch"] = p("w_patch", (D, kq * D))
    return out


def layer(c, kind, p, h, top_idx, aux):
    """In the one-stream Flax model the patch stream is the bytes' own: a 'Y' layer's patches (the last 'Y' layer's
    projected k D -> D_g, as BLT feeds its global transformer) come back to their bytes (each byte its patch's row,
    and every patch's mean: a gather and a sum, no matmul); a 'U' layer's patch stream is each patch's max over its
    bytes (no matmul), the first 'U' layer projecting it D_g -> k D for every 'U' layer (the later ones repeat the
    pooled rows k times instead: no matmul, as they read the first one's keys)."""
    B, L, D = h.shape
    H, Hkv, hd, kq = c["num_query_heads"], c["num_kv_heads"], c["head_dim"], c["patch_cross_k"]
    P = patches_of(L, c)
    ids = layout(L, P)
    impl = "ideal" if c["attention_impl"] == "ideal" else "dense"
    D_g = patch_width(c)
    if kind.mixer == "patch_encode":
        out = patch_encode(params(p, D, H, Hkv, hd, kq), h, ids, P, kq, H, Hkv, impl)
        if kind.computes_index and kq * D != D_g:
            with jax.named_scope("patch_proj"):
                stream = dense(out.reshape(B, P, kq * D), p("w_in", (kq * D, D_g)))
        else:
            stream = out.reshape(B, P, kq, D).sum(2)
        return stream[:, ids] + stream.mean(1, keepdims=True), top_idx, aux
    pooled = jax.ops.segment_max(h.transpose(1, 0, 2), jnp.asarray(ids), P)
    pooled = jnp.where(jnp.isfinite(pooled), pooled, 0).transpose(1, 0, 2)  # [B, P, D_g]
    if kind.computes_index:
        with jax.named_scope("patch_proj"):
            keys = dense(pooled, p("w_out", (D_g, kq * D))).reshape(B, P * kq, D)
    else:
        keys = jnp.repeat(pooled, kq, axis=1)
    return patch_decode(params(p, D, H, Hkv, hd), h, keys, ids, P, kq, H, Hkv, impl), top_idx, aux


def reduce(c) -> dict:
    """The reduced model keeps its patches per sequence (0: L + 1) and k."""
    return {}


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


def bench_cases(ctx) -> list:
    """BLT's local-encoder cross-attention at the preset's sizes feeding its patch stream: patches of 4 bytes (L / 4
    of them), k = 2, H heads over H / 4 KV heads, the whole rectangle as transformers runs it, then the stream's
    input projection 2 D -> D."""
    p, arr = ctx.p, ctx.arr
    B, L, D, H = p["B"], p["L"], p["D"], p["H"]
    Hkv, kq, P = max(1, H // 4), 2, max(1, L // 4)
    if D % H or H % Hkv:
        return []
    hd = D // H
    ids = layout(L, P)

    def encode(prm, x):
        out = patch_encode(prm, x, ids, P, kq, H, Hkv, "dense")
        with jax.named_scope("patch_proj"):
            return dense(out.reshape(B, P, kq * D), prm["w_in"])

    def run(mesh):
        prm = {"w_patch": arr(D, kq * D), "wq": arr(D, H * hd), "wk": arr(D, Hkv * hd), "wv": arr(D, Hkv * hd),
               "wo": arr(H * hd, D), "w_in": arr(kq * D, D)}
        return jax.jit(encode), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="Y", ffn_layer_pattern="-", emb_dim=D, per_device_batch_size=B,
                   max_target_length=L, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, patch_cross_k=kq,
                   patches_per_sequence=P, attention_impl="dense")
        return components(b, "patch_proj", "qkv_proj", "core_attention", "out_proj")

    return [Case("BLT's patch cross-attention (patches over their bytes, reference kernel)",
                 f"B={B} L={L} patches={P} k={kq} heads={H}/{Hkv} D={D}", run, analytic)]
