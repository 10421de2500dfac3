"""Mllama's text model (Llama 3.2 Vision): MllamaTextConfig, modeling_mllama; Llama layers with cross-attention
layers among them (at cross_attention_layers), which attend the image tokens: a stated input
(``cross_attention_tokens``; without it, text alone, the cross-attention layers are skipped whole, as transformers
skips them)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# MllamaTextConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
}
# MllamaTextConfig.__post_init__'s cross_attention_layers when null or absent (whatever num_hidden_layers)
_CROSS_LAYERS = [3, 8, 13, 18, 23, 28, 33, 38]


def _attention(r: Reader, d, o: dict) -> None:
    """MllamaTextSelfAttention and MllamaTextCrossAttention: hidden_size // num_attention_heads per head, GQA of
    num_key_value_heads; a head_dim key is never read."""
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    r.ignore("head_dim", "not read: the attention's head width is hidden_size // num_attention_heads")


def _layers(r: Reader, d, n: int):
    """cross_attention_layers (null: the class's default list): those layers cross-attend ('X'), the others are
    self-attention ('G'); each has the gated MLP."""
    if parts.given(r, "cross_attention_layers"):
        cross = r.list("cross_attention_layers", int)
    else:
        cross = _CROSS_LAYERS
        r.defaults[r.name("cross_attention_layers")] = f"{cross} (MllamaTextConfig.__post_init__)"
    bad = [i for i in cross if isinstance(i, bool) or not 0 <= i < n]
    if bad:
        raise r.fail("cross_attention_layers", f"layer {bad[0]!r} is not one of the {n} layers (num_hidden_layers)")
    return ["X" if i in cross else "G" for i in range(n)], "cross_attention_layers"


TYPE = HFType(defaults=DEFAULTS, attention=_attention, layers=_layers,
              no_effect={"dropout": "not counted: dropout"})
