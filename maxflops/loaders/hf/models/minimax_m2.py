"""MiniMax-M2: MiniMaxM2Config, modeling_minimax_m2; every layer softmax attention and MoE (intermediate_size is the
expert width); MiniMax's own checkpoint keys read as the model builds them."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# MiniMaxM2Config
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 62,
    "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
    "num_experts_per_tok": 8, "num_local_experts": 256,
}

def _checkpoint(r: Reader, d, o: dict, pattern: str) -> None:
    """Keys of MiniMax's own MiniMax-M2 checkpoint that transformers' MiniMaxM2Config keeps but does not read.
    attn_type_list (1: softmax attention) and shared_intermediate_size (0: no shared expert) are accepted at the
    values the transformers model builds and refused otherwise; the MTP modules (use_mtp, num_mtp_modules of
    mtp_transformer_layers layers each; transformers builds none) count as maxflops' MTP modules in training, each
    an eh projection, one layer like the last decoder layer and its own logits."""
    if r.has("attn_type_list"):
        kinds = r.list("attn_type_list", int)
        if any(k != 1 for k in kinds):
            raise r.fail("attn_type_list", "lightning-attention layers (0) in a minimax_m2 file are not built by "
                                           "transformers' MiniMaxM2 (load a 'minimax' file for MiniMax-01's hybrid)")
        r.ignore("attn_type_list", NO_EFFECT + " (every layer softmax attention)")
    if r.has("shared_intermediate_size"):
        if r.int("shared_intermediate_size"):
            raise r.fail("shared_intermediate_size", "a shared expert is not built by transformers' MiniMaxM2")
        r.ignore("shared_intermediate_size", NO_EFFECT + " (0: no shared expert)")
    for key in ("use_routing_bias", "qk_norm_type", "scoring_func"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (routing bias, norm kind, router activation)")
    if r.has("use_mtp") and r.bool("use_mtp"):
        per = r.int("mtp_transformer_layers", 1, minimum=1)
        if per != 1:
            raise r.fail("mtp_transformer_layers", "MTP modules of more than one transformer layer are not modelled")
        o["mtp_num_layers"] = r.int("num_mtp_modules", minimum=0)
    else:
        for key in ("num_mtp_modules", "mtp_transformer_layers"):
            r.ignore(key, "unused: use_mtp is false or absent")


TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts(), dense_key=None, extras=(_checkpoint,))
