"""RWKV (RWKV-4): RwkvConfig, modeling_rwkv; every layer a time mix (key, value, receptance, the WKV recurrence,
output) and a channel mix (key D -> intermediate_size, squared ReLU, value back, gated by a receptance D -> D)."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# RwkvConfig (attention_hidden_size null: hidden_size; intermediate_size null: 4 x hidden_size)
DEFAULTS = {"tie_word_embeddings": False, "vocab_size": 50277, "hidden_size": 4096, "num_hidden_layers": 32}


def _read(r: Reader, d) -> dict:
    """RwkvConfig: num_hidden_layers layers of maxflops' 'W' (the time mix attention_hidden_size wide, null: hidden)
    each with its channel mix: the FFN (key and value, intermediate_size, null: 4 x hidden, squared ReLU, not gated)
    and its receptance gate (priced by the 'W' family)."""
    o: dict[str, Any] = {"attention_layer_pattern": "W", "mlp_activations": ("relu2",)}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    D = o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    width = r.int("attention_hidden_size", None, minimum=1, none_ok=True)
    if width is not None and width != D:
        o["rwkv_attention_dim"] = width
    inner = r.int("intermediate_size", None, minimum=1, none_ok=True)
    o["mlp_dim"] = 4 * D if inner is None else inner
    if inner is None:
        r.defaults[r.name("intermediate_size")] = f"{4 * D} (RwkvConfig: 4 x hidden_size)"
    for key in ("context_length", "rescale_every"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (the RNN mode's longest forward; an inference-time rescale of weights)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
