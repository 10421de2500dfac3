"""Mixtral 8x7B: sparse MoE decoder, 32 layers. Attention is full causal GQA (32 query heads,
8 KV heads, head_dim 128). Every layer's FFN is a top-2-of-8 mixture of SwiGLU experts, each
with hidden size 14336 (no shared expert, no dense layers), plus a small emb_dim x 8 router.
Untied embedding / LM head over a 32000-token vocabulary.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/mixtral-8x7b.yml
(snapshot e591f30c); cross-checked with HF mistralai/Mixtral-8x7B-v0.1 config.json
(hidden_size 4096, intermediate_size 14336, num_hidden_layers 32, num_attention_heads 32,
num_key_value_heads 8, num_local_experts 8, num_experts_per_tok 2, vocab_size 32000):
no disagreement. MaxText sets no sliding window for Mixtral, so none is set here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="mixtral-8x7b",
        num_decoder_layers=32,  # maxtext mixtral-8x7b.yml base_num_decoder_layers; HF num_hidden_layers 32
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size 4096
        num_query_heads=32,  # maxtext base_num_query_heads; HF num_attention_heads 32
        num_kv_heads=8,  # maxtext base_num_kv_heads; HF num_key_value_heads 8 (GQA)
        mlp_dim=14336,  # maxtext base_mlp_dim (unused: every layer is MoE); HF intermediate_size 14336
        num_experts=8,  # maxtext num_experts; HF num_local_experts 8
        num_experts_per_tok=2,  # maxtext num_experts_per_tok; HF num_experts_per_tok 2
        moe_mlp_dim=14336,  # maxtext base_moe_mlp_dim; HF intermediate_size 14336 (per expert)
        # head_dim=128 (default): maxtext head_dim 128; HF 4096 / 32 = 128
        # vocab_size=32000 (default): maxtext vocab_size 32000; HF vocab_size 32000
        # mlp_activations=["silu", "linear"] (default, SwiGLU experts): maxtext mlp_activations; HF hidden_act silu
    )
