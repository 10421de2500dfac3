"""MiniMax-M2: a 62-layer MoE decoder with GQA in every layer (no lightning attention, unlike MiniMax-01).

- Attention: 48 query heads and 8 KV heads of 128 (6144 wide against a 3072 hidden state), per-layer q/k norms and
  rotary over 64 of each head's 128 channels (no FLOPs).
- MoE every layer: a sigmoid router (with a routing bias) over 256 SwiGLU experts of 1536, top-8; no shared expert.
- Three MTP modules of one transformer layer each (use_mtp, num_mtp_modules 3): counted in training as maxflops'
  MTP modules (an eh projection, a layer like the last decoder layer, their own logits; transformers builds none).
- Untied embedding and head over 200064 tokens.

Sources: MiniMax's config.json for MiniMaxAI/MiniMax-M2 (hidden_size 3072, intermediate_size 1536,
num_hidden_layers 62, num_attention_heads 48, num_key_value_heads 8, head_dim 128, rotary_dim 64,
num_local_experts 256, num_experts_per_tok 8, shared_intermediate_size 0, scoring_func sigmoid, use_mtp true,
num_mtp_modules 3, mtp_transformer_layers 1, vocab_size 200064, tie_word_embeddings false, attn_type_list all 1),
as two public transcriptions of the file give it; transformers 5.24's MiniMaxM2Config defaults are the same widths.
Published: 230B total parameters, 10B active (this config, without the MTP modules: 228.7B; 9.8B active without
the embeddings).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="minimax-m2",
        num_decoder_layers=62,  # num_hidden_layers
        emb_dim=3072,  # hidden_size
        vocab_size=200064,  # vocab_size
        num_query_heads=48,  # num_attention_heads
        num_kv_heads=8,  # num_key_value_heads
        head_dim=128,  # head_dim
        mlp_activations=("silu", "linear"),  # gated experts
        num_experts=256,  # num_local_experts
        num_experts_per_tok=8,  # num_experts_per_tok
        moe_mlp_dim=1536,  # intermediate_size (the expert width)
        mtp_num_layers=3,  # use_mtp, num_mtp_modules 3 (one transformer layer each)
    )
