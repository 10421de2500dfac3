"""Dory: DoryConfig, modeling_dory; n_input_layers, then n_recurrent_layers run n_recurrent_loops passes in a row
(the schema's layer_loops: shared weights, repeated work), then n_output_layers; GQA layers, sliding or full
(layer_types; absent: full every fourth), each with a sigmoid output gate of its own projection (gate_proj D ->
heads x head_dim: the FLOPs of attention_output_gate) and a SiLU-gated MLP. Released files list the attention and
MLP blocks apart ('mlp' entries in layer_types, every count doubled): DoryConfig halves them, and so does this."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_pattern
from ..house import HFType

# DoryConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 131072, "hidden_size": 2560, "intermediate_size": 7168, "num_hidden_layers": 36,
    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "hidden_act": "silu", "sliding_window": 1024,
    "n_input_layers": 8, "n_output_layers": 8, "n_recurrent_loops": 2, "recurrent_kv_cache_mode": "per_loop",
}


def _read(r: Reader, d) -> dict:
    o = {"emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1),
         "num_query_heads": r.int("num_attention_heads", d("num_attention_heads"), minimum=1),
         "num_kv_heads": r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1),
         "head_dim": r.int("head_dim", d("head_dim"), minimum=1),
         "mlp_dim": r.int("intermediate_size", d("intermediate_size"), minimum=1),
         "mlp_activations": (r.activation("hidden_act", d("hidden_act")), "linear"),
         "attention_output_gate": True}  # DoryAttention's gate_proj
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    first = r.int("n_input_layers", d("n_input_layers"), minimum=0)
    last = r.int("n_output_layers", d("n_output_layers"), minimum=0)
    middle = r.int("n_recurrent_layers", None, minimum=0, none_ok=True) if r.has("n_recurrent_layers") else None
    types = r.list("layer_types", str) if r.has("layer_types") and r.raw("layer_types", none_ok=True,
                                                                          record=False) is not None else None
    if types is not None and "mlp" in types:  # DoryConfig: (attention, mlp) block pairs -> one layer each
        types, n, first, last = types[::2], n // 2, first // 2, last // 2
        middle = None if middle is None else middle // 2
    if middle is None:
        middle = n - first - last
    if first + middle + last != n:
        raise r.fail("n_recurrent_layers", f"n_input_layers + n_recurrent_layers + n_output_layers must equal "
                                           f"num_hidden_layers={n} (DoryConfig refuses it)", middle)
    o["num_decoder_layers"] = n
    if types is None:
        types, key = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(n)], \
            "num_hidden_layers"
    else:
        key = "layer_types"
    kinds = {"full_attention": "G", "sliding_attention": "L"}
    if len(types) != n or set(types) - set(kinds):
        raise r.fail("layer_types", f"expected {n} layers, each 'full_attention' or 'sliding_attention' (with or "
                                    "without the released 'mlp' entries)")
    letters = [kinds[t] for t in types]
    o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "L" in letters:
        o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    loops = r.int("n_recurrent_loops", d("n_recurrent_loops"), minimum=1)
    if middle and loops > 1:
        o["layer_loops"] = (f"{first}-{first + middle - 1}*{loops}",)
    mode = r.raw("recurrent_kv_cache_mode", d("recurrent_kv_cache_mode"))
    if mode not in ("per_loop", "last_loop"):
        raise r.fail("recurrent_kv_cache_mode", "expected 'per_loop' or 'last_loop'")
    if mode == "last_loop" and middle and loops > 1:
        r.ignore("recurrent_kv_cache_mode", "FLOPs unchanged; decode bytes not modelled for 'last_loop': the earlier "
                                            "passes read the last pass's cache and write none, while decode_traffic "
                                            "gives every pass its own cache (its KV writes over-count)")
    r.ignore("ngpt_alpha_init", NO_EFFECT + " (the initialization of its scalars)")
    for key in ("attention_bias", "mlp_bias"):
        r.ignore(key, NO_EFFECT + " (biases add no matmul)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
