"""NVIDIA Llama-3.3-Nemotron-Super-49B-v1: Llama 3.3 70B cut down by a neural architecture search (DeciLM's
block_configs), 80 layers of their own shapes: 49 with GQA attention (64 query heads of 128, 8 KV heads) and 31 without
any (no_op), every layer with a SwiGLU FFN whose width is its own (ffn_mult: int(2 * ffn_mult * 8192 / 3) raised to a
multiple of 256, from 2816 to 28672). Untied embedding and head over 128256 tokens.

Sources: HF nvidia/Llama-3_3-Nemotron-Super-49B-v1 config.json (model_type nemotron-nas, hidden_size 8192,
num_hidden_layers 80, num_attention_heads 64, vocab_size 128256, hidden_act silu, tie_word_embeddings false;
block_configs: attention n_heads_in_group 8 or no_op, ffn_mult per layer) and its DeciLM modeling (the FFN width rule
above; KV heads = num_attention_heads // n_heads_in_group). Published: 49B in the name; this config's weights count
49.87B (tests/loaders/test_hf_published.py derives them block by block from the published file).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="llama3.3-nemotron-super-49b",
        num_decoder_layers=80,  # HF num_hidden_layers
        emb_dim=8192,  # HF hidden_size
        vocab_size=128256,  # HF vocab_size
        num_query_heads=64,  # HF num_attention_heads
        num_kv_heads=8,  # HF block_configs: n_heads_in_group 8 on every attention layer (64 // 8)
        # head_dim=128 (default): 8192 / 64
        mlp_dim=28672,  # the most common FFN width (ffn_mult 5.25: 48 + 1 layers)
        # '-': a layer whose attention is no_op (the FFN alone)
        attention_layer_pattern="GGGGGG--GGG-GGGGGGGGGGGGGGGGGGGGGGGGGGGGGG----------G------------------GGGGGGGGG",
        # every other layer's FFN width, by ffn_mult: 2.625 -> 14336, 3.28125 -> 17920, 1.3125 -> 7168, 1.0 -> 5632,
        # 0.5 -> 2816
        layer_widths=("mlp_dim@0+6-7+43-44+48=14336", "mlp_dim@11=17920",
                      "mlp_dim@42+45+47+49-51+53+56+60-61=7168", "mlp_dim@54-55+57-59+64-65+68=5632",
                      "mlp_dim@62-63+66-67+69-70=2816"),
    )
