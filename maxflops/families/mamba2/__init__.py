"""Mamba-2 (SSD), letter 'M', mixer and projection "mamba2": a selective state-space layer. Per value head a state
h [head_dim x state_dim] replaces attention over pairs; groups of heads share the B and C projections.

Per token, with d_in = heads x head_dim, G groups, N the state width, K the conv width:
- in_proj D -> z (d_in), x (d_in), B (G x N), C (G x N), dt (heads): 2 D (2 d_in + 2 G N + heads);
- the causal depthwise conv over x, B and C (d_in + 2 G N channels, K taps; ``maxflops.families.conv``);
- the scan, per head: h <- exp(dt A) h + dt x (x) B (a decay and an outer product: no contraction), y = h C + D x
  (a read of the state against C: 2 head_dim N), so ``mamba_scan_flops`` = 2 per (inner channel, state) and token;
- the gated norm (elementwise) and out_proj d_in -> D.
Hardware: the recurrence as above (``mamba_impl='recurrent'``; its state read's state gradient is an outer product)
or the chunked SSD algorithm of transformers' torch path and mamba_ssm (``'chunked'``, chunks of
``mamba_chunk_size``, every sequence padded to whole chunks: ``ssd_chunked``); the conv by ``mamba_conv_impl``.
Decode: the recurrence for the new token; the state and the conv's last K - 1 inputs read and written.
"""

from __future__ import annotations

from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

MAMBA2 = "mamba2"

COMPONENTS = (Component("ssm_conv", WEIGHT, 95, "a state-space mixer's causal depthwise conv (Mamba's x, B, C)"),)


def mamba2_proj(d: int, heads: int, head_dim: int, state: int, groups: int) -> tuple[int, int]:
    """Mamba-2 projections per token: (input, output). input: D -> z and x (d_in = heads x head_dim each), B and C
    (groups x state each), dt (heads). output: d_in -> D."""
    d_in = heads * head_dim
    return 2 * d * (2 * d_in + 2 * groups * state + heads), 2 * d_in * d


def mamba2_conv_channels(heads: int, head_dim: int, state: int, groups: int) -> int:
    """Channels of Mamba-2's causal depthwise conv: x, B and C."""
    return heads * head_dim + 2 * groups * state


def mamba2_scan(heads: int, head_dim: int, state: int, flops_per_state: int = 2) -> int:
    """The Mamba-2 recurrence per token, all heads: ``flops_per_state`` per state element (2: the read h C; the decay
    and the outer-product update are elementwise)."""
    return flops_per_state * heads * head_dim * state


def ssd_chunked(heads: int, head_dim: int, state: int, chunk: int, chunks: int) -> int:
    """The chunked SSD algorithm over one sequence padded to ``chunks`` chunks of ``chunk`` tokens, all heads (B and
    C repeated from their groups to the heads, as transformers' torch path and mamba_ssm run it): per chunk and head
    C B^T (2 Q^2 N), its masked product with x (2 Q^2 P), the chunk's state B^T x (2 Q N P) and the read of the
    incoming state by C (2 Q N P); between chunks the decay matrix over the chunks plus the initial state, applied
    to every state (2 (chunks + 1)^2 P N per head)."""
    q, p, n = chunk, head_dim, state
    return heads * (chunks * (2 * q * q * n + 2 * q * q * p + 4 * q * n * p) + 2 * (chunks + 1) ** 2 * p * n)


def widths(c):
    """(D, heads, head_dim, state_dim, groups, conv kernel)."""
    return (c["emb_dim"], c["mamba_num_heads"], c["mamba_head_dim"], c["mamba_state_dim"], c["mamba_n_groups"],
            c["mamba_conv_kernel"])


def _project(p: Priced, c, tokens) -> tuple:
    d, H, P, N, G, K = widths(c)
    proj_in, proj_out = mamba2_proj(d, H, P, N, G)
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens
    return mamba2_conv_channels(H, P, N, G), K


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    d, H, P, N, G, K = widths(c)
    if c["mamba_inner_width"] == "twice_hidden":  # a convention: d_in = 2 x hidden (the dt part keeps the heads)
        inner = 2 * d
        p.out["qkv_proj"] = 2 * d * (2 * inner + 2 * G * N + H) * tokens
        p.out["out_proj"] = p.closing["out_proj"] = 2 * inner * d * tokens
        channels = inner + 2 * G * N
    else:
        inner = H * P
        channels, K = _project(p, c, tokens)
    if c["ssm_conv_flops"]:
        conv.price(p, "ssm_conv", channels, K, c, seqs, decode, tokens)
    p.out["core_attention"] = c["mamba_scan_flops"] * inner * N * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state read h C: its state gradient is an outer product


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, P, N, _, _ = widths(c)
    channels, K = _project(p, c, tokens)
    conv.price_hardware(p, "ssm_conv", c["mamba_conv_impl"], channels, K, c, seqs, decode, tokens)
    if c["mamba_impl"] == "chunked" and not decode:
        Q = c["mamba_chunk_size"]
        p.out["core_attention"] = seqs.sum(lambda L: ssd_chunked(H, P, N, Q, -(-L // Q)))
    else:
        p.out["core_attention"] = mamba2_scan(H, P, N, 2) * tokens
        p.single["core_attention"] = p.out["core_attention"]
    # no remat policy name covers a Mamba layer's projections or scan ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed (they are no matmul), and per sequence the state (heads x head_dim x state_dim)
    with the conv's last K - 1 inputs, read and written."""
    _, H, P, N, G, K = widths(c)
    channels = mamba2_conv_channels(H, P, N, G)
    return {"weights": channels * K * c["weight_bytes"],
            "state": 2 * (H * P * N + (K - 1) * channels) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (MAMBA2, 0, False, 0) if letter == "M" else None


def check(c, letters: str, err) -> None:
    if "M" not in letters:
        return
    if c["mamba_num_heads"] % c["mamba_n_groups"]:
        err("mamba_n_groups", f"{c['mamba_n_groups']} does not divide mamba_num_heads={c['mamba_num_heads']}")
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with Mamba ('M') layers")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "mamba_num_heads": field_of(128, int, "Mamba-2 heads (each with its own state; d_in = heads x head_dim).", minimum=1),
    "mamba_head_dim": field_of(64, int, "Mamba-2 head width (channels per head).", minimum=1),
    "mamba_state_dim": field_of(128, int, "Mamba-2 state width N (ssm_state_size, d_state).", minimum=1),
    "mamba_n_groups": field_of(8, int, "Mamba-2 groups sharing the B and C projections (divides the heads).", minimum=1),
    "mamba_conv_kernel": field_of(4, int, "Mamba's causal depthwise conv width over x, B and C.", minimum=1),
    "mamba_impl": field_of("recurrent", str, "Hardware Mamba-2 scan: 'recurrent' (the state read h C per token and head) "
                                        "or 'chunked' (the SSD algorithm of transformers' torch path and "
                                        "mamba_ssm: per chunk of mamba_chunk_size C B^T, its product with x, the "
                                        "chunk states and their read, and the state passing between chunks; see "
                                        "maxflops.families.mamba2.ssd_chunked).", choices=("recurrent", "chunked")),
    "mamba_chunk_size": field_of(128, int, "Chunk length of mamba_impl='chunked' (every sequence padded to whole chunks).",
                           minimum=1),
    "mamba_conv_impl": field_of("valid", str, "Hardware Mamba causal conv (Mamba-2 and Mamba-1): " + conv.IMPL_DOC,
                          choices=conv.IMPLS),
    "mamba_scan_flops": field_of(2, int, "Model FLOPs of the Mamba scan per inner channel, state element and token. Exact "
                                   "2: the state read h C (the decay and the update dt x (x) B are elementwise). "
                                   "Megatron-LM and Megatron-Bridge count 7.", minimum=1),
    "mamba_inner_width": field_of("heads", str, "Model FLOPs: the Mamba-2 inner width d_in of in_proj's x and z, the scan and "
                                          "out_proj: 'heads' (exact: mamba_num_heads x mamba_head_dim) or "
                                          "'twice_hidden' (Megatron-LM's and Megatron-Bridge's 2 x emb_dim, whatever "
                                          "the heads; their dt part keeps the heads).",
                            choices=("heads", "twice_hidden")),
    "ssm_conv_flops": field_of(True, bool, "Model FLOPs: count Mamba's causal depthwise conv (Megatron-LM, Megatron-Bridge "
                                     "and NeMo leave it out)."),
}


FAMILY = Family(
    name="mamba2",
    letters={"M": "Mamba-2 (SSD) state-space layer"},
    mixers={MAMBA2: "Mamba-2"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    projection=MAMBA2,
    check=check,
    shared_keys=("mamba_conv_impl",),  # Mamba-1's conv reads it too
)
