"""Qwen3-235B-A22B: 94-layer MoE decoder. Attention is full causal GQA with 64 query heads and
4 KV heads of head_dim 128 (so q/o projections are 4096 <-> 8192), with QK-norm. Every
layer's FFN is MoE: 128 routed SwiGLU experts, top-8, each 1536 wide; no shared expert and no
dense layers. Untied embedding / LM head over a 151936-token vocabulary.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/qwen3-235b-a22b.yml
(snapshot e591f30c); cross-checked with HF Qwen/Qwen3-235B-A22B config.json (hidden_size 4096,
num_hidden_layers 94, num_attention_heads 64, num_key_value_heads 4, head_dim 128,
moe_intermediate_size 1536, num_experts 128, num_experts_per_tok 8, decoder_sparse_step 1,
mlp_only_layers [], vocab_size 151936). Disagreement (no FLOPs effect): HF intermediate_size
is 12288 but MaxText sets base_mlp_dim 1536 (= moe dim, needed by its validation for fully-MoE
models); no layer is dense, so mlp_dim is unused. MaxText's 1536 is used here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="qwen3-235b-a22b",
        num_decoder_layers=94,  # maxtext qwen3-235b-a22b.yml base_num_decoder_layers; HF num_hidden_layers 94
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size 4096
        vocab_size=151936,  # maxtext vocab_size; HF vocab_size 151936
        num_query_heads=64,  # maxtext base_num_query_heads; HF num_attention_heads 64
        # num_kv_heads=4 (default): maxtext base_num_kv_heads 4; HF num_key_value_heads 4
        # head_dim=128 (default): maxtext head_dim 128; HF head_dim 128
        mlp_dim=1536,  # maxtext base_mlp_dim 1536 (unused, all layers MoE; HF intermediate_size 12288)
        num_experts=128,  # maxtext num_experts; HF num_experts 128
        num_experts_per_tok=8,  # maxtext num_experts_per_tok; HF num_experts_per_tok 8
        moe_mlp_dim=1536,  # maxtext base_moe_mlp_dim; HF moe_intermediate_size 1536
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
