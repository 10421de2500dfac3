"""LFM3 (Liquid AI): Lfm3Config, modeling_lfm3. LFM2's gated short convs ('conv') beside GQA attention, global
('full_attention') or sliding ('sliding_attention'), whose heads each carry a scalar sigmoid gate (g_proj D -> heads,
use_attention_gate); every layer then a SiLU-gated MLP of intermediate_size. Sandwich norms change no FLOPs."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType
from .lfm2 import short_conv, trunk

# Lfm3Config (layer_types: a post-init rule; conv_L_cache is no field: the model reads it from the file)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 128000, "hidden_size": 2048, "intermediate_size": 7680, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "sliding_window": 256,
    "use_attention_gate": True,
}


def _layers(r: Reader, n: int) -> tuple:
    """layer_types, else Lfm3Config's rule: global at i % 4 == 2, sliding at i % 4 == 0 (i > 0), conv elsewhere."""
    if parts.given(r, "layer_types"):
        return parts.layer_types(r, n, {"G", "L", "V"}), "layer_types"
    return ["G" if i % 4 == 2 else "L" if i % 4 == 0 and i > 0 else "V" for i in range(n)], "num_hidden_layers"


def _read(r: Reader, d) -> dict:
    o = trunk(r, d)
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)  # Lfm3MLP: no width adjustment
    letters, key = _layers(r, o["num_decoder_layers"])
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "V" in pattern and not r.has("conv_L_cache"):
        raise r.fail("conv_L_cache", "required: Lfm3ShortConv reads config.conv_L_cache, which Lfm3Config has no "
                                     "default for")
    short_conv(r, d, o, pattern)
    if "L" in pattern:
        window = r.int("sliding_window", d("sliding_window"), minimum=1, none_ok=True)
        if window is None:
            raise r.fail("sliding_window", "the layers include sliding-window attention, so sliding_window is needed")
        o["sliding_window_size"] = window
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    if set(pattern) & {"G", "L"}:
        if r.bool("use_attention_gate", d("use_attention_gate")):
            o["attention_head_gate"] = True
    else:
        r.ignore("use_attention_gate", "unused: no attention layers")
    for key in ("use_sandwich_norm", "attention_bias"):
        r.ignore(key, NO_EFFECT)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
