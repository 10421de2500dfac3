"""DeepSeek-V2-Lite (16B total, ~2.4B active): 27-layer MoE decoder with Multi-head Latent
Attention (MLA). Queries are projected directly (no q LoRA: q_lora_rank 0) to 16 heads of
128 nope + 64 rope dims; keys/values go through a 512-rank compressed latent (plus a shared
64-dim rope key) and are expanded per head to 128 nope-key and 128 value dims. Layer 0 has a
dense SwiGLU FFN of 10944; layers 1..26 are MoE with 64 routed SwiGLU experts (top-6, each
1408 wide) plus 2 always-on shared experts of the same width. Vocabulary 102400.
No multi-token prediction (the V2-Lite HF config has no num_nextn_predict_layers).

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/deepseek2-16b.yml
(snapshot e591f30c); cross-checked with HF deepseek-ai/DeepSeek-V2-Lite config.json
(hidden_size 2048, num_hidden_layers 27, num_attention_heads 16, num_key_value_heads 16,
q_lora_rank null, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
intermediate_size 10944, moe_intermediate_size 1408, n_routed_experts 64,
num_experts_per_tok 6, n_shared_experts 2, first_k_dense_replace 1, vocab_size 102400):
no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="deepseek2-16b",
        num_decoder_layers=27,  # maxtext deepseek2-16b.yml base_num_decoder_layers; HF num_hidden_layers 27
        emb_dim=2048,  # maxtext base_emb_dim; HF hidden_size 2048
        vocab_size=102400,  # maxtext vocab_size; HF vocab_size 102400
        attention_type="mla",  # maxtext attention_type "mla"
        num_query_heads=16,  # maxtext base_num_query_heads; HF num_attention_heads 16
        num_kv_heads=16,  # maxtext base_num_kv_heads; HF num_key_value_heads 16 (MLA: = query heads)
        # MLA dims, all equal to the schema defaults (so not set):
        #   q_lora_rank=0        maxtext q_lora_rank 0; HF q_lora_rank null
        #   kv_lora_rank=512     maxtext kv_lora_rank 512; HF kv_lora_rank 512
        #   qk_nope_head_dim=128 maxtext qk_nope_head_dim 128; HF 128
        #   qk_rope_head_dim=64  maxtext qk_rope_head_dim 64; HF 64
        #   v_head_dim=128       maxtext v_head_dim 128; HF 128
        mlp_dim=10944,  # maxtext base_mlp_dim; HF intermediate_size 10944 (dense layer 0)
        first_num_dense_layers=1,  # maxtext first_num_dense_layers 1; HF first_k_dense_replace 1
        num_experts=64,  # maxtext num_experts; HF n_routed_experts 64
        num_experts_per_tok=6,  # maxtext num_experts_per_tok; HF num_experts_per_tok 6
        moe_mlp_dim=1408,  # maxtext base_moe_mlp_dim; HF moe_intermediate_size 1408
        shared_experts=2,  # maxtext shared_experts; HF n_shared_experts 2
        # mtp_num_layers=0 (default): maxtext yml sets no mtp_num_layers (base.yml 0); HF has none.
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
