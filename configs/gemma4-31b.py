"""Gemma 4 31B (dense): 60 layers, five sliding-window layers (1024 keys) to one global layer.

- Sliding layers: 32 query heads and 16 KV heads of 256.
- Global layers: 32 query heads of 512 and 4 KV heads of 512, one projection used as both keys and values
  (share_kv_projections); q/k/v norms and partial rotary (no FLOPs).
- A GeGLU MLP of 21504 in every layer; the embedding tied to the head over 262144 tokens (logit soft cap: no FLOPs).
- The vision tower is not counted here.

Sources: MaxText 0.2.5's configs/models/gemma4-31b.yml (base_num_decoder_layers 60, base_emb_dim 5376,
base_num_query_heads 32, base_num_kv_heads 16, base_mlp_dim 21504, head_dim 256, global_head_dim 512,
global_num_kv_heads 4, share_kv_projections true, sliding_window_size 1024, vocab_size 262144; a copy in
tests/fixtures/maxtext/). Published: 31B parameters (this config: 30.70B without the vision tower).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="gemma4-31b",
        num_decoder_layers=60,  # maxtext base_num_decoder_layers
        attention_layer_pattern="LLLLLG",  # maxtext gemma4 block: layer i global iff i % 6 == 5
        sliding_window_size=1024,  # maxtext sliding_window_size
        emb_dim=5376,  # maxtext base_emb_dim
        vocab_size=262144,  # maxtext vocab_size
        logits_via_embedding=True,  # maxtext logits_via_embedding: the head is the embedding table
        num_query_heads=32,  # maxtext base_num_query_heads
        num_kv_heads=16,  # maxtext base_num_kv_heads (sliding layers)
        head_dim=256,  # maxtext head_dim (sliding layers)
        global_head_dim=512,  # maxtext global_head_dim
        global_num_kv_heads=4,  # maxtext global_num_kv_heads
        share_kv_projections=True,  # maxtext share_kv_projections (global layers: K reused as V)
        mlp_activations=("gelu", "linear"),  # maxtext mlp_activations (GeGLU)
        mlp_dim=21504,  # maxtext base_mlp_dim
    )
