"""EXAONE 3.0 / 3.5: ExaoneConfig, built as LlamaForCausalLM (modeling_llama); GQA, a gated MLP, global attention. The
class reads num_layers and activation_function (its attribute_map) as num_hidden_layers and hidden_act."""

from __future__ import annotations

from ..house import HFType

# ExaoneConfig (head_dim, null: __post_init__ makes it hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, attribute_map={"num_hidden_layers": "num_layers", "hidden_act": "activation_function"},
              no_effect={"embed_dropout": "dropout"})
