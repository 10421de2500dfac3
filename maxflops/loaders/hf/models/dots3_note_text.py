"""Dots 3 Note's text model: Dots3NoteTextConfig, modeling_dots3_note; MLA layers (q always through the q latent),
DSA-indexed ('indexed_attention': the DeepSeek-V3.2 indexer on the layer's q latent) or windowed
('sliding_attention', of their own widths: per_layer_config, absent the swa_* kwargs), each with a sigmoid gate per
head (g_proj D -> heads: attention_head_gate); DeepSeek-style MoE (mlp_layer_types, absent: dense before
first_k_dense_replace, then every moe_layer_freq-th) with one shared MLP of shared_experts_intermediate_size x
n_shared_experts."""

from __future__ import annotations

from typing import Any

from ....plan import width_rules
from ...reader import NO_EFFECT, Reader, fit_ffn, fit_pattern
from .. import parts
from ..house import HFType

# Dots3NoteTextConfig (sliding_window: the sliding_window_size kwarg, default 512, when null)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 13824, "moe_intermediate_size": 1536,
    "num_hidden_layers": 46, "num_attention_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
    "kv_lora_rank": 512, "q_lora_rank": 1024, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8, "hidden_act": "silu", "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64,
    "head_dim": 256, "shared_experts_intermediate_size": 1536,
}
# Dots3NoteTextConfig.__post_init__: the sliding layers' widths without per_layer_config (its swa_* kwargs)
SWA = {"num_attention_heads": 64, "num_key_value_heads": 64, "q_lora_rank": 1024, "kv_lora_rank": 1024, "head_dim": 256,
       "qk_nope_head_dim": 192, "v_head_dim": 128}
# a layer's own widths: the file's name -> the schema's (MLA reads no KV heads; head_dim only sizes the rope fraction)
_OWN = {"num_attention_heads": "num_query_heads", "q_lora_rank": "q_lora_rank", "kv_lora_rank": "kv_lora_rank",
        "qk_nope_head_dim": "qk_nope_head_dim", "qk_rope_head_dim": "qk_rope_head_dim", "v_head_dim": "v_head_dim"}
_INERT = {"num_key_value_heads", "head_dim"}


def _layer_types(r: Reader, n: int) -> list:
    """layer_types as the class normalizes them (use_dsa renames full and indexed; absent: indexed at i < 2 and
    i % 4 == 1, sliding elsewhere unless use_sliding_window is false)."""
    use_dsa = r.raw("use_dsa", None if r.has("per_layer_config") else True, none_ok=True)
    if parts.given(r, "layer_types"):
        types = r.list("layer_types", str)
        if len(types) != n:
            raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
        r.ignore("use_sliding_window", "superseded by layer_types")
    else:
        sliding = r.bool("use_sliding_window", True)
        full = "full_attention" if use_dsa is False else "indexed_attention"
        types = [full if not sliding or i < 2 or i % 4 == 1 else "sliding_attention" for i in range(n)]
    if use_dsa is not None:
        old, new = ("indexed_attention", "full_attention") if not use_dsa else ("full_attention", "indexed_attention")
        types = [new if t == old else t for t in types]
    if set(types) - {"indexed_attention", "full_attention", "sliding_attention"}:
        raise r.fail("layer_types", "each entry must be 'indexed_attention', 'full_attention' or 'sliding_attention'")
    if {"indexed_attention", "full_attention"} <= set(types):
        raise r.fail("layer_types", "indexed and plain full-attention MLA layers in one model are not modelled")
    return types


def _own_widths(r: Reader, types: list) -> dict:
    """{layer: {file key: value}} of the layers' own widths: per_layer_config as given, else the sliding layers'
    swa_* kwargs (with swa_qk_rope_head_dim derived as head_dim - qk_nope_head_dim)."""
    if parts.given(r, "per_layer_config"):
        out = {}
        for idx, entry in r.mapping("per_layer_config").items():
            if not str(idx).isdigit() or int(idx) >= len(types) or not isinstance(entry, dict):
                raise r.fail("per_layer_config", f"entry {idx!r}: {entry!r} is not a layer's overrides")
            unknown = set(entry) - set(_OWN) - _INERT
            if unknown:
                raise r.fail("per_layer_config", f"entry {idx!r}: {sorted(unknown)[0]!r} of a layer's own is not "
                                                 "modelled")
            out[int(idx)] = dict(entry)
        for key in [k for k in r.data if k.startswith("swa_")]:
            r.ignore(key, "superseded by per_layer_config")
        return out
    swa = {k: r.int(f"swa_{k}", v, minimum=1) if r.has(f"swa_{k}") else v for k, v in SWA.items()}
    swa["qk_rope_head_dim"] = r.int("swa_qk_rope_head_dim", swa["head_dim"] - swa["qk_nope_head_dim"], minimum=0) \
        if r.has("swa_qk_rope_head_dim") else swa["head_dim"] - swa["qk_nope_head_dim"]
    own = {i: dict(swa) for i, t in enumerate(types) if t == "sliding_attention"}
    r.defaults[r.name("per_layer_config")] = {str(i): dict(w) for i, w in own.items()}  # what the class derives
    return own


def _read(r: Reader, d) -> dict:
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    r.ignore("num_key_value_heads", NO_EFFECT + " (MLA: every head its own keys)")
    o["mlp_activations"] = (r.activation("hidden_act", d("hidden_act")), "linear")
    o["attention_type"] = "mla"
    q = r.int("q_lora_rank", d("q_lora_rank"), minimum=1, none_ok=True)
    if q is None:
        raise r.fail("q_lora_rank", "null: Dots3NoteTextConfig refuses it (its MLA queries need the q latent)")
    o["q_lora_rank"] = q
    for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        o[key] = r.int(key, d(key), minimum=1 if key in ("kv_lora_rank", "v_head_dim") else 0)
    r.ignore("head_dim", NO_EFFECT + " (it sizes the rope fraction; q is qk_nope_head_dim + qk_rope_head_dim wide)")
    o["attention_head_gate"] = True  # Dots3NoteTextAttention's g_proj, on every layer
    # layers
    types = _layer_types(r, n)
    letters = ["L" if t == "sliding_attention" else "G" for t in types]
    o["attention_layer_pattern"] = fit_pattern(letters, r, "layer_types" if r.has("layer_types") else
                                               "num_hidden_layers")
    if "L" in letters:
        window = r.int("sliding_window", None, minimum=1, none_ok=True)
        o["sliding_window_size"] = window if window is not None else r.int("sliding_window_size", 512, minimum=1)
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    if "indexed_attention" in types:
        o["use_sparse_indexer"] = True
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            o[key] = r.int(key, d(key), minimum=1)
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            r.ignore(key, "unused: no indexed layers")
    own = _own_widths(r, types)
    rules = []
    for file_key, key in _OWN.items():
        per = {i: w[file_key] for i, w in own.items() if file_key in w and w[file_key] != o[key]}
        for i, value in per.items():
            if type(value) is not int or value < (0 if key == "qk_rope_head_dim" else 1):
                raise r.fail("per_layer_config", f"layer {i}: {file_key}={value!r} is not a width")
        rules += width_rules(key, per)
    if rules:
        o["layer_widths"] = tuple(rules)
    # FFN
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    shared = r.int("n_shared_experts", d("n_shared_experts"), minimum=1)
    key = "moe_shared_expert_intermediate_size" if r.has("moe_shared_expert_intermediate_size") else \
        "shared_experts_intermediate_size"
    o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared * r.int(key, d("shared_experts_intermediate_size"),
                                                                        minimum=1)
    if parts.given(r, "mlp_layer_types"):
        is_moe = parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True})
        ffn_key = "mlp_layer_types"
        for k in ("first_k_dense_replace", "moe_layer_freq"):
            r.ignore(k, "superseded by mlp_layer_types")
    else:
        first = r.int("first_k_dense_replace", 1)
        freq = r.raw("moe_layer_freq", 1)
        is_moe = [i >= first and (bool(freq[i]) if isinstance(freq, (list, tuple)) else i % freq == 0)
                  for i in range(n)]
        ffn_key = "first_k_dense_replace"
    k, s = fit_ffn(is_moe, r, ffn_key)
    if k:
        o["first_num_dense_layers"] = k
    if s > 1:
        o["interleave_moe_layer_step"] = s
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    for key in ("routed_scaling_factor", "norm_topk_prob", "n_group", "topk_group"):
        r.ignore(key, NO_EFFECT + " (routing)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
