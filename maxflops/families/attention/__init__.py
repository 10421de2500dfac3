"""Softmax attention over (query, key) pairs: global causal ('G'), sliding window ('L'), chunked ('C') and
bidirectional ('G' with causal=False), with GQA/MQA or MLA projections.

Model FLOPs: the projections, and 2 * heads * (d_qk + d_v) per attended pair, the pairs under the convention's
rules (``pairs``). Hardware FLOPs: the pairs ``attention_impl`` computes (``impl_pairs``: every pair, the dense
square or the touched tiles), MLA in the latent under ``mla_absorbed``, and the parts no remat name saves.
The DSA family (``maxflops.families.dsa``) reuses the projections and the core.
Its closed forms are here: the GQA and MLA projections (absorbed and not), and the peers' pair rules for windows,
chunks and the whole square; the exact counts and the tiles it shares are ``maxflops.masks``'.
"""

from __future__ import annotations

from ... import masks, terms
from ...sequences import priced_tokens
from ...fields import field_of
from .. import conv
from ..base import Family, Priced, ffn_width

GLOBAL, WINDOW, CHUNK, BIDIRECTIONAL = "global", "window", "chunk", "bidirectional"
LETTER = {GLOBAL: "G", BIDIRECTIONAL: "G", WINDOW: "L", CHUNK: "C"}  # a mixer's attention_layer_pattern letter


def lettered(kind, key: str, c) -> bool:
    """An attention layer whose pattern letter is among those the letters key ``key`` names."""
    return LETTER.get(kind.mixer, "") in c[key] if c[key] else False


def check_letters(c, key: str, err) -> None:
    """A letters key names attention layer letters only."""
    bad = sorted(set(c[key]) - set("GLC"))
    if bad:
        err(key, f"{c[key]!r}: {bad[0]!r} is not an attention layer letter ('G', 'L', 'C')")


# --- closed forms: the GQA and MLA projections, the peers' pair rules for windows, chunks and the square ------

def gqa_qkv(d: int, n_q: int, n_kv: int, head_dim: int, output_gate: bool = False, shared_kv: bool = False,
            v_head_dim: int = 0) -> int:
    """q: D -> H*hd (x2 with a per-head output gate, Qwen3-Next); k: D -> Hkv*hd and v: D -> Hkv*dv (``v_head_dim``,
    0: hd; MiMo-V2-Flash's values are narrower than its keys), or one projection used as both with ``shared_kv``
    (Gemma 4's global layers). MHA is Hkv = H, MQA is Hkv = 1."""
    q_width = n_q * head_dim * (2 if output_gate else 1)
    v_width = 0 if shared_kv else n_kv * (v_head_dim or head_dim)
    return 2 * d * (q_width + n_kv * head_dim + v_width)


def mla_qkv(d: int, n_q: int, q_lora: int, kv_lora: int, nope: int, rope: int, v: int,
            norm_flops: bool = False) -> int:
    """Multi-head latent attention, non-absorbed (the model-FLOPs form).

    q: with q_lora > 0, D -> q_lora then q_lora -> H*(nope+rope); else D -> H*(nope+rope).
    kv: D -> kv_lora + rope (the latent plus the shared RoPE key), then kv_lora -> H*(nope + v).
    ``norm_flops`` adds Megatron's '+1' terms: rank*(h + n*d + 1) in its q and kv terms, i.e. one multiply-add
    per element of each normalized low-rank latent (2*q_lora + 2*kv_lora per token) -- not a matmul; a
    convention only.
    """
    qk = nope + rope
    if q_lora:
        q = 2 * d * q_lora + 2 * q_lora * n_q * qk + (2 * q_lora if norm_flops else 0)
    else:
        q = 2 * d * n_q * qk
    kv = 2 * d * (kv_lora + rope) + 2 * kv_lora * n_q * (nope + v) + (2 * kv_lora if norm_flops else 0)
    return q + kv


def mla_absorbed_qkv(d: int, n_q: int, q_lora: int, kv_lora: int, nope: int, rope: int) -> int:
    """Absorbed MLA (what DSA kernels and decode execute): q as non-absorbed, then q_nope absorbed into the
    latent per head (H*nope -> H*kv_lora); kv only down-projected (D -> kv_lora + rope), never expanded.
    Attention then runs in the latent: d_qk = kv_lora + rope, d_v = kv_lora per pair."""
    qk = nope + rope
    q = 2 * d * q_lora + 2 * q_lora * n_q * qk if q_lora else 2 * d * n_q * qk
    return q + 2 * n_q * nope * kv_lora + 2 * d * (kv_lora + rope)


def mla_absorbed_out(n_q: int, kv_lora: int, v: int, d: int) -> int:
    """Absorbed MLA output: the latent output per head expanded to v (H*kv_lora -> H*v), then H*v -> D."""
    return 2 * n_q * kv_lora * v + 2 * n_q * v * d


def full_square(seqs):
    """'The whole square': sum L^2, the causal mask ignored (MaxText before its PR #1988; PaLM's 12 L H Q T)."""
    return seqs.sum(lambda L: L * L)


def chunk_maxtext(seqs, span):
    """MaxText's chunked attention: half the sum of squared chunk lengths."""
    return masks._ratio(seqs.sum(lambda L: (L // span) * span * span + (L % span) ** 2), 2)


def window_megatron(seqs, span):
    """Megatron's sliding window (seed 3: effective length min(L, W), halved): L*min(L, W)/2."""
    return masks._ratio(seqs.sum(lambda L: L * masks._minimum(L, span)), 2)


def chunk_megatron(seqs, span):
    """Megatron's chunked attention (seed 3: effective length C, halved, even when L < C): L*C/2."""
    return masks._ratio(seqs.sum(lambda L: L * span), 2)


def window_bridge(seqs, span, tokens, rows):
    """Megatron-Bridge's sliding window over ``tokens`` priced in ``rows``: each token sees the mean causal context of
    a window in a row of the mean length s = tokens/rows, W - W(W-1)/(2s), so tokens*W - rows*W(W-1)/2 pairs; when
    W >= s, half the square (sum L^2 / 2) as a global layer."""
    return seqs.whole(_window_bridge, span, tokens, rows)


def _window_bridge(seqs, span, tokens, rows):
    if span * rows < tokens:
        return tokens * span - masks._ratio(rows * span * (span - 1), 2)
    return masks.half_square(seqs)


def window_unclamped(seqs, span):
    """MaxText's DeepSeek-V4 window: L*W - W^2/2 for every sequence, also when L < W."""
    return seqs.sum(lambda L: L * span) - masks._ratio(span * span * seqs.count, 2)


# --- pairs ----------------------------------------------------------------------------------------------------

def dynamic(mixer: str, span: int, c) -> tuple:
    """(mixer, span) of the pairs a query attends under Doge's dynamic mask (``dynamic_mask_keys`` = W): at most W of
    its visible keys, whichever the scores pick; as many as a causal window of W (of the smaller span on a windowed
    layer)."""
    W = c["dynamic_mask_keys"]
    if W and mixer == GLOBAL:
        return WINDOW, W
    if W and mixer == WINDOW:
        return WINDOW, min(span, W)
    return mixer, span


def pairs(mixer: str, span: int, seqs, c, decode: bool):
    """Attended (query, key) pairs of a global, window or chunk mixer under the config's conventions."""
    mixer, span = dynamic(mixer, span, c)
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(mixer, span, kv))
    if mixer in (WINDOW, CHUNK) and c["window_pairs"] == "global":
        mixer, span = GLOBAL, 0
    if mixer == GLOBAL and c["window_scope"] == "all_layers":  # the model's chunk, else its window, everywhere
        pattern = c["attention_layer_pattern"][:c["num_decoder_layers"]]
        if "C" in pattern:
            mixer, span = CHUNK, c["chunk_attn_window_size"]
        elif "L" in pattern:
            mixer, span = WINDOW, c["sliding_window_size"]
    if mixer == GLOBAL and c["causal_pairs"] == "half_square":
        return masks.half_square(seqs)
    if mixer == GLOBAL and c["causal_pairs"] == "full_square":
        return full_square(seqs)
    if mixer == WINDOW and c["window_pairs"] == "megatron":
        return window_megatron(seqs, span)
    if mixer == CHUNK and c["window_pairs"] == "megatron":
        return chunk_megatron(seqs, span)
    if mixer == WINDOW and c["window_pairs"] == "maxtext":
        return masks.band_maxtext(seqs, span)
    if mixer == WINDOW and c["window_pairs"] == "unclamped":
        return window_unclamped(seqs, span)
    if mixer == WINDOW and c["window_pairs"] == "bridge":
        tokens, rows = priced_tokens(seqs, c)
        return window_bridge(seqs, span, tokens, rows)
    if mixer == CHUNK and c["window_pairs"] == "maxtext":
        return chunk_maxtext(seqs, span)
    return seqs.exact_pairs(mixer, span)


def dense_pairs(seqs, decode: bool):
    """The full square, masked (decode: the new token against the whole cache and itself)."""
    return seqs.sum(lambda kv: kv + 1) if decode else seqs.sum(lambda L: L * L)


def impl_pairs(mixer, span, seqs, c, decode: bool, masked: bool = True):
    """Pairs the kernels compute under ``attention_impl`` (``masked``: under Doge's dynamic mask where the config has
    one; an indexer scoring every visible key passes False)."""
    impl = c["attention_impl"]
    if impl == "dense":
        return dense_pairs(seqs, decode)
    if impl == "blocked":
        bq, bkv = c["attention_block_q"], c["attention_block_kv"]
        if decode:
            return seqs.sum_scalar(lambda kv: masks.blocked_decode(mixer, span, kv, bkv))
        return seqs.sum(lambda L: masks.blocked(mixer, span, L, bq, bkv))
    if masked:  # (the tiles above: those of the mask the scores pick within)
        mixer, span = dynamic(mixer, span, c)
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(mixer, span, kv))
    return seqs.exact_pairs(mixer, span)


# --- projections and core -------------------------------------------------------------------------------------

def project(p: Priced, kind, c, tokens, hardware: bool) -> tuple:
    """The q/k/v and output projections of a GQA or MLA layer; (heads, d_qk, d_v) per attended pair."""
    d, h, d_out = c["emb_dim"], c["num_query_heads"], ffn_width(c)
    if kind.projection == "mla":
        q_lora, kv_lora, nope, rope, v = (c["q_lora_rank"], c["kv_lora_rank"], c["qk_nope_head_dim"],
                                          c["qk_rope_head_dim"], c["v_head_dim"])
        head_gate = 2 * d * h if c["attention_head_gate"] else 0  # D -> one gate per head (Dots3's g_proj)
        concat = c["mla_q_latent_concat"]  # the q up-projection reads the normed and the raw q latent (A.X K2)
        if c["attention_output_gate"] and c["mla_gate_flops"]:  # a gate per value channel: from D (Kimi K3's
            head_gate += 2 * (2 * q_lora if concat else d) * h * v  # g_proj), or in the q up-projection (A.X K2)
        if concat:  # the raw latent's half of the q up-projection
            head_gate += 2 * q_lora * h * (nope + rope)
        if hardware and c["mla_absorbed"]:  # attention in the kv latent, with absorb and expand matmuls
            p.out["qkv_proj"] = (mla_absorbed_qkv(d, h, q_lora, kv_lora, nope, rope) + head_gate) * tokens
            if head_gate:  # (their outputs are not saved)
                p.unnamed["qkv_proj"] = head_gate * tokens
            p.out["out_proj"] = mla_absorbed_out(h, kv_lora, v, d_out) * tokens
            p.closing["out_proj"] = terms.attention_out(h, v, d_out) * tokens  # wo (after the W_uv expand)
            return h, kv_lora + rope, kv_lora
        p.out["qkv_proj"] = (mla_qkv(d, h, q_lora, kv_lora, nope, rope, v, c["mla_norm_flops"])
                             + head_gate) * tokens
        if hardware:  # the latents (q and kv down projections) carry no saved name in MaxText's MLA
            p.unnamed["qkv_proj"] = (2 * d * (q_lora + kv_lora + rope) + head_gate) * tokens
            # the DSA warm-up, q/k/v saved: the indexer reads the q latent; the kv latent only feeds saved k and v
            p.warmup_unnamed["qkv_proj"] = 2 * d * q_lora * tokens
        p.out["out_proj"] = p.closing["out_proj"] = terms.attention_out(h, v, d_out) * tokens
        return h, nope + rope, v
    n_kv, hd = kv_widths(kind, c)  # global layers may have their own widths (Gemma 4)
    shared_kv = kind.mixer in (GLOBAL, BIDIRECTIONAL) and c["share_kv_projections"]
    hv = c["value_head_dim"] or hd  # (0: the head width; a shared K/V projection keeps it)
    if kind.kv_shared:  # keys and values come from an earlier layer: only q is projected
        n_kv = 0
    gate = c["attention_output_gate"] and c["gate_projections"]
    head_gate = 2 * d * h if c["attention_head_gate"] else 0  # D -> one gate per query head
    head_gate += 2 * d * h if c["attention_sink_proj"] else 0  # D -> one sink logit per query head (Inkling 2's)
    if c["kv_conv_kernel"] and lettered(kind, "kv_conv_dynamic_layers", c):  # the k and v convs' per-token taps,
        head_gate += 2 * 2 * d * n_kv * c["kv_conv_kernel"]  # D -> KV heads x taps each (weight_proj)
    head_gate += 2 * d * c["attention_router_experts"]  # a mixture of attention heads' router D -> its experts
    if c["dynamic_mask_keys"]:  # Doge's dynamic mask: each token's values scored per KV head (dt_proj)
        head_gate += 2 * n_kv * (c["value_head_dim"] or hd) * n_kv
    p.out["qkv_proj"] = (gqa_qkv(d, h, n_kv, hd, gate, shared_kv, hv) + head_gate) * tokens
    norms = c["qkv_norms"]
    if norms == "qk_rope":  # Llama 4: the norm runs with RoPE only; its NoPE (global) layers skip both
        norms = "none" if kind.mixer == GLOBAL else "qk"
    if hardware and (gate or head_gate or norms != "none"):  # (the head gate's output is not saved)
        p.unnamed["qkv_proj"] = (renamed_projections(norms, d, h, n_kv, hd, gate, shared_kv, hv) + head_gate) * tokens
    p.out["out_proj"] = p.closing["out_proj"] = terms.attention_out(h, hv, d_out) * tokens
    return h, hd, hv


def renamed_projections(norms: str, d: int, h: int, n_kv: int, hd: int, gate: bool, shared_kv: bool,
                        hv: int) -> int:
    """Per token, the q/k/v projections a remat policy that saves q, k and v still recomputes: those normed after
    the projection (the norm's backward needs its input), and a q projection fused with the output gate (the gate
    is not saved)."""
    q = gqa_qkv(d, h, 0, hd, gate) if gate or norms != "none" else 0
    k = 2 * d * n_kv * hd if norms != "none" else 0
    v = 2 * d * n_kv * hv if norms == "qkv" and not shared_kv else 0
    return q + k + v


def core(p: Priced, h: int, d_qk: int, d_v: int, attended) -> None:
    """QK^T and PV over the attended pairs (``p.qk`` keeps the QK^T part for remat and flash recompute)."""
    p.qk = terms.attention_per_pair(h, d_qk, 0) * attended
    p.out["core_attention"] = p.qk + terms.attention_per_pair(h, 0, d_v) * attended


def kv_widths(kind, c) -> tuple:
    """(KV heads, head width) of a GQA layer: a global layer's own (Gemma 4), else the config's."""
    if kind.mixer in (GLOBAL, BIDIRECTIONAL):
        return c["global_num_kv_heads"] or c["num_kv_heads"], c["global_head_dim"] or c["head_dim"]
    return c["num_kv_heads"], c["head_dim"]


def rel_extent(kind, c) -> int:
    """The distances a layer's relative-position logits cover: the window on a windowed layer."""
    return c["sliding_window_size"] if kind.mixer == WINDOW else c["relative_logits_extent"]


def weights(kind, c) -> dict:
    """Inkling's bank of bias profiles on a GQA layer, d_rel x extent: every head reads the one bank, so its logits'
    per-token FLOPs are 2 x heads x the bank."""
    if not c["relative_logits_dim"] or kind.projection != "gqa":
        return {}
    return {"rel_logits": c["relative_logits_dim"] * rel_extent(kind, c)}


def inkling_parts(p: Priced, kind, c, seqs, decode, tokens, hardware: bool) -> None:
    """Inkling's attention extras on a GQA layer: the relative-position logits (r_proj D -> heads x d_rel, and per
    token its heads' bias profiles over the extent, d_rel -> extent: the window on a windowed layer) and the causal
    depthwise convs over k and v (``kv_conv_kernel`` taps over 2 x KV heads x head width channels)."""
    h, d_rel = c["num_query_heads"], c["relative_logits_dim"]
    if d_rel:
        p.out["qkv_proj"] += 2 * c["emb_dim"] * h * d_rel * tokens
        p.out["rel_logits"] = 2 * h * d_rel * rel_extent(kind, c) * tokens
    K = c["kv_conv_kernel"]
    if K:
        n_kv, hd = kv_widths(kind, c)
        channels = n_kv * (hd + (c["value_head_dim"] or hd))
        if not hardware:
            conv.price(p, "kv_conv", channels, K, c, seqs, decode, tokens)
        elif not lettered(kind, "kv_conv_dynamic_layers", c):
            conv.price_hardware(p, "kv_conv", c["aux_conv_impl"], channels, K, c, seqs, decode, tokens)
        elif c["dynamic_conv_impl"] == "valid":  # (per-token taps 'elementwise': no matmul)
            conv.price(p, "kv_conv", channels, K, c, seqs, decode, tokens)


def cca_taps(c, seqs, decode: bool, tokens, hardware: bool) -> tuple:
    """Compressed convolutional attention's two convs over the q and k channels (ZAYA's conv_qk_depthwise of t0 taps,
    then conv_qk_grouped of t1 taps, one group per head, head width in and out): (depthwise taps, grouped taps) per
    channel. Model FLOPs: each a causal conv over the sequence, its non-padding taps. Hardware 'padded' (transformers:
    the sequence padded by t0 - 1 + t1 - 1 zeros before both unpadded convs): every tap of the depthwise conv's
    L + t1 - 1 outputs and of the grouped conv's L; in decode the cached inputs and the new token, the depthwise conv
    at the t1 positions the grouped one reads."""
    t0, t1 = c["cca_depthwise_kernel"], c["cca_grouped_kernel"]
    if hardware and c["aux_conv_impl"] == "padded":
        if decode:
            return t0 * t1 * tokens, t1 * tokens
        return seqs.sum(lambda L: t0 * (L + t1 - 1)), t1 * tokens
    return conv.model_taps(c, seqs, decode, tokens, t0), conv.model_taps(c, seqs, decode, tokens, t1)


def cca_parts(p: Priced, kind, c, seqs, decode, tokens, hardware: bool) -> None:
    """ZAYA's compressed convolutional attention on a GQA layer: the depthwise conv over the (heads + KV heads) x
    head width q and k channels, then the grouped conv (head width -> head width per head and tap); its projections
    are GQA's (the values half from the token, half from the one before: the same widths)."""
    n_kv, hd = kv_widths(kind, c)
    channels = (c["num_query_heads"] + n_kv) * hd
    dw, grouped = cca_taps(c, seqs, decode, tokens, hardware)
    p.out["cca_conv"] = 2 * channels * dw + 2 * channels * hd * grouped


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = project(p, kind, c, tokens, hardware=False)
    if c["attention_differential"]:  # each map weighs values twice as wide (the two value halves side by side)
        d_v *= 2
    core(p, h, d_qk, d_v, pairs(kind.mixer, kind.span, seqs, c, decode))
    if kind.projection == "gqa":
        inkling_parts(p, kind, c, seqs, decode, tokens, hardware=False)
        if c["cca_depthwise_kernel"]:
            cca_parts(p, kind, c, seqs, decode, tokens, hardware=False)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = project(p, kind, c, tokens, hardware=True)
    if c["attention_differential"]:
        d_v *= 2
        if c["differential_impl"] == "two_calls":  # one attention per value half: QK^T computed twice
            d_qk *= 2
    core(p, h, d_qk, d_v, impl_pairs(kind.mixer, kind.span, seqs, c, decode))
    if kind.projection == "gqa":
        inkling_parts(p, kind, c, seqs, decode, tokens, hardware=True)
        if c["cca_depthwise_kernel"]:
            cca_parts(p, kind, c, seqs, decode, tokens, hardware=True)


def indexed_pricing(pairs_of, hardware_pairs_of, indexer):
    """(price, price_hardware) of a GQA layer whose queries attend the keys an indexer picks (MiniMax sparse
    attention, QSA): the projections, the core over ``pairs_of`` / ``hardware_pairs_of`` (seqs, c, decode), and
    ``indexer`` (p, c, seqs, decode, tokens, hardware)."""
    def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
        h, d_qk, d_v = project(p, kind, c, tokens, hardware=False)
        core(p, h, d_qk, d_v, pairs_of(seqs, c, decode))
        indexer(p, c, seqs, decode, tokens, False)

    def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
        h, d_qk, d_v = project(p, kind, c, tokens, hardware=True)
        core(p, h, d_qk, d_v, hardware_pairs_of(seqs, c, decode))
        indexer(p, c, seqs, decode, tokens, True)

    return price, price_hardware


def indexed_decode_cache(kind, c, seqs, attended) -> dict:
    """The decode cache of such a layer: the attended keys and values (``attended``: kv -> keys the new token
    attends) read and the new token's written; every cached index key and the new one (d each) read, the new one
    written."""
    entry, write = entry_bytes(kind, c)
    kb, ib, d = c["kv_cache_bytes"], c["index_cache_bytes"], c["index_head_dim"]
    return {"kv_read": seqs.sum(attended) * entry * kb, "kv_write": seqs.count * write * kb,
            "index_read": seqs.sum(lambda kv: kv + 1) * d * ib, "index_write": seqs.count * d * ib}


# --- decode: the KV cache -------------------------------------------------------------------------------------

def entry_bytes(kind, c) -> tuple[int, int]:
    """(elements read per attended cache entry, elements written per new entry) of a GQA or MLA layer."""
    if kind.projection == "mla":
        latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]
        return latent, latent
    hd, n_kv, shared = c["head_dim"], c["num_kv_heads"], False
    if kind.mixer == GLOBAL:
        hd, n_kv = c["global_head_dim"] or hd, c["global_num_kv_heads"] or n_kv
        shared = c["share_kv_projections"]
    n = n_kv * (hd if shared else hd + (c["value_head_dim"] or hd))
    return n, 0 if kind.kv_shared else n


def decode_cache(kind, c, seqs) -> dict:
    """The KV cache a decode step reads (every attended entry) and writes (the new token's)."""
    entry, write = entry_bytes(kind, c)
    kb = c["kv_cache_bytes"]
    mixer, span = dynamic(kind.mixer, kind.span, c) if kind.projection == "gqa" else (kind.mixer, kind.span)
    out = {"kv_read": seqs.sum(lambda kv: masks.new_token_keys(mixer, span, kv)) * entry * kb,
           "kv_write": seqs.count * write * kb}
    if c["dynamic_mask_keys"] and kind.projection == "gqa":  # the scores the mask picks by: one per KV head and
        n_kv = kv_widths(kind, c)[0]  # key, every visible one read, the new token's written
        visible = seqs.sum(lambda kv: masks.new_token_keys(kind.mixer, kind.span, kv))
        out["index_read"] = visible * n_kv * c["index_cache_bytes"]
        out["index_write"] = seqs.count * n_kv * c["index_cache_bytes"]
    t0 = c["cca_depthwise_kernel"]
    if t0 and kind.projection == "gqa":  # CCA: both convs' kernels; per sequence the conv inputs it keeps (the last
        # t0 - 1 + t1 - 1) and the delayed half of the values (the last token's), read and written
        n_kv, hd = kv_widths(kind, c)
        t1, channels = c["cca_grouped_kernel"], (c["num_query_heads"] + n_kv) * hd
        out["weights"] = out.get("weights", 0) + channels * (t0 + hd * t1) * c["weight_bytes"]
        kept = (t0 - 1 + t1 - 1) * channels + n_kv * hd // 2
        out["state"] = out.get("state", 0) + 2 * kept * c["state_bytes"] * seqs.count
    K = c["kv_conv_kernel"]
    if K and kind.projection == "gqa":  # the k/v convs: their kernels, and per sequence their last K - 1 inputs
        n_kv, hd = kv_widths(kind, c)
        channels = n_kv * (hd + (c["value_head_dim"] or hd))
        out["weights"] = channels * K * c["weight_bytes"]
        out["state"] = 2 * (K - 1) * channels * c["state_bytes"] * seqs.count
    return out


# --- the plan -------------------------------------------------------------------------------------------------

def mixer_of(letter: str, layer_number: int, c):
    if letter == "L":
        return WINDOW, c["sliding_window_size"], False, 0
    if letter == "C":
        return CHUNK, c["chunk_attn_window_size"], False, 0
    if letter == "G":
        return (GLOBAL if c["causal"] else BIDIRECTIONAL), 0, False, 0
    return None


def check(c, letters: str, err) -> None:
    if c["value_head_dim"] and c["share_kv_projections"] and c["value_head_dim"] != (c["global_head_dim"] or
                                                                                   c["head_dim"]):
        err("value_head_dim", f"{c['value_head_dim']}: the global layers' shared K/V projection "
                              "(share_kv_projections) makes values as wide as keys")
    if c["value_head_dim"] and c["attention_type"] != "global":
        err("value_head_dim", f"{c['value_head_dim']} is a GQA width; attention_type={c['attention_type']!r} has "
                              "its own (MLA: v_head_dim)")
    if c["attention_router_experts"]:
        k = c["num_query_heads"] // c["num_kv_heads"]  # each expert's heads are num_kv_heads
        if c["attention_type"] != "global":
            err("attention_router_experts", f"{c['attention_router_experts']}: a mixture of attention heads is "
                                            f"modelled on GQA, not attention_type={c['attention_type']!r}")
        if k > c["attention_router_experts"]:
            err("attention_router_experts", f"{c['attention_router_experts']} experts: each token uses num_query_heads"
                                            f" / num_kv_heads = {k} of them (each expert has num_kv_heads query "
                                            "heads), more than there are")
    if c["attention_differential"]:
        for key, bad in (("attention_type", c["attention_type"] != "global"), ("value_head_dim", c["value_head_dim"]),
                         ("share_kv_projections", c["share_kv_projections"]),
                         ("global_head_dim", c["global_head_dim"]), ("global_num_kv_heads", c["global_num_kv_heads"])):
            if bad:
                err(key, f"{c[key]!r} with attention_differential: differential attention is modelled on plain GQA "
                         "(DiffLlama's) only")
        if c["num_kv_heads"] % 2 or c["num_query_heads"] % 2:
            err("num_kv_heads", f"{c['num_kv_heads']} KV heads and {c['num_query_heads']} query heads with "
                                "attention_differential: both must be even (the values split in two halves of KV "
                                "heads, the outputs combine heads in pairs)")
    if bool(c["cca_depthwise_kernel"]) != bool(c["cca_grouped_kernel"]):
        err("cca_grouped_kernel" if c["cca_depthwise_kernel"] else "cca_depthwise_kernel",
            "0: compressed convolutional attention runs both convs (cca_depthwise_kernel and cca_grouped_kernel, "
            "each at least 1 tap)")
    if c["cca_depthwise_kernel"]:
        if c["aux_conv_impl"] == "pre_padded":
            err("aux_conv_impl", "'pre_padded' is not modelled for compressed convolutional attention's convs (use "
                                 "'valid' or 'padded')")
        if c["conv_weight_grad"] == "dense":
            err("conv_weight_grad", "'dense' is not modelled for compressed convolutional attention's convs (its "
                                    "grouped conv's weight gradient; use 'grouped')")
        for key in ("value_head_dim", "global_head_dim", "global_num_kv_heads", "share_kv_projections",
                    "attention_differential", "attention_router_experts", "kv_conv_kernel", "num_kv_shared_layers"):
            if c[key]:
                err(key, f"{c[key]!r} with cca_depthwise_kernel: compressed convolutional attention is modelled on "
                         "plain GQA (ZAYA's) only")
        if c["head_dim"] % 2 or c["num_query_heads"] % c["num_kv_heads"]:
            err("head_dim", f"{c['head_dim']} with cca_depthwise_kernel: the values are two halves of each KV head "
                            "(the head width must be even)")
    if c["dynamic_mask_keys"]:
        if not c["causal"]:
            err("dynamic_mask_keys", f"{c['dynamic_mask_keys']} with causal=False: the dynamic mask is modelled on "
                                     "causal attention (Doge's)")
        if "C" in letters:
            err("dynamic_mask_keys", f"{c['dynamic_mask_keys']} with chunked ('C') layers: not modelled")
        if c["kv_conv_kernel"] or c["num_kv_shared_layers"]:
            err("dynamic_mask_keys", f"{c['dynamic_mask_keys']} with kv_conv_kernel or num_kv_shared_layers: not "
                                     "modelled")
    if c["kv_conv_dynamic_layers"]:
        check_letters(c, "kv_conv_dynamic_layers", err)
        if not c["kv_conv_kernel"]:
            err("kv_conv_dynamic_layers", f"{c['kv_conv_dynamic_layers']!r} with kv_conv_kernel=0: dynamic taps are "
                                          "those of the key and value convs (kv_conv_kernel taps)")
    for key in ("relative_logits_dim", "kv_conv_kernel", "cca_depthwise_kernel", "dynamic_mask_keys",
                "attention_sink_proj"):
        if c[key] and c["attention_type"] != "global":
            err(key, f"{c[key]} is modelled on GQA layers (Inkling's), not attention_type={c['attention_type']!r}")
    if c["relative_logits_dim"] and not c["relative_logits_extent"] and any(x in letters for x in "GC"):
        err("relative_logits_extent", "0 with relative_logits_dim on global or chunked layers: their logits' extent "
                                      "is needed")
    if c["mla_q_latent_concat"] and (c["attention_type"] != "mla" or not c["q_lora_rank"]):
        err("mla_q_latent_concat", f"True needs MLA with a q latent (attention_type={c['attention_type']!r}, "
                                   f"q_lora_rank={c['q_lora_rank']})")
    if c["attention_type"] == "mla" and c["num_kv_shared_layers"]:
        err("num_kv_shared_layers", f"{c['num_kv_shared_layers']} is not modelled with attention_type='mla' (KV-shared "
                                    "layers reuse an earlier layer's keys and values: Gemma 4's GQA)")
    if "L" in letters and c["sliding_window_size"] < 1:
        err("sliding_window_size", f"must be >= 1 when attention_layer_pattern={letters!r} has 'L' layers, got "
                                   f"{c['sliding_window_size']}")
    if "C" in letters and c["chunk_attn_window_size"] < 1:
        err("chunk_attn_window_size", f"must be >= 1 when attention_layer_pattern={letters!r} has 'C' "
                                      f"layers, got {c['chunk_attn_window_size']}")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "attention_type": field_of("global", str, "'global': MHA/GQA/MQA projections; 'mla': multi-head latent "
                                         "attention (DeepSeek); 'compressed': DeepSeek-V4's attention (q through "
                                         "the q_lora_rank latent, one projection D -> num_kv_heads*head_dim used "
                                         "as both keys and values, the output through o_groups and o_lora_rank) "
                                         "with sliding-window ('L'), compressed sparse ('S') and heavily "
                                         "compressed ('H') layers.", choices=("global", "mla", "compressed")),
    "num_query_heads": field_of(4, int, "Query heads H.", minimum=1),
    "num_kv_heads": field_of(4, int, "Key/value heads (GQA groups); must divide num_query_heads.", minimum=1),
    "head_dim": field_of(128, int, "Per-head width for 'global' attention (q, k and v).", minimum=1),
    "global_head_dim": field_of(0, int, "Head width of the global ('G') layers of a model that mixes local and global "
                                  "layers (Gemma 4); 0 means head_dim.", minimum=0),
    "global_num_kv_heads": field_of(0, int, "KV heads of the global ('G') layers (Gemma 4); 0 means num_kv_heads.",
                              minimum=0),
    "value_head_dim": field_of(0, int, "Per-head value width of GQA/MHA attention when it differs from the query/key width "
                                 "(MiMo-V2-Flash: 128 against head_dim 192); 0 means head_dim.", minimum=0),
    "share_kv_projections": field_of(False, bool, "The global ('G') layers project keys once and use them as values "
                                            "too (Gemma 4): one K/V projection instead of two."),
    "attention_output_gate": field_of(False, bool, "Gated attention (Qwen3-Next): the q projection also emits a "
                                             "per-head output gate, doubling its width; on MLA, a projection D -> "
                                             "num_query_heads x v_head_dim whose sigmoid gates the attention "
                                             "output (Kimi K3's g_proj; with mla_q_latent_concat, part of the q "
                                             "up-projection, A.X K2's q_gate_proj)."),
    "relative_logits_dim": field_of(0, int, "Relative-position logits (Inkling's): each GQA layer projects D -> heads x "
                                            "this width (r_proj) and multiplies each head's vector by a learned "
                                            "bank of bias profiles, this width -> the extent (the window on a "
                                            "windowed layer, relative_logits_extent on a global one), per token; "
                                            "the bias is then gathered onto the pairs. 0: none.", minimum=0),
    "relative_logits_extent": field_of(0, int, "The distances a global layer's relative-position logits cover "
                                               "(Inkling's rel_extent).", minimum=0),
    "kv_conv_kernel": field_of(0, int, "A causal depthwise conv of this many taps over each GQA layer's keys and "
                                       "values after their projections (Inkling's k_sconv, v_sconv); 0: none.",
                               minimum=0),
    "kv_conv_dynamic_layers": field_of("", str, "Attention layers, by pattern letter ('G', 'L', 'C'), whose key "
                                                "and value convs (kv_conv_kernel) take per-token taps: each tap "
                                                "a static weight plus one projected from the layer's key (value) "
                                                "input, D -> KV heads x taps, shared within a KV head (Inkling 2's "
                                                "full layers: 'G'; the projections in qkv_proj, the taps' "
                                                "multiply-adds in kv_conv). '': static convs."),
    "dynamic_conv_impl": field_of("elementwise", str, "Hardware: the per-token taps of a dynamic conv "
                                                      "(kv_conv_dynamic_layers) as a multiply and a sum over each "
                                                      "token's window, no matmul ('elementwise': transformers' "
                                                      "Inkling 2, and XLA's count of a jnp port), or a kernel "
                                                      "counting its multiply-adds as the model does ('valid').",
                                  choices=("elementwise", "valid")),
    "attention_sink_proj": field_of(False, bool, "Attention sinks projected from the layer input (Inkling 2's "
                                                 "sink_proj): D -> one logit per query head and token, joining "
                                                 "the softmax with no value (2 D H FLOPs per token, in qkv_proj)."),
    "dynamic_mask_keys": field_of(0, int, "Dynamic-mask attention (Doge's DMA): each GQA layer scores every key "
                                          "from its values (dt_proj, KV heads x head width -> KV heads per token, "
                                          "in qkv_proj) and each query attends at most this many of its visible "
                                          "keys, those the scores pick: as many pairs as a causal window of it; "
                                          "decode reads every visible key's score (index_read). 0: none.",
                                  minimum=0),
    "cca_depthwise_kernel": field_of(0, int, "Compressed convolutional attention (ZAYA's CCA): on each GQA layer a "
                                             "causal depthwise conv of this many taps over the q and k channels "
                                             "((heads + KV heads) x head_dim), then cca_grouped_kernel; 0: none.",
                                     minimum=0),
    "cca_grouped_kernel": field_of(0, int, "Compressed convolutional attention's second conv: this many taps, one "
                                           "group per q or k head (head_dim in and out per tap: 2 head_dim^2 per "
                                           "head, tap and token); component cca_conv with the depthwise one.",
                                   minimum=0),
    "mla_q_latent_concat": field_of(False, bool, "MLA whose q up-projection reads the q latent normed and raw side "
                                                 "by side (A.X K2's q_gate_proj: 2 q_lora_rank -> heads x (qk + "
                                                 "v_head_dim) with the output gate): twice the up-projection's "
                                                 "inputs."),
    "attention_head_gate": field_of(False, bool, "A scalar gate per query head (LFM3's g_proj): a projection D -> "
                                           "num_query_heads whose sigmoid scales each head's output."),
    "attention_router_experts": field_of(0, int, "A mixture of attention heads (JetMoE's MoA): a router D -> this "
                                                "many experts before each attention layer; each expert projects "
                                                "num_kv_heads query heads in and their output out, each token using "
                                                "its top num_query_heads / num_kv_heads experts (the same FLOPs as "
                                                "GQA of num_query_heads heads, plus this router). 0: none.",
                                         minimum=0),
    "attention_differential": field_of(False, bool, "Differential attention (DiffLlama, the Differential "
                                              "Transformer): the KV heads' values split in two halves whose "
                                              "outputs sit side by side, each query head's map weighing values "
                                              "2*head_dim wide, heads then subtracted in pairs: PV costs twice a "
                                              "plain head's (QK^T and the projections are plain)."),
    "differential_impl": field_of("doubled_values", str, "Hardware differential attention: 'doubled_values' (one "
                                                  "attention call over the two value halves side by side) or "
                                                  "'two_calls' (one call per half, QK^T computed twice: "
                                                  "transformers' DiffLlama, or two flash kernels; XLA's optimizer "
                                                  "merges the two identical QK^T of plain jitted attention, which "
                                                  "then runs 'doubled_values').", choices=("doubled_values",
                                                                                        "two_calls")),
    "q_lora_rank": field_of(0, int, "MLA and compressed attention: q down-projection rank; 0 means q is projected "
                              "directly from D.", minimum=0),
    "kv_lora_rank": field_of(512, int, "MLA: compressed kv rank.", minimum=1),
    "qk_nope_head_dim": field_of(128, int, "MLA: per-head q/k width without RoPE.", minimum=0),
    "qk_rope_head_dim": field_of(64, int, "MLA: per-head q/k RoPE width (k's is shared by all heads).", minimum=0),
    "v_head_dim": field_of(128, int, "MLA: per-head value width.", minimum=1),
    "sliding_window_size": field_of(0, int, "Window W of 'L' layers: query i sees keys max(0, i-W+1)..i.",
                              minimum=0),
    "chunk_attn_window_size": field_of(0, int, "Chunk C of 'C' layers: query i sees earlier keys of its chunk.",
                                 minimum=0),
    "causal": field_of(True, bool, "False: bidirectional (encoder) attention, L^2 pairs, on 'G' layers."),
    "attention_impl": field_of("ideal", str, "Hardware attention kernel: 'ideal' computes only attended pairs; 'dense' "
                                       "the full L x L square, masked; 'blocked' every attention_block_q x "
                                       "attention_block_kv tile the mask touches (flash/splash). Packed documents "
                                       "are tiled one by one (varlen kernels).",
                         choices=("ideal", "dense", "blocked")),
    "attention_block_q": field_of(512, int, "Query tile of attention_impl='blocked'.", minimum=1),
    "attention_block_kv": field_of(512, int, "Key/value tile of attention_impl='blocked'.", minimum=1),
    "flash_backward_recompute": field_of(False, bool, "Flash-style backward: QK^T is recomputed once more."),
    "flash_backward_split": field_of(False, bool, "The flash backward runs as two kernels, one for dq and one for dk "
                                     "and dv, each recomputing QK^T and dO V^T: one more forward of the core "
                                     "attention on top of flash_backward_recompute (splash's default; MaxText's "
                                     "sa_use_fused_bwd_kernel false). Needs flash_backward_recompute."),
    "mla_absorbed": field_of(False, bool, "Hardware MLA runs absorbed: attention in the kv latent (d_qk = kv_lora + "
                                    "rope, d_v = kv_lora) with per-token absorb/expand matmuls."),
    "qkv_norms": field_of("none", str, "Hardware, train: norms on the projected q and k ('qk': Qwen3, Gemma 3, OLMo 3) or "
                                 "q, k and v ('qkv': Gemma 4) before the names a remat policy saves: the norms' "
                                 "backward needs the projections' outputs, so those projections are recomputed "
                                 "even when q, k and v are saved (a q projection fused with an output gate is, "
                                 "always); 'qk_rope' q and k on the RoPE layers only (Llama 4's NoPE layers skip "
                                 "the norm).", choices=("none", "qk", "qkv", "qk_rope")),
    "causal_pairs": field_of("exact", str, "Causal pair count of a length-L sequence: 'exact' L(L+1)/2, "
                                     "'half_square' L^2/2 (MaxText, Megatron) or 'full_square' L^2, the mask "
                                     "ignored (MaxText before its PR #1988).",
                       choices=("exact", "half_square", "full_square")),
    "window_pairs": field_of("exact", str, "Sliding-window/chunked pair count: 'exact', 'maxtext' (MaxText's "
                                     "approximation), 'megatron', 'global' (the layer counted as causal "
                                     "global attention under causal_pairs: MaxText's function for olmo3), or "
                                     "'unclamped' (L*W - W^2/2 even when L < W: MaxText's DeepSeek-V4 function), or "
                                     "'bridge' (Megatron-Bridge: T*W - rows*W(W-1)/2 over the T tokens it prices, "
                                     "half the square when W reaches the mean row length).",
                       choices=("exact", "maxtext", "megatron", "global", "unclamped", "bridge")),
    "window_scope": field_of("pattern", str, "Which layers a window or chunk applies to: 'pattern' the 'L' and 'C' layers; "
                                       "'all_layers' every attention layer of a model that has any (Megatron's "
                                       "seed rule: the chunk if one is set, else the window, for every layer).",
                       choices=("pattern", "all_layers")),
    "mla_norm_flops": field_of(False, bool, "Megatron: add the '+1' norm terms inside the MLA q and kv terms."),
    "kv_cache_bytes": field_of(2, int, "Bytes per KV-cache element (keys, values, MLA's latent, compressed blocks).",
                         minimum=1),
}


FAMILY = Family(
    name="attention",
    letters={"G": "global causal attention (bidirectional with causal=False)", "L": "sliding window attention",
             "C": "chunked attention"},
    mixers={GLOBAL: "global causal", WINDOW: "sliding window", CHUNK: "chunked", BIDIRECTIONAL: "bidirectional"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    plan_keys=("causal", "sliding_window_size", "chunk_attn_window_size"),
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    weights=weights,
    hf_layer_types={"full_attention": "G", "attention": "G", "full": "G", "sliding_attention": "L",
                    "chunked_attention": "C"},
    claims=90,
)
