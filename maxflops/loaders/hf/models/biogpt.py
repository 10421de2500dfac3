"""BioGPT: BioGptConfig, modeling_biogpt; multi-head attention of hidden_size // num_attention_heads per head (q, k,
v, out), a plain MLP (fc1, act, fc2) of intermediate_size, global attention; learned positions."""

from __future__ import annotations

from ....reader import Reader
from ..house import HFType

# BioGptConfig
DEFAULTS = {
    "vocab_size": 42384, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
    "intermediate_size": 4096, "hidden_act": "gelu", "layerdrop": 0.0,
}


def _mha(r: Reader, d, o: dict) -> None:
    """BioGptAttention: hidden_size // num_attention_heads per head, every head its own keys and values."""
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    o["num_kv_heads"] = o["num_query_heads"]
    r.ignore("head_dim", "not read by BioGptAttention (hidden_size // num_attention_heads per head)")
    r.ignore("num_key_value_heads", "not read: every head has its own keys and values (multi-head attention)")


def _layerdrop(r: Reader, d, o: dict, pattern: str) -> None:
    """LayerDrop: in training each decoder layer is skipped with probability layerdrop (0: none)."""
    if r.float("layerdrop", d("layerdrop")):
        raise r.fail("layerdrop", "LayerDrop skips each decoder layer at random in training (a step's FLOPs depend "
                                  "on the draw); maxflops counts every layer, so only 0 is read")


TYPE = HFType(
    defaults=DEFAULTS, gated=False, attention=_mha, extras=(_layerdrop,),
    no_effect={"hidden_dropout_prob": "dropout", "attention_probs_dropout_prob": "dropout",
               "activation_dropout": "dropout", "scale_embedding": "a scalar scale of the embeddings"},
)
