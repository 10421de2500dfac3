"""Kimi K3 (multimodal; remote code, modeled on Megatron-Bridge's port at 067f987d: kimi_k3_bridge.py,
kimi_k3_layers.py): KimiK3Config, its text_config a kimi_linear config that Kimi K3's own code extends. Kimi-Linear's
layers (Kimi delta attention and MLA, DeepSeek-style MoE) with attention residuals (attn_res_block_size), a latent
MoE (routed_expert_hidden_size), an output gate per value channel on MLA (mla_use_output_gate), a full-rank KDA
output gate (linear_attn_config.use_full_rank_gate) and the SiTU activation; the vision tower (MoonViT) and its
projector are named, not priced."""

from __future__ import annotations

import dataclasses

from ...reader import NO_EFFECT, Reader
from ..house import HFType, read_decoder
from . import kimi_linear

_OWN = ("use_full_rank_gate",)  # keys of linear_attn_config Kimi K3's code reads beside KimiLinearConfig's


def _moe(r: Reader, d, o: dict, n: int):
    """Kimi-Linear's MoE (a sigmoid router over num_experts, top num_experts_per_token, num_shared_experts gated
    MLPs of moe_intermediate_size), its routed experts working in the latent routed_expert_hidden_size (D -> latent
    once per token, the experts latent -> moe_intermediate_size -> latent, latent -> D, the latent normed:
    elementwise). MoE on layer l >= first_k_dense_replace with l % moe_layer_freq == 0 (the rule Bridge's port
    reads)."""
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_token", d("num_experts_per_token"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("num_shared_experts", d("num_shared_experts"))
    if r.has("routed_expert_hidden_size"):
        o["moe_latent_size"] = r.int("routed_expert_hidden_size", minimum=1)
    r.ignore("latent_moe_use_norm", NO_EFFECT + ": an RMS norm of the combined latent (elementwise)")
    first = r.int("first_k_dense_replace", 1)
    freq = r.int("moe_layer_freq", 1, minimum=1)
    return [l >= first and l % freq == 0 for l in range(n)], "moe_layer_freq"


def _k3(r: Reader, d, o: dict, pattern: str) -> None:
    """Kimi K3's own keys: the KDA widths with its full-rank output gate, the MLA output gate, attention residuals."""
    lac = kimi_linear.kda(r, d, o, pattern, own=_OWN)
    if lac.get("use_full_rank_gate"):
        o["kda_full_rank_gate"] = True
    if r.bool("mla_use_output_gate", False):
        o["attention_output_gate"] = True
    block = r.int("attn_res_block_size", 0)
    if block:
        o["attn_res_block_size"] = block
    for key in ("activation_situ_beta", "activation_situ_linear_beta"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + ": SiTU's constants (elementwise)")


_TEXT = dataclasses.replace(kimi_linear.TYPE, ffn=_moe,
                            layers=lambda r, d, n: kimi_linear.layers(r, d, n, own=_OWN), extras=(_k3,))


def _read_text(r: Reader, d) -> dict:
    return read_decoder(r, _TEXT, d)


TYPE = HFType(wrapper="kimi_linear", text_types=("kimi_linear",), text_read=_read_text,
              no_effect={"ignore_index": "not counted: the loss's ignored label",
                         "image_placeholder": "not counted: the image placeholder token",
                         "media_placeholder_token_id": "not counted: the media placeholder token"})
