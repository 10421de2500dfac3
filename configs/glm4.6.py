"""GLM-4.6 (Z.ai; GLM-4.5's architecture, a longer context): a 92-layer MoE decoder with GQA.

- Attention: 96 query heads and 8 KV heads of 128 (12288 wide against a 5120 hidden state), q/k norms (no FLOPs),
  biases on q, k and v (no matmul), rotary over half of each head (no FLOPs).
- FFN: layers 0..2 a dense SwiGLU of 12288; layers 3..91 MoE: a sigmoid router over 160 SwiGLU experts of 1536,
  top-8, plus one shared expert of 1536.
- One MTP module (num_nextn_predict_layers 1); untied embedding and head over 151552 tokens.

Sources: the HF zai-org/GLM-4.6 config.json (hidden_size 5120, num_hidden_layers 92, num_attention_heads 96,
num_key_value_heads 8, head_dim 128, intermediate_size 12288, moe_intermediate_size 1536, n_routed_experts 160,
n_shared_experts 1, num_experts_per_tok 8, first_k_dense_replace 3, num_nextn_predict_layers 1, vocab_size 151552,
partial_rotary_factor 0.5, use_qk_norm true, attention_bias true), as public transcriptions of the file give it;
THUDM/slime's launch script for the same architecture (glm4.5-355B-A32B: 3 dense + 89 MoE layers, hidden 5120, ffn
12288, 96 heads, 8 query groups of 128, 160 experts of 1536, top-8, a shared expert of 1536, vocab 151552) agrees.
transformers 5.24 modeling_glm4_moe. Published: "355B total, 32B active". This config's weights count 352.80B
without its MTP module and 356.79B with it, and 32.08B active without the embeddings: the active figure matches,
the total is a round one (not explained from here: the checkpoint's index could not be read).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="glm4.6",
        num_decoder_layers=92,  # HF num_hidden_layers
        emb_dim=5120,  # HF hidden_size
        vocab_size=151552,  # HF vocab_size
        num_query_heads=96,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_activations=("silu", "linear"),  # HF hidden_act silu, gated
        mlp_dim=12288,  # HF intermediate_size (layers 0..2)
        first_num_dense_layers=3,  # HF first_k_dense_replace
        num_experts=160,  # HF n_routed_experts
        num_experts_per_tok=8,  # HF num_experts_per_tok
        moe_mlp_dim=1536,  # HF moe_intermediate_size
        shared_experts=1,  # HF n_shared_experts
        mtp_num_layers=1,  # HF num_nextn_predict_layers
    )
