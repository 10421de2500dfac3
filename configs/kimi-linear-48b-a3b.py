"""Moonshot AI Kimi-Linear-48B-A3B: 27 layers, Kimi delta attention and MLA interleaved 3:1 (MLA on the 1-based layers
4, 8, 12, 16, 20, 24 and 27), the first layer a dense gated MLP, the other 26 MoE.

- Kimi delta attention: 32 heads of 128 (queries, keys and values alike), a causal depthwise conv of 4 over q, k and
  v, the forget gate and the output gate each low rank (2304 -> 128 -> 4096), beta per head; a 128 x 128 state per
  head.
- MLA: 32 heads, no q LoRA (q projected from the hidden state), kv_lora_rank 512, qk widths 128 (no position) + 64
  (rotary), values 128. The checkpoint applies no rotary embedding in MLA (mla_use_nope): elementwise, no FLOPs.
- MoE: a sigmoid router over 256 gated experts of 1024, top-8, plus one gated shared expert of 1024.
- Untied embedding and head over 163840 tokens.

Sources: the HF moonshotai/Kimi-Linear-48B-A3B-Instruct config.json (hidden_size 2304, num_hidden_layers 27,
num_attention_heads 32, intermediate_size 9216, linear_attn_config {full_attn_layers [4, 8, 12, 16, 20, 24, 27],
kda_layers the other 20, num_heads 32, head_dim 128, short_conv_kernel_size 4}, kv_lora_rank 512, q_lora_rank null,
qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, num_experts 256, num_experts_per_token 8,
num_shared_experts 1, moe_intermediate_size 1024, first_k_dense_replace 1, vocab_size 163840, tie_word_embeddings
false), as two public transcriptions of the file give it (a Megatron-Bridge test and an inference engine's test;
they agree on every key read here); transformers 5.24 modeling_kimi_linear (KimiLinearDeltaAttention,
KimiLinearForgetGate, KimiLinearMoE). Published: "48B total, 3B activated" (the model's name). The weights of this
config count 49.12B (3.48B activated with both embeddings, 2.73B without them); the file could not be checked
against the hub from here, so the gap to the name is stated, not explained.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="kimi-linear-48b-a3b",
        num_decoder_layers=27,  # HF num_hidden_layers
        attention_layer_pattern="KKKGKKKGKKKGKKKGKKKGKKKGKKG",  # K Kimi delta attention, G MLA (full_attn_layers)
        emb_dim=2304,  # HF hidden_size
        vocab_size=163840,  # HF vocab_size
        num_query_heads=32,  # HF num_attention_heads
        num_kv_heads=32,  # HF num_key_value_heads (MLA: every head has its own keys from the latent)
        attention_type="mla",
        q_lora_rank=0,  # HF q_lora_rank null
        kv_lora_rank=512,  # HF kv_lora_rank
        qk_nope_head_dim=128,  # HF qk_nope_head_dim
        qk_rope_head_dim=64,  # HF qk_rope_head_dim
        v_head_dim=128,  # HF v_head_dim
        kda_num_heads=32,  # HF linear_attn_config.num_heads
        kda_head_dim=128,  # HF linear_attn_config.head_dim (the gates' rank too)
        kda_conv_kernel=4,  # HF linear_attn_config.short_conv_kernel_size
        mlp_activations=("silu", "linear"),  # HF hidden_act silu, gated
        mlp_dim=9216,  # HF intermediate_size (the dense first layer)
        first_num_dense_layers=1,  # HF first_k_dense_replace
        num_experts=256,  # HF num_experts
        num_experts_per_tok=8,  # HF num_experts_per_token
        moe_mlp_dim=1024,  # HF moe_intermediate_size
        shared_experts=1,  # HF num_shared_experts
    )
