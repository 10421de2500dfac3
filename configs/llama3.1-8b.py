"""Llama 3.1 8B: dense decoder-only transformer, 32 layers of full causal grouped-query
attention (32 query heads sharing 8 KV heads, head_dim 128) followed by a SwiGLU FFN
(hidden size 14336). Untied embedding / LM head over a 128256-token vocabulary.
No MoE, no sliding/chunked attention.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/llama3.1-8b.yml
(snapshot e591f30c); cross-checked with HF meta-llama/Llama-3.1-8B config.json
(hidden_size 4096, intermediate_size 14336, num_hidden_layers 32, num_attention_heads 32,
num_key_value_heads 8, vocab_size 128256): no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="llama3.1-8b",
        num_decoder_layers=32,  # maxtext llama3.1-8b.yml base_num_decoder_layers; HF num_hidden_layers 32
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size 4096
        vocab_size=128256,  # maxtext vocab_size; HF vocab_size 128256
        num_query_heads=32,  # maxtext base_num_query_heads; HF num_attention_heads 32
        num_kv_heads=8,  # maxtext base_num_kv_heads; HF num_key_value_heads 8 (GQA)
        mlp_dim=14336,  # maxtext base_mlp_dim; HF intermediate_size 14336
        # head_dim=128 (default): maxtext head_dim 128; HF 4096 / 32 = 128
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
