"""InternLM3: InternLM3Config, run by modeling_llama (LlamaForCausalLM); GQA, a gated MLP, global attention."""

from __future__ import annotations

from ..house import HFType

# InternLM3Config (num_key_value_heads and head_dim: null -> post-init rules; the defaults are 2 and 128)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128512, "hidden_size": 4096, "intermediate_size": 10240, "num_hidden_layers": 48,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, no_effect={"bias": "InternLM3Config's alias of mlp_bias (a bias adds no matmul)"})
