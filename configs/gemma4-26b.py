"""Gemma 4 26B-A4B (MoE): 30 layers, five sliding-window layers (1024 keys) to one global layer, every layer MoE.

- Sliding layers: 16 query heads and 8 KV heads of 256; global layers: 16 query heads of 512 and 2 KV heads of 512,
  one projection used as both keys and values (share_kv_projections); norms and partial rotary (no FLOPs).
- MoE: a router over 128 GeGLU experts of 704, top-8, plus one shared GeGLU expert as wide as the dense MLP (2112).
- The embedding tied to the head over 262144 tokens. The vision tower is not counted here.

Sources: MaxText 0.2.5's configs/models/gemma4-26b.yml (base_num_decoder_layers 30, base_emb_dim 2816,
base_num_query_heads 16, base_num_kv_heads 8, base_mlp_dim 2112, base_moe_mlp_dim 704, head_dim 256,
global_head_dim 512, global_num_kv_heads 2, share_kv_projections true, sliding_window_size 1024, num_experts 128,
num_experts_per_tok 8, shared_experts 1, vocab_size 262144; a copy in tests/fixtures/maxtext/; MaxText's gemma4 block
sizes the shared expert by mlp_dim). Published: 26B total parameters, 4B active (the model's name; this config: 25.23B and
3.82B active with the tied embedding, without the vision tower, whose share of the published figure is not
derived here).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="gemma4-26b",
        num_decoder_layers=30,  # maxtext base_num_decoder_layers
        attention_layer_pattern="LLLLLG",  # maxtext gemma4 block: layer i global iff i % 6 == 5
        sliding_window_size=1024,  # maxtext sliding_window_size
        emb_dim=2816,  # maxtext base_emb_dim
        vocab_size=262144,  # maxtext vocab_size
        logits_via_embedding=True,  # maxtext logits_via_embedding: the head is the embedding table
        num_query_heads=16,  # maxtext base_num_query_heads
        num_kv_heads=8,  # maxtext base_num_kv_heads (sliding layers)
        head_dim=256,  # maxtext head_dim (sliding layers)
        global_head_dim=512,  # maxtext global_head_dim
        global_num_kv_heads=2,  # maxtext global_num_kv_heads
        share_kv_projections=True,  # maxtext share_kv_projections (global layers: K reused as V)
        mlp_activations=("gelu", "linear"),  # maxtext mlp_activations (GeGLU)
        mlp_dim=2112,  # maxtext base_mlp_dim (the shared expert's width)
        num_experts=128,  # maxtext num_experts
        num_experts_per_tok=8,  # maxtext num_experts_per_tok
        moe_mlp_dim=704,  # maxtext base_moe_mlp_dim
        shared_experts=1,  # maxtext shared_experts
        shared_expert_mlp_dim=2112,  # maxtext gemma4 block: the shared expert is mlp_dim wide
    )
