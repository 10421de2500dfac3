"""The gated delta net (Qwen3-Next's linear attention), letter 'D', mixer and projection "gdn": a recurrent state
S [key_head_dim x value_head_dim] per value head replaces attention over pairs.

Per token: the input projection D -> q, k (key heads x key_head_dim), v and z (value heads x value_head_dim), the
gates a and b (value heads); a causal depthwise conv of ``gdn_conv_kernel_dim`` taps over q, k and v; the delta-rule
recurrence (``terms.gdn_core``: reads and writes of S, ``gdn_core_state_ops`` per state element); the output
projection. Model FLOPs count the conv's non-padding taps (``gdn_conv_taps='full'``: every tap, a convention).
Hardware FLOPs: the conv as ``gdn_conv_impl`` pads it and its gradients (``conv_weight_grad``), the chunked form of
the recurrence (``gdn_impl``, ``gdn_chunk_size``) with its triangular solve's gradient, and no remat name for any of
its matmuls. Decode: the state and the conv's last K - 1 inputs, read and written.
"""

from __future__ import annotations

from .. import masks, terms
from ..components import WEIGHT, Component
from .attention import WINDOW
from .base import Family, Priced

GDN = "gdn"

COMPONENTS = (Component("gdn_conv", WEIGHT, 90, "the gated delta net's causal depthwise conv"),)


def _widths(c):
    return (c["emb_dim"], c["gdn_num_key_heads"], c["gdn_num_value_heads"], c["gdn_key_head_dim"],
            c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"])


def _taps(c, seqs, decode, tokens, K):
    """The conv's taps: every one (``gdn_conv_taps='full'``) or the non-padding ones, a causal window of K."""
    if c["gdn_conv_taps"] == "full":
        return K * tokens
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(WINDOW, K, kv))
    return seqs.exact_pairs(WINDOW, K)


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    d, nk, nv, dk, dv, K = _widths(c)
    proj_in, proj_out = terms.gdn_proj(d, nk, nv, dk, dv)
    p.out["qkv_proj"] = proj_in * tokens
    p.out["gdn_conv"] = 2 * terms.gdn_conv_channels(nk, nv, dk, dv) * _taps(c, seqs, decode, tokens, K)
    p.out["core_attention"] = terms.gdn_core(nv, dk, dv, c["gdn_core_state_ops"]) * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state's gradient of S^T k, S^T q: outer products
    p.out["out_proj"] = proj_out * tokens


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    d, nk, nv, dk, dv, K = _widths(c)
    proj_in, proj_out = terms.gdn_proj(d, nk, nv, dk, dv)
    p.out["qkv_proj"] = proj_in * tokens
    if c["gdn_conv_impl"] == "padded" and not decode:  # K taps at each of L + K - 1 outputs
        taps = seqs.sum(lambda L: K * (L + K - 1))
    else:
        taps = _taps(c, seqs, decode, tokens, K)
    channels = terms.gdn_conv_channels(nk, nv, dk, dv)
    p.out["gdn_conv"] = 2 * channels * taps
    if c["mode"] == "train":
        _conv_grads(p, c, channels, K * tokens)
    if c["gdn_impl"] != "recurrent" and not decode:
        C = c["gdn_chunk_size"]  # every sequence padded to whole chunks
        chunks = seqs.sum(lambda L: -(-L // C))
        p.out["core_attention"] = terms.gdn_chunk(nv, dk, dv, C, c["gdn_impl"] == "chunked_solve") * chunks
        if c["gdn_impl"] == "chunked":  # the triangular solve's gradient holds one C x C by C x C matmul
            p.grad_extra["core_attention"] = nv * 2 * C ** 3 * chunks
    else:
        p.out["core_attention"] = terms.gdn_core(nv, dk, dv, c["gdn_core_state_ops"]) * tokens
        p.single["core_attention"] = p.out["core_attention"]
    p.out["out_proj"] = proj_out * tokens
    # no remat policy name covers the gated delta net's projections or core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def _conv_grads(p: Priced, c, channels: int, all_taps) -> None:
    """The causal conv's two gradients beyond the forward's cost each: the input gradient over every tap
    (``gdn_conv_impl='pre_padded'``), the weight gradient over every pair of channels (``conv_weight_grad``)."""
    fwd, extra = p.out["gdn_conv"], 0
    if c["gdn_conv_impl"] == "pre_padded":
        extra += 2 * channels * all_taps - fwd
    if c["conv_weight_grad"] == "dense":
        extra += fwd * (channels - 1)
    if extra:
        p.grad_extra["gdn_conv"] = extra


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed (they are no matmul), and the state S [dk, dv] per value head with the conv's last
    K - 1 inputs, read and written."""
    _, nk, nv, dk, dv, K = _widths(c)
    channels = terms.gdn_conv_channels(nk, nv, dk, dv)
    return {"weights": channels * K * c["weight_bytes"],
            "state": 2 * (nv * dk * dv + (K - 1) * channels) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (GDN, 0, False, 0) if letter == "D" else None


def check(c, letters: str, err) -> None:
    if c["attention_output_dim"] and "D" in letters:
        err("attention_output_dim", "is not supported with gated-delta-net ('D') layers")


FAMILY = Family(
    name="gdn",
    letters={"D": "gated delta net (linear attention)"},
    mixers={GDN: "gated delta net"},
    components=COMPONENTS,
    keys=("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim",
          "gdn_conv_kernel_dim", "gdn_impl", "gdn_chunk_size", "gdn_conv_impl", "conv_weight_grad", "gdn_conv_taps",
          "gdn_core_state_ops", "state_bytes"),
    mixer_of=mixer_of,
    projection=GDN,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    kernels=("gdn",),
    flax_layer="_gdn",
    bench_cases=("gated delta net",),
)
