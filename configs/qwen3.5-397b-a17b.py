"""Qwen3.5-397B-A17B (its text model): 60 layers, the gated delta net and gated attention 3:1, MoE in every layer.

- Gated delta net: 16 key heads and 64 value heads of 128, a causal conv of 4 over q, k and v.
- Attention (every 4th layer): 32 query heads and 2 KV heads of 256, q projected with a per-head sigmoid output
  gate; q/k norms and partial rotary (no FLOPs).
- MoE: a router over 512 SwiGLU experts of 1024, top-10, plus one shared expert of 1024 behind a sigmoid gate.
- Untied embedding and head over 248320 tokens. The vision tower is not counted here.

Sources: MaxText 0.2.5's configs/models/qwen3.5-397b-a17b.yml (base_emb_dim 4096, base_num_decoder_layers 60,
base_num_query_heads 32, base_num_kv_heads 2, head_dim 256, vocab_size 248320, base_moe_mlp_dim 1024,
num_experts 512, shared_experts 1, num_experts_per_tok 10, inhomogeneous_layer_cycle_interval 4,
gdn_num_key_heads 16, gdn_num_value_heads 64, gdn_key_head_dim 128, gdn_value_head_dim 128, gdn_conv_kernel_dim 4;
a copy in tests/fixtures/maxtext/), which agrees with a public description of the model (60 layers, hidden 4096,
32 heads, 2 KV heads, 512 experts top-10 and a shared expert, 3 gated-delta-net layers to 1 attention layer);
transformers 5.24 modeling_qwen3_5_moe. MTP modules are not counted (MaxText's file has none). Published: 397B total
parameters, 17B active (this config: 396.35B without the vision tower, about 0.4B more with it; 17.35B active
with both embeddings).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="qwen3.5-397b-a17b",
        num_decoder_layers=60,  # maxtext base_num_decoder_layers
        attention_layer_pattern="DDDG",  # maxtext inhomogeneous_layer_cycle_interval 4
        emb_dim=4096,  # maxtext base_emb_dim
        vocab_size=248320,  # maxtext vocab_size
        num_query_heads=32,  # maxtext base_num_query_heads
        num_kv_heads=2,  # maxtext base_num_kv_heads
        head_dim=256,  # maxtext head_dim
        attention_output_gate=True,  # maxtext qwen3_5 decoder block: gated attention
        gdn_num_key_heads=16,  # maxtext gdn_num_key_heads
        gdn_num_value_heads=64,  # maxtext gdn_num_value_heads
        gdn_key_head_dim=128,  # maxtext gdn_key_head_dim
        gdn_value_head_dim=128,  # maxtext gdn_value_head_dim
        gdn_conv_kernel_dim=4,  # maxtext gdn_conv_kernel_dim
        mlp_dim=1024,  # maxtext base_mlp_dim (unused: every layer is MoE)
        num_experts=512,  # maxtext num_experts
        num_experts_per_tok=10,  # maxtext num_experts_per_tok
        moe_mlp_dim=1024,  # maxtext base_moe_mlp_dim
        shared_experts=1,  # maxtext shared_experts
        shared_expert_gate=True,  # maxtext qwen3_5 block: the shared expert's sigmoid gate
    )
