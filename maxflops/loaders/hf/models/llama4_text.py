"""Llama 4's text model: Llama4TextConfig, modeling_llama4; chunked attention on the RoPE layers, global on the NoPE
ones; MoE with one shared expert every interleave_moe_layer_step-th layer, the dense layers intermediate_size_mlp
wide."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# Llama4TextConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "hidden_act": "silu", "num_experts_per_tok": 1, "num_local_experts": 16, "interleave_moe_layer_step": 1,
    "no_rope_layer_interval": 4, "attention_chunk_size": 8192,
}

def _ffn(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_local_experts", d("num_local_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    o["shared_experts"] = 1  # Llama4TextMoe always has one shared expert of intermediate_size
    step = r.int("interleave_moe_layer_step", d("interleave_moe_layer_step"), minimum=1)
    moe_layers = r.list("moe_layers", int, None, none_ok=True, record=False)
    if moe_layers is None:  # Llama4TextConfig: range(step - 1, n, step)
        return [(l + 1) % step == 0 for l in range(n)], "interleave_moe_layer_step"
    if any(not 0 <= l < n for l in moe_layers):
        raise r.fail("moe_layers", f"layer indices must be in 0..{n - 1}")
    r.ignore("interleave_moe_layer_step", "superseded by moe_layers")
    return [l in set(moe_layers) for l in range(n)], "moe_layers"


def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        for k in ("no_rope_layers", "no_rope_layer_interval"):
            r.ignore(k, NO_EFFECT + ": RoPE only (layer_types sets the attention kind)")
        return parts.layer_types(r, n, {"G", "C"}), "layer_types"
    # Llama4TextConfig: no_rope_layers[i] == 1 means layer i USES RoPE (-> chunked attention),
    # 0 means a NoPE layer (-> full attention); default: NoPE every no_rope_layer_interval-th layer.
    nope = r.list("no_rope_layers", int, None, none_ok=True, record=False)
    if nope:
        if len(nope) < n or any(v not in (0, 1) for v in nope):
            raise r.fail("no_rope_layers", f"expected at least {n} entries, each 0 (NoPE) or 1 (RoPE)")
        r.ignore("no_rope_layer_interval", "superseded by no_rope_layers")
        return ["C" if v else "G" for v in nope[:n]], "no_rope_layers"
    interval = r.int("no_rope_layer_interval", d("no_rope_layer_interval"), minimum=1)
    return ["C" if (i + 1) % interval else "G" for i in range(n)], "no_rope_layer_interval"


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, dense_key="intermediate_size_mlp", layers=_layers)
