"""The attention family's proof side: its reference kernels (masked attention in the ideal, dense and blocked forms,
decode against a cache, the GQA and MLA projections), its Flax layer and its bench cases. Imports jax; the family's
analytic module does not.

Shapes: x [B, L, D]; q [B, L, H, d]; k, v [B, S, Hkv, d]. Forms of masked attention (``impl``):
- ``ideal``: one dot per query row over exactly its visible keys;
- ``dense``: the full L x L square, masked;
- ``blocked``: per query block, one dot over the contiguous range of key blocks its mask touches (the tiles a
  flash/splash kernel visits), masked inside.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, component, components, engine, tokamax
from ...proofkit.kernels import NEG, causal_conv, dense
from . import BIDIRECTIONAL, CHUNK, GLOBAL, LETTER, WINDOW, lettered  # noqa: F401 (LETTER: the tests' too)


# --- masks as index ranges ---------------------------------------------------------------------------------

def visible(mixer: str, span: int, i: int, L: int) -> tuple[int, int]:
    """[lo, hi) keys of query i (0-based) in a sequence of length L."""
    if mixer == BIDIRECTIONAL:
        return 0, L
    if mixer == WINDOW:
        return max(0, i - span + 1), i + 1
    if mixer == CHUNK:
        return (i // span) * span, i + 1
    return 0, i + 1  # global causal


def mask_matrix(mixer: str, span: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    i, j = rows[:, None], cols[None, :]
    if mixer == BIDIRECTIONAL:
        return np.ones((len(rows), len(cols)), bool)
    m = j <= i
    if mixer == WINDOW:
        m &= j > i - span
    elif mixer == CHUNK:
        m &= (j // span) == (i // span)
    return m


def query_blocks(mixer: str, span: int, L: int, impl: str, bq: int = 1, bkv: int = 1):
    """[(q_lo, q_hi, k_lo, k_hi)]: the query rows and the contiguous key range one dot covers."""
    if impl == "ideal":
        return [(i, i + 1, *visible(mixer, span, i, L)) for i in range(L)]
    if impl == "dense":
        return [(0, L, 0, L)]
    out = []
    for a0 in range(0, L, bq):
        a1 = min(a0 + bq, L)
        lo = visible(mixer, span, a0, L)[0]
        hi = L - 1 if mixer == BIDIRECTIONAL else a1 - 1
        out.append((a0, a1, (lo // bkv) * bkv, min((hi // bkv + 1) * bkv, L)))
    return out


# --- softmax attention ---------------------------------------------------------------------------------------

def _softmax(s, m):
    s = jnp.where(m, s, NEG)
    return jax.nn.softmax(s, axis=-1)


def attention(q, k, v, mixer=GLOBAL, span=0, impl="ideal", block_q=1, block_kv=1, flash=False):
    """Masked multi-head attention with GQA (H = G * Hkv). q [B,L,H,dqk], k [B,L,Hkv,dqk], v [B,L,Hkv,dv].

    Matmuls: for each (query rows, key range) block, QK^T (2*H*dqk per pair) and PV (2*H*dv per pair).
    ``flash``: the probabilities are rematerialized in the backward pass (QK^T recomputed once), as flash
    attention's backward does.
    """
    B, L, H, dqk = q.shape
    hkv = k.shape[2]
    g = H // hkv
    qg = q.reshape(B, L, hkv, g, dqk)
    outs = []

    def probs(qb, kb, m):
        s = jnp.einsum("bqkgd,bskd->bkgqs", qb, kb)
        return _softmax(s, m)

    if flash:
        probs = jax.checkpoint(probs, static_argnums=())
    for a0, a1, lo, hi in query_blocks(mixer, span, L, impl, block_q, block_kv):
        m = jnp.asarray(mask_matrix(mixer, span, np.arange(a0, a1), np.arange(lo, hi)))
        p = probs(qg[:, a0:a1], k[:, lo:hi], m)
        outs.append(jnp.einsum("bkgqs,bskd->bqkgd", p, v[:, lo:hi]))
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    return o.reshape(B, L, H, v.shape[-1])


def attention_decode(q, k, v, mixer=GLOBAL, span=0, impl="ideal", block_kv=1):
    """The new token (position kv = S-1) against the cache k, v [B, S, Hkv, d]. q [B, 1, H, dqk]."""
    B, _, H, dqk = q.shape
    S, hkv = k.shape[1], k.shape[2]
    kv = S - 1
    lo, hi = visible(mixer, span, kv, S)
    if impl == "dense":
        lo, hi = 0, S
    elif impl == "blocked":
        lo, hi = (lo // block_kv) * block_kv, min((kv // block_kv + 1) * block_kv, S)
    m = jnp.asarray(mask_matrix(mixer, span, np.array([kv]), np.arange(lo, hi)))
    qg = q.reshape(B, 1, hkv, H // hkv, dqk)
    s = jnp.einsum("bqkgd,bskd->bkgqs", qg, k[:, lo:hi])
    p = _softmax(s, m)
    return jnp.einsum("bkgqs,bskd->bqkgd", p, v[:, lo:hi]).reshape(B, 1, H, v.shape[-1])


# --- projections -----------------------------------------------------------------------------------------------

def gqa_qkv(p, x, n_q, n_kv, head_dim, output_gate=False, v_head_dim=0):
    """q (and a per-head output gate), k, v (``v_head_dim`` wide, 0: head_dim) projections. Returns q, k, v, gate
    (or None)."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q = dense(x, p["wq"]).reshape(B, L, n_q, -1)
        if "wk" not in p:  # a KV-shared layer (Gemma 4's, Gemma 3n's): keys and values are an earlier layer's, no
            # projection of its own; here the layer's input tiled to their shape stands in for them (no matmul:
            # their gradients join the earlier layer's before its projections' backward, as in the model)
            k = jnp.tile(x, (1, 1, -(-n_kv * head_dim // x.shape[-1])))[..., :n_kv * head_dim]
            k = k.reshape(B, L, n_kv, head_dim)
            v = jnp.tile(x, (1, 1, -(-n_kv * (v_head_dim or head_dim) // x.shape[-1])))
            v = v[..., :n_kv * (v_head_dim or head_dim)].reshape(B, L, n_kv, v_head_dim or head_dim)
            gate = None
            if output_gate:
                q, gate = q[..., :head_dim], q[..., head_dim:]
            return q, k, v, gate
        k = dense(x, p["wk"]).reshape(B, L, n_kv, head_dim)
        # (no "wv": one projection is both keys and values, Gemma 4's global layers)
        v = dense(x, p["wv"]).reshape(B, L, n_kv, v_head_dim or head_dim) if "wv" in p else k
    gate = None
    if output_gate:
        q, gate = q[..., :head_dim], q[..., head_dim:]
    return q, k, v, gate


def cca(p, q, k, v, t0: int, t1: int):
    """ZAYA's compressed convolutional attention after the GQA projections: q and k side by side through a causal
    depthwise conv (t0 taps) and a causal grouped conv (t1 taps, one group per head: head width in and out), added
    to them; each KV head's values half from the token, half from the one before (a shift: no FLOPs)."""
    B, L, H, hd = q.shape
    n_kv = k.shape[2]
    C = (H + n_kv) * hd
    with jax.named_scope("cca_conv"):
        qk = jnp.concatenate([q.reshape(B, L, H * hd), k.reshape(B, L, n_kv * hd)], -1)
        y = causal_conv(qk, p("cca_depthwise", (t0, 1, C)), t0)
        y = jax.lax.conv_general_dilated(y, p("cca_grouped", (t1, hd, C)), window_strides=(1,), padding=[(t1 - 1, 0)],
                                         dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=H + n_kv)
    q = q + y[..., :H * hd].reshape(q.shape)
    k = k + y[..., H * hd:].reshape(k.shape)
    half = v.shape[-1] // 2
    delayed = jnp.pad(v[:, :-1, :, half:], ((0, 0), (1, 0), (0, 0), (0, 0)))
    return q, k, jnp.concatenate([v[..., :half], delayed], -1)


def latent_concat(q_lat):
    """A.X K2's q up-projection input: the q latent normed and raw, side by side (2 q_lora_rank)."""
    normed = q_lat * jax.lax.rsqrt(jnp.mean(q_lat * q_lat, -1, keepdims=True) + 1e-6)
    return jnp.concatenate([normed, q_lat], -1)


def mla_qkv(p, x, n_q, q_lora, kv_lora, nope, rope, v_dim, concat=False):
    """Non-absorbed MLA. Returns q [B,L,H,nope+rope], k [B,L,H,nope+rope], v [B,L,H,v], the q latent. ``concat``:
    the q up-projection reads ``latent_concat`` of the latent (mla_q_latent_concat)."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q_lat = dense(x, p["wq_a"]) if q_lora else x
        q_in = latent_concat(q_lat) if concat else q_lat
        q = dense(q_in, p["wq_b"] if q_lora else p["wq"]).reshape(B, L, n_q, nope + rope)
        ckv = dense(x, p["wkv_a"])
        c, k_rope = ckv[..., :kv_lora], ckv[..., kv_lora:]
        kv = dense(c, p["wkv_b"]).reshape(B, L, n_q, nope + v_dim)
    k = jnp.concatenate([kv[..., :nope], jnp.broadcast_to(k_rope[:, :, None, :], (B, L, n_q, rope))], -1)
    return q, k, kv[..., nope:], q_lat


def mla_absorbed_qkv(p, x, n_q, q_lora, kv_lora, nope, rope, concat=False):
    """Absorbed MLA as multi-query attention in the kv latent: q = [q_nope W_uk | q_rope] per head
    [B,L,H,kv_lora+rope], one shared key [c | k_rope] [B,L,1,kv_lora+rope] and value c [B,L,1,kv_lora].
    W_uk and W_uv are views of wkv_b. Returns q, k, v, the q latent."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q_lat = dense(x, p["wq_a"]) if q_lora else x
        q_in = latent_concat(q_lat) if concat else q_lat
        q = dense(q_in, p["wq_b"] if q_lora else p["wq"]).reshape(B, L, n_q, nope + rope)
        w_uk = p["wkv_b"].reshape(kv_lora, n_q, -1)[:, :, :nope].transpose(1, 2, 0)  # [H, nope, kv_lora]
        q_abs = jnp.einsum("blhn,hnc->blhc", q[..., :nope], w_uk)
        ckv = dense(x, p["wkv_a"])
    q_cat = jnp.concatenate([q_abs, q[..., nope:]], -1)
    return q_cat, ckv[:, :, None, :], ckv[:, :, None, :kv_lora], q_lat


def mla_absorbed_out(p, o_lat, n_q, kv_lora, nope, gate=None):
    """The latent attention output [B,L,H,kv_lora] expanded per head by W_uv (then gated per value channel by
    sigmoid(gate) [B,L,H,v], if given), then projected out."""
    B, L = o_lat.shape[:2]
    with jax.named_scope("out_proj"):
        w_uv = p["wkv_b"].reshape(kv_lora, n_q, -1)[:, :, nope:].transpose(1, 0, 2)  # [H, kv_lora, v]
        o = jnp.einsum("blhc,hcv->blhv", o_lat, w_uv)
        if gate is not None:
            o = o * jax.nn.sigmoid(gate)
        return dense(o.reshape(B, L, -1), p["wo"])


KERNELS = (attention, attention_decode, gqa_qkv, mla_qkv, mla_absorbed_qkv, mla_absorbed_out)


# --- the Flax layer ----------------------------------------------------------------------------------------------

def dynamic_conv(x, static, taps):
    """A causal conv of per-token taps over x [B, L, Hkv, d] (Inkling 2's full layers' keys and values): tap j (the
    token j back, zeros before the sequence) weighted by static [K, Hkv, d] plus the token's own taps [B, L, Hkv, 1,
    K], shared within a KV head: a multiply and a sum per tap, no matmul."""
    K, L = static.shape[0], x.shape[1]
    padded = jnp.pad(x, ((0, 0), (K - 1, 0), (0, 0), (0, 0)))
    windows = jnp.stack([padded[:, K - 1 - j:K - 1 - j + L] for j in range(K)], axis=-1)  # [B, L, Hkv, d, K]
    return (windows * (jnp.moveaxis(static, 0, -1) + taps)).sum(-1)


def softmax_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux):
    """The core of a plain attention layer: masked attention over its mixer's pairs (``attention_impl``)."""
    o = attention(q, k, v, kind.mixer, kind.span, c["attention_impl"], c["attention_block_q"],
                  c["attention_block_kv"], c["flash_backward_recompute"])
    return o, top_idx, aux


def differential_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux, core):
    """Differential attention (DiffLlama): the values' two halves of KV heads, each repeated to every KV head, side
    by side (one call over values 2*d wide) or one call each (``differential_impl='two_calls'``); the outputs of
    heads i and i + H/2 subtracted (a learned scalar: elementwise). Returns [B, L, H/2, 2d] as H heads of d."""
    n_kv = v.shape[2]
    v1, v2 = (jnp.concatenate([half, half], axis=2) for half in (v[:, :, :n_kv // 2], v[:, :, n_kv // 2:]))
    if c["differential_impl"] == "two_calls":
        o1, top_idx, aux = core(c, kind, p, h, q, k, v1, q_lat, top_idx, aux)
        o2, top_idx, aux = core(c, kind, p, h, q, k, v2, q_lat, top_idx, aux)
        o = jnp.concatenate([o1, o2], -1)
    else:
        o, top_idx, aux = core(c, kind, p, h, q, k, jnp.concatenate([v1, v2], -1), q_lat, top_idx, aux)
    H = o.shape[2]
    first, second = o[:, :, :H // 2], o[:, :, H // 2:]
    return first - 0.5 * second, top_idx, aux


def layer(c, kind, p, h, top_idx, aux, core=softmax_core):
    """GQA or MLA projections, ``core`` (its q, k, v -> output; the DSA family passes its own), the output gate and
    projection. ``p(name, shape)`` makes a parameter once. Returns (output, top_idx, aux)."""
    B, L, D = h.shape
    H = c["num_query_heads"]
    gate = None
    if kind.projection == "mla":
        ql, kl, nope, rope, v = (c["q_lora_rank"], c["kv_lora_rank"], c["qk_nope_head_dim"],
                                 c["qk_rope_head_dim"], c["v_head_dim"])
        params = {"wkv_a": p("wkv_a", (D, kl + rope)), "wkv_b": p("wkv_b", (kl, H * (nope + v))),
                  "wo": p("wo", (H * v, D))}
        concat = c["mla_q_latent_concat"]  # (A.X K2: the q up-projection reads 2 ql)
        if ql:
            params |= {"wq_a": p("wq_a", (D, ql)), "wq_b": p("wq_b", ((2 if concat else 1) * ql, H * (nope + rope)))}
        else:
            params["wq"] = p("wq", (D, H * (nope + rope)))
        if c["mla_absorbed"]:
            q, k, vv, q_lat = mla_absorbed_qkv(params, h, H, ql, kl, nope, rope, concat)
        else:
            q, k, vv, q_lat = mla_qkv(params, h, H, ql, kl, nope, rope, v, concat)
        if c["attention_head_gate"]:  # one scalar per head, D -> H (Dots3's g_proj)
            with jax.named_scope("qkv_proj"):
                head_gate = dense(h, p("wg", (D, H)))[..., None]
        if c["attention_output_gate"]:  # a gate per value channel, D -> H v (Kimi K3's g_proj; A.X K2's from the
            with jax.named_scope("qkv_proj"):  # q up-projection's input)
                g_in = latent_concat(q_lat) if concat else h
                gate = dense(g_in, p("w_out_gate", (g_in.shape[-1], H * v))).reshape(B, L, H, v)
    else:
        hd, n_kv, shared = c["head_dim"], c["num_kv_heads"], False
        if kind.mixer in (GLOBAL, BIDIRECTIONAL):  # global layers may have their own widths (Gemma 4, MiMo)
            hd, n_kv = c["global_head_dim"] or hd, c["global_num_kv_heads"] or n_kv
            shared = c["share_kv_projections"]
        hv = hd if shared else c["value_head_dim"] or hd
        gated_q = c["attention_output_gate"]
        params = {"wq": p("wq", (D, H * hd * (2 if gated_q else 1))), "wo": p("wo", (H * hv, D))}
        if not kind.kv_shared:  # (a KV-shared layer projects neither)
            params["wk"] = p("wk", (D, n_kv * hd))
            if not shared:
                params["wv"] = p("wv", (D, n_kv * hv))
        q, k, vv, gate = gqa_qkv(params, h, H, n_kv, hd, gated_q, hv)
        if c["cca_depthwise_kernel"]:
            q, k, vv = cca(p, q, k, vv, c["cca_depthwise_kernel"], c["cca_grouped_kernel"])
        if c["dynamic_mask_keys"]:  # Doge's dynamic mask: a score per KV head and key from its values (dt_proj);
            with jax.named_scope("qkv_proj"):  # the mask it picks is elementwise (here it scales the values: the
                dt = dense(vv.reshape(B, L, -1), p("w_dt", (n_kv * hv, n_kv)))  # same matmuls)
            vv = vv * jax.nn.sigmoid(dt)[..., None]
        Kc = c["kv_conv_kernel"]
        if Kc and lettered(kind, "kv_conv_dynamic_layers", c):  # Inkling 2's convs of per-token taps
            if c["dynamic_conv_impl"] != "elementwise":
                raise ValueError("dynamic_conv_impl: the Flax model runs a dynamic conv's taps elementwise")
            with jax.named_scope("qkv_proj"):  # each tap a static weight plus one from D per KV head
                k_taps = dense(h, p("k_taps", (D, n_kv * Kc))).reshape(B, L, n_kv, 1, Kc)
                v_taps = dense(h, p("v_taps", (D, n_kv * Kc))).reshape(B, L, n_kv, 1, Kc)
            with jax.named_scope("kv_conv"):
                k = k + dynamic_conv(k, p("k_conv", (Kc, n_kv, hd)), k_taps)
                vv = vv + dynamic_conv(vv, p("v_conv", (Kc, n_kv, hv)), v_taps)
        elif Kc:  # Inkling's causal depthwise convs over the keys and the values (each with its residual)
            with jax.named_scope("kv_conv"):
                k = k + causal_conv(k.reshape(B, L, -1), p("k_conv", (Kc, 1, n_kv * hd)), Kc).reshape(k.shape)
                vv = vv + causal_conv(vv.reshape(B, L, -1), p("v_conv", (Kc, 1, n_kv * hv)), Kc).reshape(vv.shape)
        if c["attention_head_gate"]:  # one scalar per query head, D -> H (LFM3's g_proj)
            with jax.named_scope("qkv_proj"):
                head_gate = dense(h, p("wg", (D, H)))[..., None]
        if c["attention_sink_proj"]:  # a sink logit per query head, D -> H (Inkling 2's sink_proj): it joins the
            with jax.named_scope("qkv_proj"):  # softmax with no value, scaling each head's output by Z / (Z + e^s)
                sink = dense(h, p("w_sink", (D, H)))[..., None]
        if c["attention_router_experts"]:  # a mixture of attention heads' router (JetMoE): its scores scale the
            with jax.named_scope("qkv_proj"):  # experts' outputs (elementwise)
                routed = jax.nn.sigmoid(dense(h, p("w_router", (D, c["attention_router_experts"])))).mean(-1)
            q = q * routed[..., None, None]
        q_lat = h
    with jax.named_scope("core_attention"):
        if c["attention_differential"]:
            o, top_idx, aux = differential_core(c, kind, p, h, q, k, vv, q_lat, top_idx, aux, core)
        else:
            o, top_idx, aux = core(c, kind, p, h, q, k, vv, q_lat, top_idx, aux)
    d_rel = c["relative_logits_dim"] if kind.projection != "mla" else 0
    if d_rel:  # Inkling's relative-position logits: r_proj, then each head's vector against the bank of profiles over
        extent = c["sliding_window_size"] if kind.mixer == WINDOW else c["relative_logits_extent"]
        with jax.named_scope("qkv_proj"):
            r = dense(h, p("w_rel", (D, H * d_rel))).reshape(B, L, H, d_rel)
        with jax.named_scope("rel_logits"):
            bias = jnp.einsum("blhr,re->blhe", r, p("rel_bank", (d_rel, extent)))
        # (their gather onto the pairs is no matmul: here they scale each head's output, the same FLOPs)
        o = o * (1 + jnp.tanh(bias.mean(-1)))[..., None]
    absorbed = kind.projection == "mla" and c["mla_absorbed"]
    if gate is not None and not absorbed:  # (absorbed: the latent output is gated once expanded)
        o = o * jax.nn.sigmoid(gate)
    if c["attention_head_gate"]:
        o = o * jax.nn.sigmoid(head_gate)
    if c["attention_sink_proj"]:  # (here a sigmoid of the logit: elementwise alike)
        o = o * jax.nn.sigmoid(-sink)
    if absorbed:
        out = mla_absorbed_out(params, o, H, c["kv_lora_rank"], c["qk_nope_head_dim"], gate)
    else:
        with jax.named_scope("out_proj"):
            out = dense(o.reshape(B, L, -1), params["wo"])
    return out, top_idx, aux


def reduce(c) -> dict:
    """The reduced model's attention: head dims 8 (MLA: q_lora 16 if used, kv_lora 12, nope 6, rope 4, v 6), at most
    2 kv heads and query groups of at most 2 (a group of 1 stays 1; MLA 2 heads), windows <= 5, chunks <= 6."""
    h, hkv = c["num_query_heads"], c["num_kv_heads"]
    kv = min(hkv, 2)
    out = dict(head_dim=8, num_kv_heads=kv, num_query_heads=kv * min(h // hkv, 2),
               q_lora_rank=16 if c["q_lora_rank"] else 0, kv_lora_rank=12, qk_nope_head_dim=6, qk_rope_head_dim=4,
               v_head_dim=6)
    if c["value_head_dim"]:  # values narrower than keys, as the model has them
        out["value_head_dim"] = 6
    if c["global_num_kv_heads"]:  # global layers with their own KV heads (fewer, and dividing the query heads)
        out["global_num_kv_heads"] = max(1, kv // 2)
    if c["global_head_dim"]:
        out["global_head_dim"] = 12
    if c["attention_type"] == "mla":
        out.update(num_query_heads=2, num_kv_heads=2)
    if c["sliding_window_size"]:
        out["sliding_window_size"] = min(c["sliding_window_size"], 5)
    if c["chunk_attn_window_size"]:
        out["chunk_attn_window_size"] = min(c["chunk_attn_window_size"], 6)
    return out


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


# --- bench cases -------------------------------------------------------------------------------------------------

# tokamax's attention implementations per backend: XLA's own everywhere; its kernels where the hardware has them.
TOKAMAX_ATTENTION = {"cpu": ("xla", "xla_chunked"), "gpu": ("xla", "cudnn", "triton", "mosaic_gpu"),
                     "tpu": ("xla", "mosaic_tpu")}
# Tiles assumed for tokamax's attention kernels (their defaults; unverified until an accelerator run).
TOKAMAX_TILE = {"cudnn": 128, "triton": 128, "mosaic_gpu": 128, "mosaic_tpu": 512}


def mla_cfg(p) -> dict:
    """The engine keys of the bench's MLA shapes (shared with the DSA family's cases)."""
    ql, kl, nope, rope, v = p["mla"]
    return dict(attention_type="mla", num_query_heads=p["H"], num_kv_heads=p["H"], q_lora_rank=ql, kv_lora_rank=kl,
                qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=v, emb_dim=p["D"],
                max_target_length=p["L"], per_device_batch_size=p["B"])


def bench_cases(ctx) -> list:
    p, arr, sharded, dtype = ctx.p, ctx.arr, ctx.sharded, ctx.dtype
    B, L, H, Hkv, d = p["B"], p["L"], p["H"], p["Hkv"], p["d"]
    attn_cfg = dict(max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=Hkv, head_dim=d)
    cases = []

    def attention_case(mixer, span, impl):
        label = {GLOBAL: "causal", WINDOW: f"sliding window {span}", CHUNK: f"chunked {span}"}[mixer]

        def run(mesh):
            args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
            fn = jax.jit(lambda q, k, v: attention(q, k, v, mixer, span, impl, p["blk"], p["blk"]))
            return fn, args, div

        def analytic():
            b = engine(attention_layer_pattern=LETTER[mixer], sliding_window_size=span if mixer == WINDOW else 0,
                       chunk_attn_window_size=span if mixer == CHUNK else 0, attention_impl=impl,
                       attention_block_q=p["blk"], attention_block_kv=p["blk"], **attn_cfg)
            return component(b, "core_attention")

        shapes = f"B={B} L={L} H={H}/{Hkv} d={d}" + (f" tile {p['blk']}" if impl == "blocked" else "")
        return Case(f"attention {label} ({impl}, reference kernel)", shapes, run, analytic)

    # jax.nn.dot_product_attention: the XLA form computes the full square, masked; cuDNN on GPU.
    def dpa_case(implementation):
        def run(mesh):
            args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
            fn = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                                     implementation=implementation))
            return fn, args, div

        def analytic():
            impl = "dense" if implementation == "xla" else "blocked"
            b = engine(attention_impl=impl, attention_block_q=128, attention_block_kv=128, **attn_cfg)
            return component(b, "core_attention")

        why = "" if implementation == "xla" else "cuDNN flash attention: a custom call XLA cannot count; " \
                                                   "hardware assumes 128 x 128 tiles"
        return Case(f"attention causal (jax.nn.dot_product_attention, {implementation})",
                    f"B={B} L={L} H={H}/{Hkv} d={d}", run, analytic, module="none" if implementation != "xla"
                    else "optimized", why=why, only=("gpu",) if implementation == "cudnn" else ())

    # Decode: one new token per sequence against a KV cache (memory-bound: the cache is read once).
    S = p.get("decode_kv", 4 * L)

    def decode_run(mesh):
        args, div = sharded(mesh, [arr(B, 1, H, d), arr(B, S, Hkv, d), arr(B, S, Hkv, d)])
        return jax.jit(lambda q, k, v: attention_decode(q, k, v)), args, div

    def decode_cfg():
        return dict(mode="decode", decode_kv_length=S - 1, per_device_batch_size=B, num_query_heads=H,
                    num_kv_heads=Hkv, head_dim=d, kv_cache_bytes=jnp.dtype(dtype).itemsize)

    def decode_analytic():
        return component(engine(**decode_cfg()), "core_attention")

    def decode_bytes(args):
        import maxflops

        from ...proofkit.case import ENGINE_BASE

        t = maxflops.decode_traffic(maxflops.model_config(**ENGINE_BASE, **decode_cfg()))
        return t.components["kv_read"], args[1].nbytes + args[2].nbytes

    cases.append(Case(f"decode attention, GQA, KV cache {S} (reference kernel)", f"B={B} S={S} H={H}/{Hkv} d={d}",
                      decode_run, decode_analytic, engine_bytes=decode_bytes))
    cases.append(dpa_case("xla"))
    cases.append(dpa_case("cudnn"))
    cases.append(attention_case(GLOBAL, 0, "blocked"))
    cases.append(attention_case(WINDOW, p["W"], "blocked"))
    cases.append(attention_case(CHUNK, p["C"], "blocked"))

    # Splash attention (Pallas, TPU only) with causal, local-window and chunked masks.
    for mask_name in ("causal", "local", "chunked"):
        cases.append(_splash_case(mask_name, p, arr))

    # MLA: projections + causal attention, non-absorbed and absorbed.
    ql, kl, nope, rope, v = p["mla"]
    D = p["D"]

    def mla_case(absorbed):
        def run(mesh):
            prm = {"wkv_a": arr(D, kl + rope), "wkv_b": arr(kl, H * (nope + v)), "wo": arr(H * v, D),
                   "wq_a": arr(D, ql), "wq_b": arr(ql, H * (nope + rope))}

            def one_layer(prm, x):
                if absorbed:
                    q, k, vv, _ = mla_absorbed_qkv(prm, x, H, ql, kl, nope, rope)
                    o = attention(q, k, vv, GLOBAL, 0, "blocked", p["blk"], p["blk"])
                    return mla_absorbed_out(prm, o, H, kl, nope)
                q, k, vv, _ = mla_qkv(prm, x, H, ql, kl, nope, rope, v)
                o = attention(q, k, vv, GLOBAL, 0, "blocked", p["blk"], p["blk"])
                return dense(o.reshape(B, L, -1), prm["wo"])

            return jax.jit(one_layer), [prm, arr(B, L, D)], 1

        def analytic():
            b = engine(mla_absorbed=absorbed, attention_impl="blocked", attention_block_q=p["blk"],
                       attention_block_kv=p["blk"], **mla_cfg(p))
            return components(b, "qkv_proj", "core_attention", "out_proj")

        return Case(f"MLA {'absorbed' if absorbed else 'non-absorbed'} (projections + causal attention)",
                    f"B={B} L={L} H={H} D={D} q/kv lora {ql}/{kl}", run, analytic)

    cases.append(mla_case(False))
    cases.append(mla_case(True))

    # Differential attention (DiffLlama): the two value halves side by side under each map, or one call per half.
    def differential_case(impl):
        hkv = max(2, Hkv - Hkv % 2)  # (the values split in two halves of KV heads)
        h = hkv * max(1, H // hkv)
        h += h % 2

        def run(mesh):
            c = {"attention_differential": True, "differential_impl": impl}

            def core(c_, kind, p_, x, q, k, v, q_lat, top, aux):  # the tiled causal kernel over one value width
                return attention(q, k, v, GLOBAL, 0, "blocked", p["blk"], p["blk"]), top, aux

            def fn(q, k, v):
                return differential_core(c, None, None, None, q, k, v, None, None, None, core)[0]

            return jax.jit(fn), [arr(B, L, h, d), arr(B, L, hkv, d), arr(B, L, hkv, d)], 1

        def analytic():
            b = engine(**{**attn_cfg, "num_query_heads": h, "num_kv_heads": hkv}, attention_differential=True,
                       differential_impl=impl, attention_impl="blocked", attention_block_q=p["blk"],
                       attention_block_kv=p["blk"])
            return component(b, "core_attention")

        # XLA's optimizer merges the two calls' identical QK^T (measured: the optimized module counts the two-call
        # form as the one-call form), so that form is held on the module the program issues
        two = impl == "two_calls"
        return Case(f"differential attention ({impl}, reference kernel)",
                    f"B={B} L={L} H={h}/{hkv} d={d} tile {p['blk']}", run, analytic,
                    module="lowered" if two else "optimized",
                    why="XLA's optimizer computes the two calls' identical QK^T once; a program of two flash kernels "
                        "(custom calls) or torch's eager model computes it twice" if two else "")

    cases.append(differential_case("doubled_values"))
    cases.append(differential_case("two_calls"))

    # tokamax's attention, each implementation it offers on this backend.
    for impl in TOKAMAX_ATTENTION.get(ctx.backend, ()):
        for window in (0, p["W"]):
            cases.append(_tokamax_attention_case(impl, window, p, arr, attn_cfg, sharded))
    return cases


def _tokamax_attention_case(impl, window, p, arr, attn_cfg, sharded):
    B, L, H, Hkv, d = p["B"], p["L"], p["H"], p["Hkv"], p["d"]
    kernel = impl not in ("xla", "xla_chunked")

    def run(mesh):
        tk = tokamax()
        args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
        local = (window - 1, 0) if window else None
        fn = jax.jit(lambda q, k, v: tk.dot_product_attention(q, k, v, is_causal=True, local_window_size=local,
                                                              implementation=impl))
        return fn, args, div

    def analytic():
        tile = TOKAMAX_TILE.get(impl, 1)
        b = engine(attention_layer_pattern="L" if window else "G", sliding_window_size=window,
                   attention_impl="blocked" if kernel else "dense", attention_block_q=tile, attention_block_kv=tile,
                   **attn_cfg)
        return component(b, "core_attention")

    label = f"sliding window {window}" if window else "causal"
    why = (f"a {impl} kernel XLA cannot count; hardware assumes {TOKAMAX_TILE[impl]} x {TOKAMAX_TILE[impl]} tiles "
           "(XLA's cost analysis, which holds the kernel's own estimate, is recorded)") if kernel else ""
    return Case(f"tokamax attention {label} ({impl})", f"B={B} L={L} H={H}/{Hkv} d={d}", run, analytic,
                module="none" if kernel else "optimized", why=why)


def make_splash(mask_name: str, L: int, H: int, span: int, block: int, interpret: bool = False):
    """The Pallas splash attention kernel (MHA, [B, H, L, d] via vmap) for a causal, local-window or chunked
    mask with the maxflops semantics: window W = the query and W-1 keys before it; chunks restart every C."""
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    if mask_name == "causal":
        m = sm.CausalMask((L, L))
    elif mask_name == "local":
        m = sm.LocalMask((L, L), window_size=(span - 1, 0), offset=0)
    else:
        rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
        m = sm.NumpyMask((cols <= rows) & (cols // span == rows // span))
    sizes = sk.BlockSizes(block_q=block, block_kv=block, block_kv_compute=block)
    kernel = sk.make_splash_mha(sm.MultiHeadMask([m] * H), head_shards=1, q_seq_shards=1, block_sizes=sizes,
                                interpret=interpret)
    return jax.vmap(kernel)


def _splash_case(mask_name, p, arr):
    B, L, H, d = p["B"], p["L"], p["H"], p["d"]
    span = {"causal": 0, "local": p["W"], "chunked": p["C"]}[mask_name]
    block = min(p.get("splash_blk", 512), L)  # (CPU presets: 128, the smallest tile, so the masks skip tiles)

    def run(mesh):
        fn = jax.jit(make_splash(mask_name, L, H, span, block))
        return fn, [arr(B, H, L, d), arr(B, H, L, d), arr(B, H, L, d)], 1

    def analytic():
        letter = {"causal": "G", "local": "L", "chunked": "C"}[mask_name]
        spans = {"L": {"sliding_window_size": span}, "C": {"chunk_attn_window_size": span}}.get(letter, {})
        b = engine(max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=H, head_dim=d,
                   attention_layer_pattern=letter, attention_impl="blocked", attention_block_q=block,
                   attention_block_kv=block, **spans)
        return component(b, "core_attention")

    return Case(f"splash attention, {mask_name} mask (Pallas)", f"B={B} L={L} H={H} d={d} span={span}", run,
                analytic, module="none", why=f"a Pallas kernel XLA cannot count; hardware: the {block} x {block} "
                f"tiles splash visits (it skips fully masked ones)", only=("tpu",))
