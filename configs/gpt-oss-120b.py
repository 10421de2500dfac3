"""gpt-oss-120b (117B total, ~5.1B active): 36-layer MoE decoder. Attention is GQA with 64
query heads and 8 KV heads of head_dim 64 (so the q/o projections are 2880 <-> 4096), with
biases and learned attention sinks; layers alternate sliding-window (128 tokens) and full
causal attention, starting with a sliding layer (HF layer_types[0] = "sliding_attention",
MaxText GPT_OSS_ATTENTION_PATTERN = (LOCAL_SLIDING, GLOBAL)). Every layer's FFN is MoE:
128 experts, top-4, each a gated (clamped SwiGLU-like, MaxText ["sigmoid", "linear"]) MLP
with hidden size 2880; no shared expert, no dense layers. Untied embedding / LM head over a
201088-token vocabulary.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/gpt-oss-120b.yml
(snapshot e591f30c) and src/maxtext/models/gpt_oss.py (attention pattern); cross-checked with
HF openai/gpt-oss-120b config.json (hidden_size 2880, intermediate_size 2880,
num_hidden_layers 36, num_attention_heads 64, num_key_value_heads 8, head_dim 64,
num_local_experts 128, num_experts_per_tok 4, sliding_window 128, vocab_size 201088,
layer_types alternating sliding_attention / full_attention): no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="gpt-oss-120b",
        num_decoder_layers=36,  # maxtext gpt-oss-120b.yml base_num_decoder_layers; HF num_hidden_layers 36
        emb_dim=2880,  # maxtext base_emb_dim; HF hidden_size 2880
        vocab_size=201088,  # maxtext vocab_size; HF vocab_size 201088
        num_query_heads=64,  # maxtext base_num_query_heads; HF num_attention_heads 64
        num_kv_heads=8,  # maxtext base_num_kv_heads; HF num_key_value_heads 8
        head_dim=64,  # maxtext head_dim; HF head_dim 64
        attention_layer_pattern="LG",  # maxtext gpt_oss.py (LOCAL_SLIDING, GLOBAL); HF layer_types[0] sliding
        sliding_window_size=128,  # maxtext sliding_window_size; HF sliding_window 128
        mlp_dim=2880,  # maxtext base_mlp_dim (unused: every layer is MoE); HF intermediate_size 2880
        mlp_activations=["sigmoid", "linear"],  # maxtext mlp_activations (gated, 2 up projections)
        num_experts=128,  # maxtext num_experts; HF num_local_experts 128
        num_experts_per_tok=4,  # maxtext num_experts_per_tok; HF num_experts_per_tok 4
        moe_mlp_dim=2880,  # maxtext base_moe_mlp_dim; HF intermediate_size 2880 (per expert)
    )
