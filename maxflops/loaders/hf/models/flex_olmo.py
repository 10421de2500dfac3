"""FlexOlmo: FlexOlmoConfig, modeling_flex_olmo; GQA (q/k norms), every layer a MoE of num_experts experts of
intermediate_size (top num_experts_per_tok, no shared expert), global attention."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# FlexOlmoConfig (num_key_value_heads: null, __post_init__ makes it num_attention_heads; head_dim: no field, the
# model uses hidden_size // num_attention_heads unless the file keeps one)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 100352, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_experts_per_tok": 5, "num_experts": 7,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts("num_experts", experts_alias="num_local_experts"),
              dense_key=None)
