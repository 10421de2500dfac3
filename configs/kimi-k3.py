"""Moonshot AI Kimi K3 (the language model): 93 layers, Kimi delta attention and MLA interleaved 3:1 (MLA on the
1-based layers 4, 8, ..., 92 and 93), attention residuals over snapshots every 12 layers, the first layer a dense
gated MLP, the other 92 a latent MoE.

- Kimi delta attention: 96 heads of 128 (queries, keys and values alike), a causal depthwise conv of 4 over q, k and
  v, the forget gate low rank (7168 -> 128 -> 12288), the output gate full rank (use_full_rank_gate: 7168 -> 12288),
  beta per head; a 128 x 128 state per head.
- MLA: 96 heads, q LoRA 1536, kv_lora_rank 512, qk widths 128 + 64, values 128, no rotary embedding (mla_use_nope:
  elementwise, no FLOPs), an output gate per value channel (mla_use_output_gate: 7168 -> 12288).
- Attention residuals (attn_res_block_size 12): each layer's attention and MLP inputs, and the output, are a softmax
  over the snapshots and the running residual (scores D -> 1 per row).
- MoE: a sigmoid router over 896 experts, top-16, the experts working in a 3584-wide latent (routed_expert_hidden_size:
  7168 -> 3584 once per token, experts 3584 -> 3072 -> 3584 gated, 3584 -> 7168), plus two gated shared experts of 3072
  on the hidden state; SiTU activations (elementwise).
- Untied embedding and head over 163840 tokens. The MoonViT vision tower is not part of this config.

Sources: the moonshotai/Kimi-K3 config.json (text_config: hidden_size 7168, num_hidden_layers 93, num_attention_heads
96, intermediate_size 33792, linear_attn_config {full_attn_layers [4, 8, ..., 92, 93], kda_layers the other 69,
num_heads 96, head_dim 128, short_conv_kernel_size 4, use_full_rank_gate true}, q_lora_rank 1536, kv_lora_rank 512,
qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, mla_use_output_gate true, attn_res_block_size 12,
num_experts 896, num_experts_per_token 16, num_shared_experts 2, moe_intermediate_size 3072,
routed_expert_hidden_size 3584, first_k_dense_replace 1, moe_layer_freq 1, hidden_act situ, vocab_size 163840), as
ai-dynamo/aiconfigurator transcribes it; the layers as Megatron-Bridge's port builds them (067f987d: kimi_k3_bridge.py,
kimi_k3_layers.py). The weights of this config count 2,779.48B with both embeddings; no published figure could be
checked from here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="kimi-k3",
        num_decoder_layers=93,  # HF num_hidden_layers
        attention_layer_pattern="KKKG" * 23 + "G",  # K Kimi delta attention, G MLA (full_attn_layers)
        emb_dim=7168,  # HF hidden_size
        vocab_size=163840,  # HF vocab_size
        num_query_heads=96,  # HF num_attention_heads
        num_kv_heads=96,  # HF num_key_value_heads (MLA: every head has its own keys from the latent)
        attention_type="mla",
        q_lora_rank=1536,  # HF q_lora_rank
        kv_lora_rank=512,  # HF kv_lora_rank
        qk_nope_head_dim=128,  # HF qk_nope_head_dim
        qk_rope_head_dim=64,  # HF qk_rope_head_dim
        v_head_dim=128,  # HF v_head_dim
        attention_output_gate=True,  # HF mla_use_output_gate
        kda_num_heads=96,  # HF linear_attn_config.num_heads
        kda_head_dim=128,  # HF linear_attn_config.head_dim (the forget gate's rank too)
        kda_conv_kernel=4,  # HF linear_attn_config.short_conv_kernel_size
        kda_full_rank_gate=True,  # HF linear_attn_config.use_full_rank_gate
        attn_res_block_size=12,  # HF attn_res_block_size
        mlp_activations=("situ", "linear"),  # HF hidden_act situ, gated
        mlp_dim=33792,  # HF intermediate_size (the dense first layer)
        first_num_dense_layers=1,  # HF first_k_dense_replace
        num_experts=896,  # HF num_experts
        num_experts_per_tok=16,  # HF num_experts_per_token
        moe_mlp_dim=3072,  # HF moe_intermediate_size
        moe_latent_size=3584,  # HF routed_expert_hidden_size
        shared_experts=2,  # HF num_shared_experts
    )
