"""MiniCPM3: MiniCPM3Config, modeling_minicpm3; MLA (q through q_lora_rank unless null, the kv latent of
kv_lora_rank), a gated dense MLP on every layer, global attention; muP-style scalings (no matmul)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# MiniCPM3Config (v_head_dim: null -> hidden_size // num_attention_heads; head_dim and qk_head_dim: always derived)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 73448, "hidden_size": 2560, "intermediate_size": 6400, "num_hidden_layers": 62,
    "num_attention_heads": 40, "num_key_value_heads": 40, "hidden_act": "silu", "kv_lora_rank": 256,
    "q_lora_rank": 768, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
}
_MLA = parts.mla()


def _attention(r: Reader, d, o: dict) -> None:
    derived = o["emb_dim"] // o["num_query_heads"]  # MiniCPM3Config.__post_init__: v_head_dim absent or null
    _MLA(r, lambda k: derived if k == "v_head_dim" else d(k), o)
    if o["num_kv_heads"] != o["num_query_heads"]:
        # the keys and values have num_attention_heads heads; eager attention repeats them num_key_value_groups times
        raise r.fail("num_key_value_heads", f"differs from num_attention_heads={o['num_query_heads']}: MiniCPM3's "
                                            "MLA keys have num_attention_heads heads and the attention repeats "
                                            "them heads // num_key_value_heads times, so transformers' model "
                                            "cannot run")


TYPE = HFType(
    defaults=DEFAULTS, attention=_attention,
    no_effect={"scale_emb": "scales the embeddings", "scale_depth": "scales the residual branches",
               "dim_model_base": "scales the hidden states before the output head (logits_scaling)"},
)
