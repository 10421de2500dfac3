"""HyperCLOVA X: HyperCLOVAXConfig, modeling_hyperclovax; Granite's multipliers on Llama (GQA, a gated MLP, global
attention), with optional post-norms (no matmul)."""

from __future__ import annotations

from ..house import HFType

# HyperCLOVAXConfig (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, no_effect={"use_post_norm": "RMSNorms after attention and the MLP (no matmul)"})
