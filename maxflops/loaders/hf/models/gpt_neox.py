"""GPT-NeoX (Pythia): GPTNeoXConfig, modeling_gpt_neox; multi-head attention of hidden_size // num_attention_heads
per head (one fused q/k/v matrix), a plain MLP (dense_h_to_4h, act, dense_4h_to_h), global attention; the parallel
residual changes no matmul."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# GPTNeoXConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50432, "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64,
    "intermediate_size": 24576, "hidden_act": "gelu",
}


NO_EFFECT_KEYS = {
    "is_decoder": "PreTrainedConfig's encoder-decoder flag; the model never reads it",
    "classifier_dropout": "dropout of the sequence-classification head (not the causal LM)",
}

TYPE = HFType(defaults=DEFAULTS, gated=False, attention=parts.mha,
              no_effect={**NO_EFFECT_KEYS,
                         "use_parallel_residual": "attention and MLP summed in parallel or in sequence: the same "
                                                  "matmuls",
                         "rotary_pct": "the rotary embedding's share of a head (no matmul)",
                         "rotary_emb_base": "the rotary embedding's base (no matmul)"})
