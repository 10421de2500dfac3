"""Gemma 4's text model: Gemma4TextConfig, modeling_gemma4; sliding and global layers of their own widths, per-layer
embeddings, KV sharing, MoE beside the dense MLP."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# Gemma4TextConfig (global_head_dim 512 and num_global_key_value_heads: kwargs it pops)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size_per_layer_input": 262144,
    "vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 30,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 512, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 0,
    "attention_k_eq_v": False, "use_double_wide_mlp": False, "enable_moe_block": False,
}

def _read(r: Reader, d) -> dict:
    return read_gemma4(r, d, unified=False)


def read_gemma4(r: Reader, d, unified: bool) -> dict:
    """Gemma4TextConfig (``unified``: Gemma4UnifiedTextConfig, whose model has neither per-layer embeddings nor the
    MoE block, and reads none of their keys), as modeling_gemma4 builds the model: layer_types (absent: five sliding to one full; the last
    layer full whatever it says); the sliding layers' head_dim and num_key_value_heads; the full layers' own head
    width and KV heads (per_layer_config, as transformers saves them, else the kwargs global_head_dim, default 512,
    and num_global_key_value_heads, used with attention_k_eq_v), one projection as both K and V on the full layers
    with attention_k_eq_v; per-layer embeddings (hidden_size_per_layer_input: a gate and a projection per layer and
    one projection to every layer's input); the last num_kv_shared_layers layers reusing K and V (their MLP twice as
    wide with use_double_wide_mlp); with enable_moe_block, every layer's dense MLP beside top_k_experts of
    num_experts experts of moe_intermediate_size (the dense MLP as one shared expert)."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
    hd = o["head_dim"] = r.int("head_dim", d("head_dim"), minimum=1)
    act = r.activation("hidden_activation", d("hidden_activation"))
    r.ignore("hidden_act", "not read by Gemma4TextConfig (hidden_activation is what Gemma 4 uses)")
    o["mlp_activations"] = (act, "linear")
    bidirectional = r.raw("use_bidirectional_attention", None, none_ok=True, record=False)
    if bidirectional == "all":
        raise r.fail("use_bidirectional_attention", "bidirectional attention on every token is not modelled")
    r.ignore("use_bidirectional_attention", NO_EFFECT + " (none, or the image tokens only)")
    # Google's earlier revision of the file names it attention_use_bidirectional (None or 'vision')
    if r.raw("attention_use_bidirectional", None, none_ok=True, record=False) not in (None, "vision"):
        raise r.fail("attention_use_bidirectional", "bidirectional attention beyond the image tokens is not modelled")
    r.ignore("attention_use_bidirectional", NO_EFFECT + " (none, or the image tokens only: text counts the same)")
    if r.raw("routed_layer_pattern", None, none_ok=True, record=False) not in (None, []):
        raise r.fail("routed_layer_pattern", "a per-layer pattern of MoE layers is not read (Gemma4TextConfig has no "
                                             "such field; enable_moe_block puts MoE on every layer)")
    r.ignore("routed_layer_pattern", NO_EFFECT + " (null or empty: enable_moe_block decides, every layer)")
    # layers
    if parts.given(r, "layer_types"):
        types = r.list("layer_types", str)
        kinds = {"sliding_attention": "L", "full_attention": "G"}
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'sliding_attention' or 'full_attention'")
        letters = [kinds[t] for t in types]
        key = "layer_types"
        if r.has("sliding_window_pattern"):  # Google's revision writes it beside the list
            r.ignore("sliding_window_pattern", "superseded by layer_types")
    else:
        letters, key = ["L" if (i + 1) % 6 else "G" for i in range(n)], "num_hidden_layers"
    letters[-1] = "G"  # Gemma4TextConfig forces the last layer to full attention
    o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "L" in letters:
        o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    # the full layers' widths
    k_eq_v = r.bool("attention_k_eq_v", d("attention_k_eq_v"))
    if parts.given(r, "per_layer_config"):
        plc = r.mapping("per_layer_config")
        full = {i for i, letter in enumerate(letters) if letter == "G"}
        widths = set()
        for idx, entry in plc.items():
            if not str(idx).isdigit() or int(idx) not in full or not isinstance(entry, dict) or \
                    set(entry) - {"head_dim", "num_key_value_heads"}:
                raise r.fail("per_layer_config", f"entry {idx!r}: {entry!r} is not a full-attention layer's head_dim "
                                                 "/ num_key_value_heads")
            widths.add((entry.get("head_dim", hd), entry.get("num_key_value_heads", kv)))
        if len(widths) > 1 or (widths and len(plc) != len(full)):
            raise r.fail("per_layer_config", "the full-attention layers do not all share one head_dim and KV heads")
        g_hd, g_kv = widths.pop() if widths else (hd, kv)
        for k in ("global_head_dim", "num_global_key_value_heads"):
            r.ignore(k, "superseded by per_layer_config")
    else:
        g_hd = r.int("global_head_dim", 512, minimum=1)
        g_kv = r.int("num_global_key_value_heads", None, minimum=1, none_ok=True) if k_eq_v else None
        if not k_eq_v:
            r.ignore("num_global_key_value_heads", "not read without attention_k_eq_v (Gemma4TextConfig)")
        if not r.has("per_layer_config"):  # what Gemma4TextConfig derives and saves
            entry = {"head_dim": g_hd} | ({"num_key_value_heads": g_kv} if g_kv is not None else {})
            r.defaults[r.name("per_layer_config")] = {str(i): dict(entry) for i, x in enumerate(letters) if x == "G"}
        g_kv = kv if g_kv is None else g_kv
    if "G" in letters:
        if g_hd != hd:
            o["global_head_dim"] = g_hd
        if g_kv != kv:
            o["global_num_kv_heads"] = g_kv
        o["share_kv_projections"] = k_eq_v
    # per-layer embeddings, KV sharing
    if unified:
        for k in ("hidden_size_per_layer_input", "vocab_size_per_layer_input", "enable_moe_block", "num_experts",
                  "top_k_experts", "moe_intermediate_size", "expert_intermediate_size"):
            r.raw(k, None, none_ok=True, record=False)
            r.ignore(k, "not read: Gemma4UnifiedTextConfig has no such field and its model builds neither per-layer "
                        "embeddings nor an MoE block")
    ple = 0 if unified else r.int("hidden_size_per_layer_input", d("hidden_size_per_layer_input"), minimum=0,
                                  none_ok=True)
    if ple:
        o["per_layer_input_dim"] = ple
        o["per_layer_vocab_size"] = r.int("vocab_size_per_layer_input", d("vocab_size_per_layer_input"), minimum=1)
    elif not unified:
        r.ignore("vocab_size_per_layer_input", "unused: no per-layer embeddings")
    shared = r.int("num_kv_shared_layers", d("num_kv_shared_layers"), minimum=0)
    if shared:
        o["num_kv_shared_layers"] = shared
        o["double_wide_kv_shared_mlp"] = r.bool("use_double_wide_mlp", d("use_double_wide_mlp"))
    else:
        r.ignore("use_double_wide_mlp", "unused: no KV-shared layers")
    # FFN
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    if unified:
        return o
    if r.bool("enable_moe_block", d("enable_moe_block")):
        o["num_experts"] = r.int("num_experts", minimum=1)
        o["num_experts_per_tok"] = r.int("top_k_experts", minimum=1)
        # (expert_intermediate_size: its name in Google's earlier revision of the file)
        width = "expert_intermediate_size" if parts.given(r, "expert_intermediate_size") and \
            not r.has("moe_intermediate_size") else "moe_intermediate_size"
        o["moe_mlp_dim"] = r.int(width, minimum=1)
        if width == "moe_intermediate_size" and parts.given(r, "expert_intermediate_size"):
            if r.int("expert_intermediate_size") != o["moe_mlp_dim"]:
                raise r.fail("expert_intermediate_size", f"disagrees with moe_intermediate_size={o['moe_mlp_dim']}")
            r.ignore("expert_intermediate_size", "superseded: same as moe_intermediate_size")
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, o["mlp_dim"]  # the dense MLP beside the experts
    else:
        for k in ("num_experts", "top_k_experts", "moe_intermediate_size", "expert_intermediate_size"):
            r.raw(k, None, none_ok=True, record=False)
            r.ignore(k, "unused: enable_moe_block is false")
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    no_effect={"_sliding_window_pattern": "an attribute saved beside layer_types; Gemma4TextConfig derives absent "
                                          "layer_types with a pattern of 6, whatever it says",
               "stream_and_decode_in_f32": "a dtype switch of Google's revision of the file"},
)
