"""Cross-attention between a byte stream and its patches (BLT, the byte latent transformer), letters 'Y' and 'U',
projection "patch": the local encoder's patch queries over their bytes ('Y'), and the local decoder's bytes over
their patch's keys ('U'). The patches between them run as any layers do, over the patch stream (the trunk's
``patch_layers``: P = ``patches_per_sequence`` positions a sequence, or L + 1 with 0).

Per sequence of L bytes and P patches, k = ``patch_cross_k``, D the layer's width, H query heads and Hkv KV heads of
width hd (``head_dim``; BLT's is D / H), D_g the patch stream's width (the patch layers' own emb_dim):
- 'Y': the bytes' max over each patch (no matmul), projected D -> k D per patch (``patch_proj``): P k queries of
  width D. q_proj and o_proj on the P k queries, k_proj and v_proj on the L bytes (``qkv_proj`` / ``out_proj``); each
  patch's k queries attend its own bytes: k L pairs (every byte is in one patch). The last 'Y' layer feeds the patch
  stream: its queries, P x k D, projected k D -> D_g unless k D = D_g (transformers' token_embedding_projection, an
  identity then), in ``patch_proj``.
- 'U': the first 'U' layer projects the patch stream's output D_g -> k D per patch (``patch_proj``: P k keys of width
  D, which every 'U' layer reads); q_proj and o_proj on the L bytes, k_proj and v_proj on the P k keys; each byte
  attends the k keys of its patch (transformers' decoder reads the patch before: the ids shifted by one): k L pairs.
Their q and k RMS norms are elementwise. Training: three times the forward (a 'Y' layer whose output the next 'Y'
replaces, as transformers' encoder does with cross-attention at every layer, is a frozen layer: forward only).
Hardware: ``attention_impl='ideal'`` the k L pairs; 'dense' and 'blocked' the whole P k x L rectangle, masked
(transformers' eager attention; the patches' bounds are data, so no tile is known to be empty). Decode is not
modelled (the check refuses it): a decode step runs the patch layers only when a byte opens a patch.
"""

from __future__ import annotations

from ... import terms
from ...components import WEIGHT, Component
from ...fields import field_of
from ...sequences import patch_stream, patches_of
from ...widths import layer_widths
from ..attention import core
from ..base import Family, Priced

ENCODE, DECODE = "patch_encode", "patch_decode"
LETTERS = {"Y": ENCODE, "U": DECODE}
PATCH = "patch"

COMPONENTS = (Component("patch_proj", WEIGHT, 58, "the projections between a byte stream and its patches (BLT): "
                                                  "pooled patches D -> k D, the patch stream's input k D -> D_g and "
                                                  "its output D_g -> k D"),)


def patch_width(c) -> int:
    """D_g: the patch stream's width, the first patch layer's own emb_dim (emb_dim without patch layers or one)."""
    if c["patch_layers"] and c["layer_widths"]:
        return layer_widths(c)[min(c["patch_layers"])].get("emb_dim", c["emb_dim"])
    return c["emb_dim"]


def _price(p: Priced, kind, c, seqs, tokens, hardware: bool) -> None:
    D, H, Hkv, hd, k = c["emb_dim"], c["num_query_heads"], c["num_kv_heads"], c["head_dim"], c["patch_cross_k"]
    patches = patch_stream(seqs, c)[0].tokens  # the step's patches (P a sequence, or L + 1 a document)
    queries, keys = (k * patches, tokens) if kind.mixer == ENCODE else (tokens, k * patches)
    p.out["qkv_proj"] = 2 * D * H * hd * queries + 2 * D * 2 * Hkv * hd * keys
    p.out["out_proj"] = p.closing["out_proj"] = terms.attention_out(H, hd, D) * queries
    if kind.mixer == ENCODE:
        proj = 2 * D * k * D * patches  # the pooled patches' projection
        D_g = patch_width(c)
        if kind.computes_index and k * D != D_g:  # the patch stream's input projection
            proj += 2 * k * D * D_g * patches
    else:
        proj = 2 * patch_width(c) * k * D * patches if kind.computes_index else 0
    if proj:
        p.out["patch_proj"] = proj
    if hardware and c["attention_impl"] != "ideal":  # the whole rectangle, masked
        pairs = seqs.sum(lambda L: k * patches_of(L, c) * L)
    else:
        pairs = k * seqs.tokens  # each byte in one patch, each patch's k queries (or keys)
    core(p, H, hd, hd, pairs)


def weights(kind, c) -> dict:
    """One layer's weights, whatever the patches (its FLOPs run over the P k queries or keys, so half of them per
    token is not the weights): its q/k/v and output projections; the encoder's pooled-patch projection D -> k D, which
    every 'Y' layer runs, with the patch stream's input projection k D -> D_g on the 'Y' layer that feeds it
    (transformers' local_encoder.patch_embedding_projection and global_transformer.token_embedding_projection: one
    module each); the decoder's D_g -> k D on the 'U' layer that projects the patch stream's output."""
    D, H, Hkv, hd, k = c["emb_dim"], c["num_query_heads"], c["num_kv_heads"], c["head_dim"], c["patch_cross_k"]
    out = {"qkv_proj": D * H * hd + 2 * D * Hkv * hd, "out_proj": H * hd * D}
    D_g = patch_width(c)
    if kind.computes_index:
        out["patch_proj"] = D * k * D + (k * D * D_g if k * D != D_g else 0) if kind.mixer == ENCODE else D_g * k * D
    return out


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, seqs, tokens, False)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, seqs, tokens, True)


def decode_cache(kind, c, seqs) -> dict:
    raise ValueError("config key 'mode': 'decode' with the patch family's layers ('Y', 'U'): not modelled")


def _letters(c) -> list:
    pattern = c["attention_layer_pattern"]
    return [pattern[i % len(pattern)] for i in range(c["num_decoder_layers"])]


def mixer_of(letter: str, layer_number: int, c):
    """'Y': computes_index on the last 'Y' layer (it feeds the patch stream); 'U': on the first (it projects the
    patch stream's output for every 'U' layer)."""
    if letter not in LETTERS:
        return None
    at = [i for i, x in enumerate(_letters(c)) if x == letter]
    feeds = layer_number - 1 == (at[-1] if letter == "Y" else at[0]) if at else False
    return LETTERS[letter], 0, feeds, 0


def label(mixer_label: str, row) -> str:
    if row.computes_index:
        return mixer_label + (" (feeds the patch stream)" if row.mixer == ENCODE else " (projects the patch stream)")
    return mixer_label


def check(c, letters: str, err) -> None:
    used = set(letters) & set(LETTERS)
    if not used:
        return
    if c["attention_type"] != "global":
        err("attention_type", f"{c['attention_type']!r} with the patch family's layers ('Y', 'U'): they are "
                              "modelled on GQA (BLT's) only")
    if used & set(c["mtp_layer_pattern"] + c["parallel_layer_pattern"]):
        err("attention_layer_pattern", "the patch family's layers ('Y', 'U') run in the decoder only (not in "
                                       "mtp_layer_pattern or parallel_layer_pattern)")
    if c["mode"] == "decode":
        err("mode", "'decode' with the patch family's layers ('Y', 'U'): a byte model's decode step runs its patch "
                    "layers only when a byte opens a patch, which the patcher decides from the data; not modelled "
                    "(count prefill or train)")
    pattern = _letters(c)
    for layer in c["patch_layers"]:
        if layer < len(pattern) and pattern[layer] in LETTERS:
            err("patch_layers", f"layer {layer} is a '{pattern[layer]}' layer, which moves between the streams: "
                                "it runs on the bytes")


SCHEMA = {
    "patch_cross_k": field_of(2, int, "The patch family's queries (or keys) per patch ('Y' and 'U' layers; BLT's "
                                      "cross_attn_k): each pooled patch projected D -> k D, read as k positions of "
                                      "width D.", minimum=1),
}


FAMILY = Family(
    name="patch",
    letters={"Y": "patch queries over their own bytes, the patch stream's input (BLT's local encoder)",
             "U": "bytes over their patch's keys, from the patch stream's output (BLT's local decoder)"},
    mixers={ENCODE: "patch cross-attention (patches over their bytes)",
            DECODE: "patch cross-attention (bytes over their patch)"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=PATCH,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    weights=weights,
    plan_keys=("num_decoder_layers", "attention_layer_pattern"),
    conventions=("exact",),
)
