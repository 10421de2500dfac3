"""IBM Granite-4.0-H-Small (32B total, 9B active): 40 layers, each one mixer then a MoE FFN. The mixers are Mamba-2
(36 layers: 128 heads of 64 channels, 8192 wide = 2 x hidden; state 128, one group, conv 4) and, at layers 5, 15,
25 and 35, GQA attention without positional encoding (32 query heads, 8 KV heads of 128). Every FFN is 72 SwiGLU
experts of 768, top-10, plus one shared SwiGLU MLP of 1536. The embedding and the head are tied, over 100352 tokens.
Its multipliers (embedding, attention, residual, logits) scale elementwise.

Sources: HF ibm-granite/granite-4.0-h-small config.json (hidden_size 4096, num_hidden_layers 40, layer_types with
"attention" at 5, 15, 25, 35, num_attention_heads 32, num_key_value_heads 8, no head_dim (hidden / heads = 128),
intermediate_size 768, shared_intermediate_size 1536, num_local_experts 72, num_experts_per_tok 10, mamba_n_heads
128, mamba_d_head 64, mamba_n_groups 1, mamba_d_state 128, mamba_d_conv 4, mamba_chunk_size 256, vocab_size 100352,
tie_word_embeddings true, position_embedding_type nope; the file as tile-ai/TileFoundry vendors it, "the published
config, copied in"); the Granite 4.0 model card's architecture table (H Small: 4 attention / 36 Mamba-2 layers,
attention heads 32 / 8 of 128, Mamba-2 heads 128, experts 72 of 768, top-10, shared expert 1536); transformers
5.24 modeling_granitemoehybrid (every layer a mixer, then the MoE block and the shared MLP). Published: 32B total
parameters, 9B active (this config: 32.21B total; 8.80B active with the tied embedding).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="granite-4.0-h-small",
        num_decoder_layers=40,  # HF num_hidden_layers
        attention_layer_pattern="MMMMMGMMMM",  # HF layer_types: attention at 5, 15, 25, 35, Mamba-2 elsewhere
        emb_dim=4096,  # HF hidden_size
        vocab_size=100352,  # HF vocab_size (tied head: the logits matmul is the same)
        logits_via_embedding=True,  # HF tie_word_embeddings true
        num_query_heads=32,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # HF hidden_size / num_attention_heads (no head_dim key)
        num_experts=72,  # HF num_local_experts
        num_experts_per_tok=10,  # HF num_experts_per_tok
        moe_mlp_dim=768,  # HF intermediate_size (each expert, SwiGLU: hidden_act silu)
        shared_experts=1,  # GraniteMoeHybridMoE: one shared MLP beside the experts
        shared_expert_mlp_dim=1536,  # HF shared_intermediate_size
        mamba_num_heads=128,  # HF mamba_n_heads
        mamba_head_dim=64,  # HF mamba_d_head (128 x 64 = mamba_expand 2 x hidden)
        mamba_state_dim=128,  # HF mamba_d_state
        mamba_n_groups=1,  # HF mamba_n_groups
        mamba_conv_kernel=4,  # HF mamba_d_conv
        mamba_chunk_size=256,  # HF mamba_chunk_size
    )
