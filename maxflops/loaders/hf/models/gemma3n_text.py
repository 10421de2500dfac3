"""Gemma 3n's text model: Gemma3nTextConfig, modeling_gemma3n; AltUp streams around every layer, LAuReL beside its
attention, per-layer embeddings, KV sharing in the last layers, a per-layer FFN width."""

from __future__ import annotations

from typing import Any

from ....plan import width_rules
from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# Gemma3nTextConfig (transformers 5.24)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size_per_layer_input": 262144,
    "vocab_size": 262400, "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 35,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 512, "hidden_size_per_layer_input": 256, "altup_active_idx": 0, "altup_num_inputs": 4,
    "num_kv_shared_layers": 15, "laurel_rank": 64,
}


def _read(r: Reader, d) -> dict:
    """Gemma3nTextConfig as modeling_gemma3n builds the model: layer_types (absent: every fifth layer full, the rest
    sliding); GQA of head_dim on every layer; intermediate_size one width or one per layer (the most common width
    is mlp_dim, the others layer_widths); AltUp with altup_num_inputs streams around every layer (altup_active_idx
    picks the active stream: which one changes no count, so it is only checked); LAuReL of laurel_rank beside the
    attention; per-layer embeddings of hidden_size_per_layer_input; the last num_kv_shared_layers layers reusing the
    keys and values of the last earlier layer of their type. activation_sparsity_pattern's Gaussian top-k is a mean,
    a standard deviation and a ReLU on the gate's output: the matmuls stay dense."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
    o["head_dim"] = r.int("head_dim", d("head_dim"), minimum=1)
    o["mlp_activations"] = (r.activation("hidden_activation", d("hidden_activation")), "linear")
    r.ignore("hidden_act", "not read by Gemma3nTextConfig (hidden_activation is what Gemma 3n uses)")
    # layers
    if parts.given(r, "layer_types"):
        letters = parts.layer_types(r, n, {"sliding_attention": "L", "full_attention": "G"})
        key = "layer_types"
    else:
        letters, key = ["G" if (i + 1) % 5 == 0 else "L" for i in range(n)], "num_hidden_layers"
    o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "L" in letters:
        o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    # FFN: one width, or one per layer
    widths = r.raw("intermediate_size", d("intermediate_size"))
    if isinstance(widths, list):
        if len(widths) != n or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths):
            raise r.fail("intermediate_size", f"expected one positive integer, or {n} of them (one per layer)")
        common = max(widths, key=widths.count)
        o["mlp_dim"] = common
        rules = width_rules("mlp_dim", {i: w for i, w in enumerate(widths) if w != common})
        if rules:
            o["layer_widths"] = rules
    else:
        o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    sparsity = r.raw("activation_sparsity_pattern", None, none_ok=True, record=False)
    if sparsity is not None and (not isinstance(sparsity, list) or len(sparsity) != n or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1 for x in sparsity)):
        raise r.fail("activation_sparsity_pattern", f"expected {n} numbers in [0, 1), one per layer")
    r.ignore("activation_sparsity_pattern", NO_EFFECT + " (a Gaussian top-k on the gate's output: a mean, a standard "
                                                        "deviation and a ReLU; the FFN's matmuls stay dense)")
    # AltUp, LAuReL
    streams = o["altup_num_inputs"] = r.int("altup_num_inputs", d("altup_num_inputs"), minimum=1)
    active = r.int("altup_active_idx", d("altup_active_idx"), minimum=0)
    if active >= streams:
        raise r.fail("altup_active_idx", f"must name one of the altup_num_inputs={streams} streams (0 to "
                                         f"{streams - 1})")
    r.ignore("altup_active_idx", NO_EFFECT + " (which stream is the active one)")
    o["laurel_rank"] = r.int("laurel_rank", d("laurel_rank"), minimum=1)
    # per-layer embeddings, KV sharing
    ple = r.int("hidden_size_per_layer_input", d("hidden_size_per_layer_input"), minimum=1)
    o["per_layer_input_dim"] = ple
    o["per_layer_vocab_size"] = r.int("vocab_size_per_layer_input", d("vocab_size_per_layer_input"), minimum=1)
    shared = r.int("num_kv_shared_layers", d("num_kv_shared_layers"), minimum=0)
    if shared:
        if shared >= n:
            raise r.fail("num_kv_shared_layers", f"leaves no layer of the {n} to compute keys and values")
        if set(letters[:n - shared]) != set(letters):  # Gemma3nTextConfig.kv_sharing_modes refuses it too
            raise r.fail("num_kv_shared_layers", "the shared layers include a layer type no earlier layer computes "
                                                 "keys and values for")
        o["num_kv_shared_layers"] = shared
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    no_effect={"altup_coef_clip": "a clamp of the AltUp coefficients' weights in training (elementwise)",
               "altup_correct_scale": "a learned elementwise scale on the corrected active stream",
               "final_logit_softcapping": "a tanh cap on the logits (elementwise)",
               "rope_local_base_freq": "the sliding layers' rotary base (no FLOPs)"},
)
