"""Llama 2 7B: dense decoder-only transformer, 32 layers of full causal multi-head attention
(32 query heads, 32 KV heads, i.e. plain MHA, head_dim 128) followed by a SwiGLU FFN
(gate + up + down projections, hidden size 11008). Untied input embedding and output
projection over a 32000-token vocabulary. No MoE, no sliding/chunked attention.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/llama2-7b.yml
(snapshot e591f30c); cross-checked with HF meta-llama/Llama-2-7b-hf config.json
(hidden_size 4096, intermediate_size 11008, num_hidden_layers 32, num_attention_heads 32,
num_key_value_heads 32, vocab_size 32000): no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="llama2-7b",
        num_decoder_layers=32,  # maxtext llama2-7b.yml base_num_decoder_layers; HF num_hidden_layers 32
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size 4096
        num_query_heads=32,  # maxtext base_num_query_heads; HF num_attention_heads 32
        num_kv_heads=32,  # maxtext base_num_kv_heads; HF num_key_value_heads 32 (MHA)
        mlp_dim=11008,  # maxtext base_mlp_dim; HF intermediate_size 11008
        # head_dim=128 (default): maxtext head_dim 128; HF 4096 / 32 = 128
        # vocab_size=32000 (default): maxtext vocab_size 32000; HF vocab_size 32000
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
