"""Phi (Phi-1, Phi-1.5, Phi-2): PhiConfig, modeling_phi; GQA (q, k, v, dense with biases; partial RoPE), a plain MLP
(fc1, act, fc2), global attention."""

from __future__ import annotations

from ..house import HFType

# PhiConfig (num_key_value_heads: post-init rule; head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 51200, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
    "num_attention_heads": 32, "hidden_act": "gelu_new",
}

TYPE = HFType(
    defaults=DEFAULTS, gated=False,
    no_effect={"qk_layernorm": "LayerNorms on q and k (no matmul)",
               "resid_pdrop": "dropout (training regularisation, no matmul)",
               "embd_pdrop": "dropout (training regularisation, no matmul)"},
)
