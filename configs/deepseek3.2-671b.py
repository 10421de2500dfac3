"""DeepSeek-V3.2 (671B): DeepSeek-V3's architecture (61 layers, MLA with q LoRA 1536 /
kv LoRA 512 / 128 nope + 64 rope / 128 value dims over 128 heads, 3 dense SwiGLU layers of
18432 then 256-expert top-8 MoE with 2048-wide experts and 1 shared expert, vocab 129280)
plus DeepSeek Sparse Attention (DSA): in every layer a lightweight "lightning indexer"
(64 heads x 128 dims) scores all previous tokens, and each query attends (through MLA) only
to its top-2048 selected keys, which makes the core attention cost linear in context length
beyond 2048 tokens.
Multi-token prediction: HF config.json has num_nextn_predict_layers 1, but MaxText's yml sets
no mtp_num_layers (base.yml default 0), so mtp_num_layers stays 0 here to match MaxText.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/deepseek3.2-671b.yml
(snapshot e591f30c; "identical to deepseek3-671b config, except adding indexer config":
use_indexer true, indexer_n_heads 64, indexer_head_dim 128, indexer_topk 2048);
cross-checked with HF deepseek-ai/DeepSeek-V3.2-Exp config.json (same V3 dims, index_n_heads 64,
index_head_dim 128, index_topk 2048, num_nextn_predict_layers 1). Only disagreement: MTP.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="deepseek3.2-671b",
        num_decoder_layers=61,  # maxtext deepseek3.2-671b.yml base_num_decoder_layers; HF num_hidden_layers 61
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
        use_sparse_indexer=True,  # maxtext use_indexer true; HF index_* keys present (DSA)
        # Indexer dims equal the schema defaults (so not set):
        #   index_n_heads=64    maxtext indexer_n_heads 64; HF index_n_heads 64
        #   index_head_dim=128  maxtext indexer_head_dim 128; HF index_head_dim 128
        #   index_topk=2048     maxtext indexer_topk 2048; HF index_topk 2048
        #   index_topk_freq=1, index_skip_offset=0: every layer runs its own indexer (no IndexShare)
        # mtp_num_layers=0 (default): maxtext yml sets none (base.yml 0); HF num_nextn_predict_layers 1.
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
