"""Gemma 3 27B (text decoder): 62-layer dense decoder with GQA (32 query heads, 16 KV heads,
head_dim 128). Attention alternates 5 local sliding-window layers (window 1024) with 1 global
layer (pattern LLLLLG, layer 5, 11, ... are global). Each layer's FFN is a gated GeGLU
(gelu gate * linear up, then down) of hidden size 21504. Embedding is tied to the LM head
(logits_via_embedding) over a 262144-entry vocabulary. The SigLIP vision tower is not counted.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/gemma3-27b.yml (snapshot
e591f30c) and its layer pattern GEMMA3_ATTENTION_PATTERN = 5 x LOCAL_SLIDING + GLOBAL in
src/maxtext/models/gemma3.py; cross-checked with HF google/gemma-3-27b-it config.json
text_config (hidden_size 5376, intermediate_size 21504, num_hidden_layers 62,
num_attention_heads 32, num_key_value_heads 16, head_dim 128, sliding_window 1024,
sliding_window_pattern 6, hidden_activation gelu_pytorch_tanh). Disagreement: vocabulary.
MaxText uses vocab_size 262_144; HF text_config gives no vocab_size, so transformers'
Gemma3TextConfig default 262_208 applies. MaxText's 262144 is used here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="gemma3-27b",
        num_decoder_layers=62,  # maxtext gemma3-27b.yml base_num_decoder_layers; HF num_hidden_layers 62
        emb_dim=5376,  # maxtext base_emb_dim; HF hidden_size 5376
        vocab_size=262144,  # maxtext vocab_size 262_144 (HF Gemma3TextConfig default 262_208: disagreement)
        logits_via_embedding=True,  # maxtext logits_via_embedding: the head is the embedding table
        num_query_heads=32,  # maxtext base_num_query_heads; HF num_attention_heads 32
        num_kv_heads=16,  # maxtext base_num_kv_heads; HF num_key_value_heads 16
        # head_dim=128 (default): maxtext head_dim 128; HF head_dim 128
        mlp_dim=21504,  # maxtext base_mlp_dim; HF intermediate_size 21504
        mlp_activations=["gelu", "linear"],  # maxtext mlp_activations (gated GeGLU); HF gelu_pytorch_tanh
        attention_layer_pattern="LLLLLG",  # maxtext gemma3.py GEMMA3_ATTENTION_PATTERN; HF sliding_window_pattern 6
        sliding_window_size=1024,  # maxtext sliding_window_size; HF sliding_window 1024
    )
