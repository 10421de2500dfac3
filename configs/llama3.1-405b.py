"""Llama 3.1 405B: dense decoder-only transformer, 126 layers of full causal grouped-query
attention (128 query heads sharing 8 KV heads, head_dim 128) followed by a SwiGLU FFN
(hidden size 53248). Untied embedding / LM head over a 128256-token vocabulary.
No MoE, no sliding/chunked attention.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/llama3.1-405b.yml
(snapshot e591f30c); cross-checked with HF meta-llama/Llama-3.1-405B config.json
(hidden_size 16384, intermediate_size 53248, num_hidden_layers 126, num_attention_heads 128,
num_key_value_heads 8, vocab_size 128256): no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="llama3.1-405b",
        num_decoder_layers=126,  # maxtext llama3.1-405b.yml base_num_decoder_layers; HF num_hidden_layers 126
        emb_dim=16384,  # maxtext base_emb_dim; HF hidden_size 16384
        vocab_size=128256,  # maxtext vocab_size; HF vocab_size 128256
        num_query_heads=128,  # maxtext base_num_query_heads; HF num_attention_heads 128
        num_kv_heads=8,  # maxtext base_num_kv_heads; HF num_key_value_heads 8 (GQA)
        mlp_dim=53248,  # maxtext base_mlp_dim; HF intermediate_size 53248
        # head_dim=128 (default): maxtext head_dim 128; HF 16384 / 128 = 128
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
