"""GPT-Neo: GPTNeoConfig, modeling_gpt_neo; multi-head attention of hidden_size // num_heads per head (q, k, v, out),
a plain MLP of intermediate_size (null: 4 * hidden_size), global and local (window_size) layers as attention_layers
says."""

from __future__ import annotations

from ...reader import Reader, fit_pattern
from .. import parts
from ..house import HFType, read_decoder_4x

# GPTNeoConfig, under the readers' names (attribute_map); intermediate_size: null, the model uses 4 * hidden_size;
# attention_types: null, __post_init__ makes it [[["global", "local"], 12]]
DEFAULTS = {
    "max_position_embeddings": 2048,
    "tie_word_embeddings": True,
    "vocab_size": 50257, "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
    "activation_function": "gelu_new", "window_size": 256,
}

_KINDS = {"global": "G", "local": "L"}


def _layers(r: Reader, d, n: int):
    """The model reads attention_layers: the file's (PreTrainedConfig sets a saved one over the one __post_init__
    derives), else attention_types expanded ([[kinds, repeat], ...]; null: [[["global", "local"], 12]])."""
    if r.has("attention_layers"):
        r.ignore("attention_types", "superseded by attention_layers (the list the model reads)")
        layers, key = r.list("attention_layers", str), "attention_layers"
    else:
        types = r.raw("attention_types", [[["global", "local"], 12]], none_ok=True) or [[["global", "local"], 12]]
        try:
            layers = [kind for kinds, repeat in types for _ in range(repeat) for kind in kinds]
        except (TypeError, ValueError):
            raise r.fail("attention_types", "expected [[[kinds...], repeat], ...]") from None
        key = "attention_types"
        r.defaults[r.name("attention_layers")] = layers  # (what __post_init__ derives)
    if len(layers) != n or any(k not in _KINDS for k in layers):
        raise r.fail(key, f"expected {n} layers (num_layers), each 'global' or 'local'; got {layers!r}")
    return [_KINDS[k] for k in layers], key


def _read(r: Reader, d) -> dict:
    """The pipeline with every layer read as global, then attention_layers' pattern and the local layers' window
    (window_size: the pipeline's sliding_window is not this class's key)."""
    o = read_decoder_4x(r, d)
    letters, key = _layers(r, d, o["num_decoder_layers"])
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "L" in pattern:
        o["sliding_window_size"] = r.int("window_size", d("window_size"), minimum=1)
    else:
        r.ignore("window_size", "unused: no local layers")
    return o


TYPE = HFType(
    defaults=DEFAULTS, positions=("max_position_embeddings", 0),  # the learned position table
    read=_read, activation="activation_function", gated=False, attention=parts.mha,
    layers=lambda r, d, n: (["G"] * n, "num_hidden_layers"),  # (the local layers: _read)
    attribute_map={"num_attention_heads": "num_heads", "num_hidden_layers": "num_layers"},
    no_effect={"resid_dropout": "dropout", "embed_dropout": "dropout",
               "classifier_dropout": "dropout of the classification heads (not the causal LM)"})
