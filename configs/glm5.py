"""GLM-5 / GLM-5.2 (744B total, ~40B active; HF architecture GlmMoeDsaForCausalLM): a
DeepSeek-V3.2-style 78-layer MoE decoder. Attention is Multi-head Latent Attention over 64
heads: queries through a 2048-rank LoRA to 192 nope + 64 rope dims per head; keys/values
through a 512-rank compressed latent (plus a shared 64-dim rope key) expanded per head to 192
nope-key and 256 value dims. DeepSeek Sparse Attention (DSA): a lightning indexer (32 heads x
128 dims) selects the top-2048 keys per query. GLM-5.2 adds IndexShare: only some layers run
the indexer ("full" layers 0, 1, 2 and then every 4th layer, 6, 10, ..., 74: 21 of 78), the
other 57 reuse the previous top-k indices (index_topk_freq 4, index_skip_topk_offset 3).
Layers 0..2 have a dense SwiGLU FFN of 12288; layers 3..77 are MoE with 256 routed SwiGLU
experts (top-8, each 2048 wide, sigmoid router) plus 1 shared expert of the same width.
One MTP (next-token-prediction) layer (HF num_nextn_predict_layers 1). Vocabulary 154880.

Sources: no MaxText yml exists for GLM-5 (none under src/maxtext/configs/models/ in snapshot
e591f30c), so the numbers come from HF: zai-org/GLM-5 (values read from the config.json of
its FP8 release zai-org/GLM-5-FP8, same architecture: hidden_size 6144,
num_hidden_layers 78, num_attention_heads 64, num_key_value_heads 64, q_lora_rank 2048,
kv_lora_rank 512, qk_nope_head_dim 192, qk_rope_head_dim 64, v_head_dim 256,
intermediate_size 12288, moe_intermediate_size 2048, n_routed_experts 256,
num_experts_per_tok 8, n_shared_experts 1, first_k_dense_replace 3, index_n_heads 32,
index_head_dim 128, index_topk 2048, num_nextn_predict_layers 1, vocab_size 154880) and
zai-org/GLM-5.2 config.json for the IndexShare keys (index_topk_freq 4,
index_skip_topk_offset 3; the original GLM-5 / GLM-5.1 configs omit them, i.e. every layer
runs its indexer; the GLM-5.2 values were checked only against public transcriptions of that
config.json). The values here are the ones the project fixed for glm5 (= GLM-5.2 geometry).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="glm5",
        num_decoder_layers=78,  # HF zai-org/GLM-5 num_hidden_layers 78
        emb_dim=6144,  # HF hidden_size 6144
        vocab_size=154880,  # HF vocab_size 154880
        attention_type="mla",  # HF GlmMoeDsa = MLA + DSA (kv_lora_rank / q_lora_rank present)
        num_query_heads=64,  # HF num_attention_heads 64
        num_kv_heads=64,  # HF num_key_value_heads 64 (MLA: = query heads)
        q_lora_rank=2048,  # HF q_lora_rank 2048
        qk_nope_head_dim=192,  # HF qk_nope_head_dim 192
        v_head_dim=256,  # HF v_head_dim 256
        # kv_lora_rank=512 (default): HF kv_lora_rank 512
        # qk_rope_head_dim=64 (default): HF qk_rope_head_dim 64
        mlp_dim=12288,  # HF intermediate_size 12288 (dense layers 0..2)
        first_num_dense_layers=3,  # HF first_k_dense_replace 3
        num_experts=256,  # HF n_routed_experts 256
        num_experts_per_tok=8,  # HF num_experts_per_tok 8
        # moe_mlp_dim=2048 (default): HF moe_intermediate_size 2048
        shared_experts=1,  # HF n_shared_experts 1
        mtp_num_layers=1,  # HF num_nextn_predict_layers 1
        use_sparse_indexer=True,  # HF index_topk / index_n_heads present (DSA)
        index_n_heads=32,  # HF index_n_heads 32
        # index_head_dim=128 (default): HF index_head_dim 128
        # index_topk=2048 (default): HF index_topk 2048
        index_topk_freq=4,  # HF zai-org/GLM-5.2 index_topk_freq 4 (IndexShare; GLM-5/5.1: absent = 1)
        index_skip_offset=3,  # HF zai-org/GLM-5.2 index_skip_topk_offset 3 (layers 0..2 always full)
        # mlp_activations=["silu", "linear"] (default, SwiGLU): HF hidden_act silu
    )
