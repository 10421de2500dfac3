"""GLM-4.1V's text model: Glm4vTextConfig, modeling_glm4v (Glm4vTextModel); as GLM-4 (GQA with q, k, v biases, a
gated MLP with gate and up fused, norms after attention and the MLP, global attention), head_dim always
hidden_size // heads (the attention never reads head_dim); M-RoPE has no matmul."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Glm4vTextConfig (num_key_value_heads: a null one is num_attention_heads)
DEFAULTS = {
    "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 2, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.split_heads)
