"""Emu3's text model: Emu3TextConfig (model_type emu3_text_model, the config Emu3ForCausalLM saves), modeling_emu3;
as Llama."""

from __future__ import annotations

from ..house import HFType

# Emu3TextConfig (no head_dim field: the model's getattr rule, hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 184622, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
