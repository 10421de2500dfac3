"""DBRX: DbrxConfig, modeling_dbrx; every layer GQA attention (one fused Wqkv: d_model query heads' width, and
attn_config.kv_n_heads key and value heads of d_model / n_heads) and a MoE of ffn_config.moe_num_experts gated
experts (w1, v1, w2) of ffn_config.ffn_hidden_size, top moe_top_k, no shared expert. The two sub-configs are read
as DbrxAttentionConfig and DbrxFFNConfig read them (their defaults inline below)."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import keys
from ..house import HFType

# DbrxConfig
DEFAULTS = {"tie_word_embeddings": False, "d_model": 2048, "n_heads": 16, "n_layers": 24, "vocab_size": 32000}
# DbrxAttentionConfig / DbrxFFNConfig (their FLOPs keys)
_ATTN = {"kv_n_heads": 1}
_FFN = {"ffn_hidden_size": 3584, "moe_num_experts": 4, "moe_top_k": 1, "ffn_act_fn": {"name": "silu"}}
_SUB_NO_EFFECT = {"attn_pdrop", "clip_qkv", "rope_theta", "moe_jitter_eps", "moe_loss_weight",
                  "moe_normalize_expert_weights"}


def _classify(key: str) -> str:
    """The reason for a key of a sub-config no reader took."""
    return NO_EFFECT if key in _SUB_NO_EFFECT or key in ("hidden_size", "model_type") else keys.classify(key)


def _read(r: Reader, d) -> dict:
    o: dict[str, Any] = {"attention_layer_pattern": "G"}
    o["num_decoder_layers"] = r.int("n_layers", d("n_layers"), minimum=1)
    D = o["emb_dim"] = r.int("d_model", d("d_model"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("n_heads", d("n_heads"), minimum=1)
    if D % heads:
        raise r.fail("n_heads", f"does not divide d_model={D} (DbrxAttention's head width)", heads)
    o["head_dim"] = D // heads
    attn, ffn = r.sub("attn_config"), r.sub("ffn_config")
    o["num_kv_heads"] = attn.int("kv_n_heads", _ATTN["kv_n_heads"], minimum=1)
    if r.has("num_key_value_heads"):  # DbrxConfig's copy of kv_n_heads; a present one is kept, never read
        r.raw("num_key_value_heads", none_ok=True, record=False)
        r.ignore("num_key_value_heads", NO_EFFECT + ": DbrxConfig's copy of attn_config.kv_n_heads (DbrxAttention "
                                                    "reads the attn_config's)")
    act = ffn.raw("ffn_act_fn", _FFN["ffn_act_fn"], none_ok=True) or _FFN["ffn_act_fn"]
    if not isinstance(act, dict) or not isinstance(act.get("name"), str) or set(act) - {"name"}:
        raise ffn.fail("ffn_act_fn", "expected {'name': <activation>} (DbrxExpertGLU reads only the name)", act)
    o["mlp_activations"] = (Reader({"name": act["name"]}, r.path, ffn.name("ffn_act_fn.")).activation("name"),
                            "linear")
    o["num_experts"] = ffn.int("moe_num_experts", _FFN["moe_num_experts"], minimum=2)
    o["num_experts_per_tok"] = ffn.int("moe_top_k", _FFN["moe_top_k"], minimum=1)
    o["moe_mlp_dim"] = ffn.int("ffn_hidden_size", _FFN["ffn_hidden_size"], minimum=1)
    for sub in (attn, ffn):
        r.absorb(sub, _classify)
    for key in ("emb_pdrop", "resid_pdrop", "max_seq_len"):
        r.ignore(key, NO_EFFECT + " (dropout, positions)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
