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

from ... import terms
from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

GDN = "gdn"

COMPONENTS = (Component("gdn_conv", WEIGHT, 90, "the gated delta net's causal depthwise conv"),)


def gdn_proj(d: int, n_k: int, n_v: int, dk: int, dv: int) -> tuple[int, int]:
    """Gated delta net projections per token: (input, output).

    input: q and k D -> n_k*dk each, v and the output gate z D -> n_v*dv each, beta and the decay a D -> n_v each.
    output: n_v*dv -> D.
    """
    return 2 * d * (2 * n_k * dk + 2 * n_v * dv + 2 * n_v), 2 * n_v * dv * d


def gdn_conv_channels(n_k: int, n_v: int, dk: int, dv: int) -> int:
    """Channels of the causal depthwise conv (q, k and v): each costs 2 FLOPs per non-padding tap."""
    return 2 * n_k * dk + n_v * dv


def gdn_chunk(n_v: int, dk: int, dv: int, chunk: int, solve: bool = False) -> int:
    """The chunked gated delta net, one chunk of C tokens, all value heads: per head the intra-chunk K K^T,
    the WY factors A V and A K, Q K^T (2C^2 dk or dv each: 3 with dk, 2 with dv counting A V and the masked
    scores times the new values), and against the state Q S, W S and the update K^T V (2C dk dv each). The
    triangular solve for A is not a matmul. With ``solve`` (transformers) the new values and decayed keys come from
    triangular solves against the UT system, so A V and A K are not matmuls: 2 with dk, 1 with dv."""
    c = chunk
    if solve:
        return n_v * (2 * 2 * c * c * dk + 1 * 2 * c * c * dv + 3 * 2 * c * dk * dv)
    return n_v * (3 * 2 * c * c * dk + 2 * 2 * c * c * dv + 3 * 2 * c * dk * dv)


def _widths(c):
    return (c["emb_dim"], c["gdn_num_key_heads"], c["gdn_num_value_heads"], c["gdn_key_head_dim"],
            c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"])


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    d, nk, nv, dk, dv, K = _widths(c)
    proj_in, proj_out = gdn_proj(d, nk, nv, dk, dv)
    p.out["qkv_proj"] = proj_in * tokens
    conv.price(p, "gdn_conv", gdn_conv_channels(nk, nv, dk, dv), K, c, seqs, decode, tokens)
    p.out["core_attention"] = terms.gdn_core(nv, dk, dv, c["gdn_core_state_ops"]) * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state's gradient of S^T k, S^T q: outer products
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    d, nk, nv, dk, dv, K = _widths(c)
    proj_in, proj_out = gdn_proj(d, nk, nv, dk, dv)
    p.out["qkv_proj"] = proj_in * tokens
    conv.price_hardware(p, "gdn_conv", c["gdn_conv_impl"], gdn_conv_channels(nk, nv, dk, dv), K, c, seqs,
                        decode, tokens)
    if c["gdn_impl"] != "recurrent" and not decode:
        C = c["gdn_chunk_size"]  # every sequence padded to whole chunks
        chunks = seqs.sum(lambda L: -(-L // C))
        p.out["core_attention"] = gdn_chunk(nv, dk, dv, C, c["gdn_impl"] == "chunked_solve") * chunks
        if c["gdn_impl"] == "chunked":  # the triangular solve's gradient holds one C x C by C x C matmul
            p.grad_extra["core_attention"] = nv * 2 * C ** 3 * chunks
    else:
        p.out["core_attention"] = terms.gdn_core(nv, dk, dv, c["gdn_core_state_ops"]) * tokens
        p.single["core_attention"] = p.out["core_attention"]
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens
    # no remat policy name covers the gated delta net's projections or core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed (they are no matmul), and the state S [dk, dv] per value head with the conv's last
    K - 1 inputs, read and written."""
    _, nk, nv, dk, dv, K = _widths(c)
    channels = gdn_conv_channels(nk, nv, dk, dv)
    return {"weights": channels * K * c["weight_bytes"],
            "state": 2 * (nv * dk * dv + (K - 1) * channels) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (GDN, 0, False, 0) if letter == "D" else None


def check(c, letters: str, err) -> None:
    if c["attention_output_dim"] and "D" in letters:
        err("attention_output_dim", "is not supported with gated-delta-net ('D') layers")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "gdn_num_key_heads": field_of(16, int, "Gated-delta-net q/k heads.", minimum=1),
    "gdn_num_value_heads": field_of(32, int, "Gated-delta-net value heads (the state count).", minimum=1),
    "gdn_key_head_dim": field_of(128, int, "Gated-delta-net q/k head width.", minimum=1),
    "gdn_value_head_dim": field_of(128, int, "Gated-delta-net value head width.", minimum=1),
    "gdn_conv_kernel_dim": field_of(4, int, "Causal depthwise conv width over q, k, v channels.", minimum=1),
    "gdn_impl": field_of("recurrent", str, "Hardware gated delta net: 'recurrent' (two state matmuls per token and "
                                      "value head), 'chunked' (MaxText, FLA: chunks of gdn_chunk_size, every "
                                      "sequence padded to whole chunks; see maxflops.families.gdn.gdn_chunk) or "
                                      "'chunked_solve' "
                                      "(transformers' torch_chunk_gated_delta_rule: the same chunks, its UT "
                                      "transform by triangular solves instead of the A V and A K matmuls).",
                   choices=("recurrent", "chunked", "chunked_solve")),
    "gdn_chunk_size": field_of(64, int, "Chunk length of gdn_impl='chunked' and 'chunked_solve'.", minimum=1),
    "gdn_conv_impl": field_of("valid", str, "Hardware gated-delta-net causal conv: " + conv.IMPL_DOC,
                        choices=conv.IMPLS),
    "conv_weight_grad": field_of("grouped", str, "Hardware, train: the depthwise convs' weight gradient (gated "
                                           "delta net, Mamba): 'grouped' each channel on its own (the forward's taps); 'dense' "
                                           "every pair of channels, the diagonal kept: XLA on CPU rewrites the "
                                           "batch-grouped convolution as a dense one, channels times the FLOPs.",
                           choices=("grouped", "dense")),
    "gdn_conv_taps": field_of("exact", str, "Causal depthwise convs (gated delta net, Mamba, Engram): 'exact' counts "
                                      "non-padding taps only (min(i+1, kernel) for token i without dilation); "
                                      "'full' counts the whole kernel (MaxText).", choices=("exact", "full")),
    "gdn_core_state_ops": field_of(2, int, "Gated-delta-net core: state-sized ops counted per token and value "
                                     "head, 2*dk*dv FLOPs each. Exact 2: the matmuls S^T k and S^T q; the "
                                     "rank-one update and the decay are elementwise. MaxText and Megatron "
                                     "count 4.", minimum=1),
    "state_bytes": field_of(4, int, "Bytes per element of a recurrent state and conv window (gated delta net, Mamba).",
                      minimum=1),
}


FAMILY = Family(
    name="gdn",
    letters={"D": "gated delta net (linear attention)"},
    mixers={GDN: "gated delta net"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=GDN,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    hf_layer_types={"linear_attention": "D", "linear": "D"},
    # the recurrent families' shared knobs (their convs' weight gradient and taps, the decode state's bytes)
    shared_keys=("conv_weight_grad", "gdn_conv_taps", "state_bytes"),
)
