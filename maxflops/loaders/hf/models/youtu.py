"""Youtu-LLM: YoutuConfig, modeling_youtu; MLA (DeepSeek-V3's attention: head_dim and qk_head_dim derived by the
class; a present head_dim is kept and is the rotary width, a present qk_head_dim is kept and never read), a gated
dense MLP of intermediate_size on every layer, global attention."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# YoutuConfig (head_dim = qk_rope_head_dim, qk_head_dim = qk_nope_head_dim + qk_rope_head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 32,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(keeps_rotary_head_dim=True),
              no_effect={"embedding_initializer_range": "initialisation only"})
