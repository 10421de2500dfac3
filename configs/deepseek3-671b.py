"""DeepSeek-V3 (671B total, ~37B active): 61-layer MoE decoder with Multi-head Latent
Attention (MLA). Queries go through a 1536-rank LoRA (down-projection, norm, up-projection)
to 128 heads of 128 nope + 64 rope dims; keys/values go through a 512-rank compressed latent
(plus a shared 64-dim rope key) and are expanded per head to 128 nope-key and 128 value dims.
Layers 0..2 have a dense SwiGLU FFN of 18432; layers 3..60 are MoE with 256 routed SwiGLU
experts (top-8, each 2048 wide, sigmoid router) plus 1 always-on shared expert of the same
width. Vocabulary 129280.
Multi-token prediction: HF config.json has num_nextn_predict_layers 1, but MaxText's yml sets
no mtp_num_layers (base.yml default 0), so mtp_num_layers stays 0 here to match MaxText.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/deepseek3-671b.yml
(snapshot e591f30c); cross-checked with HF deepseek-ai/DeepSeek-V3 config.json
(hidden_size 7168, num_hidden_layers 61, num_attention_heads 128, num_key_value_heads 128,
q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
intermediate_size 18432, moe_intermediate_size 2048, n_routed_experts 256,
num_experts_per_tok 8, n_shared_experts 1, first_k_dense_replace 3, vocab_size 129280,
num_nextn_predict_layers 1). Only disagreement: MTP (see above).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="deepseek3-671b",
        num_decoder_layers=61,  # maxtext deepseek3-671b.yml base_num_decoder_layers; HF num_hidden_layers 61
        emb_dim=7168,  # maxtext base_emb_dim; HF hidden_size 7168
        vocab_size=129280,  # maxtext vocab_size; HF vocab_size 129280
        attention_type="mla",  # maxtext attention_type "mla"
        num_query_heads=128,  # maxtext base_num_query_heads; HF num_attention_heads 128
        num_kv_heads=128,  # maxtext base_num_kv_heads; HF num_key_value_heads 128 (MLA: = query heads)
        q_lora_rank=1536,  # maxtext q_lora_rank; HF q_lora_rank 1536
        # Other MLA dims equal the schema defaults (so not set):
        #   kv_lora_rank=512     maxtext kv_lora_rank 512; HF 512
        #   qk_nope_head_dim=128 maxtext qk_nope_head_dim 128; HF 128
        #   qk_rope_head_dim=64  maxtext qk_rope_head_dim 64; HF 64
        #   v_head_dim=128       maxtext v_head_dim 128; HF 128
        mlp_dim=18432,  # maxtext base_mlp_dim; HF intermediate_size 18432 (dense layers 0..2)
        first_num_dense_layers=3,  # maxtext first_num_dense_layers 3; HF first_k_dense_replace 3
        num_experts=256,  # maxtext num_experts; HF n_routed_experts 256
        num_experts_per_tok=8,  # maxtext num_experts_per_tok; HF num_experts_per_tok 8
        # moe_mlp_dim=2048 (default): maxtext base_moe_mlp_dim 2048; HF moe_intermediate_size 2048
        shared_experts=1,  # maxtext shared_experts; HF n_shared_experts 1
        # mtp_num_layers=0 (default): maxtext yml sets none (base.yml 0); HF num_nextn_predict_layers 1.
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
