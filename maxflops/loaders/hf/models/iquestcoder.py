"""IQuest-Coder: IQuestCoderConfig, run by modeling_llama (LlamaForCausalLM); GQA, a gated MLP, global attention."""

from __future__ import annotations

from ..house import HFType

# IQuestCoderConfig (num_key_value_heads and head_dim: null -> post-init rules; the defaults are 8 and 128)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 76800, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 80,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
