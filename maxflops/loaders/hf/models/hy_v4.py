"""HY-V4: HYV4Config, modeling_hy_v4; DeepSeek-V3.2's MLA with the DSA indexer shared across layers (indexer_types:
'full' layers run their own, 'shared' ones reuse the last one's top-k; absent, layer 0 and every fourth from layer
1), a sigmoid gate per value channel on the attention output (gate_proj D -> heads x v_head_dim: MLA's
attention_output_gate) and attention sinks (elementwise); hyper-connections of hc_mult streams without DeepSeek-V4's
residual mixing (mhc_plain_residual: each branch projects the streams to its pre and post weights only) and a
hyper head; DeepSeek's MoE on the layers mlp_layer_types calls sparse (absent: all but the first)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# HYV4Config (head_dim: __post_init__ sets qk_rope_head_dim; num_key_value_heads: num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 120832, "hidden_size": 2816, "intermediate_size": 6912, "moe_intermediate_size": 768,
    "num_hidden_layers": 34, "num_attention_heads": 32, "hidden_act": "silu", "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256, "index_topk": 2048, "index_head_dim": 128,
    "index_n_heads": 16, "hc_mult": 4,
}


def _hyper(r: Reader, d, o: dict, pattern: str) -> None:
    """The output gate, the hyper-connections (hc_mult streams, no residual mixing) and their head."""
    o["attention_output_gate"] = True  # HYV4Attention's gate_proj
    G = r.int("hc_mult", d("hc_mult"), minimum=1)
    if G > 1:
        o.update(mhc_expansion_rate=G, mhc_hyper_head=True, mhc_plain_residual=True)
    for key in ("hc_magnitude", "learnable_sink_init"):
        r.ignore(key, NO_EFFECT + " (the post weights' scale, the sinks' initial value: elementwise)")
    if r.has("num_key_value_heads"):
        r.ignore("num_key_value_heads", "overwritten by HYV4Config: num_attention_heads (MLA has a key per head)")


TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(dsa=True, index_freq=4),
              ffn=parts.deepseek_moe(first_dense=1), extras=(_hyper,))
