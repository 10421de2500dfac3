"""Falcon-H1-34B (TII): 72 layers, each attention and a Mamba-2 mixer side by side on the same normed input (their
outputs scaled and summed), then a gated MLP. Attention: 20 query heads, 4 KV heads of 128 (2560 wide, not the
5120 hidden). Mamba-2: mamba_d_ssm 4096 = 32 heads of 128 (not mamba_expand x hidden), state 256, 2 groups, conv 4.
MLP 21504 wide (SwiGLU). Untied embedding and head over 261120 tokens. Its multipliers (attention, SSM, MLP, key,
embedding, logits) scale elementwise.

Sources: HF tiiuae/Falcon-H1-34B-Instruct config.json (hidden_size 5120, num_hidden_layers 72,
num_attention_heads 20, num_key_value_heads 4, head_dim 128, intermediate_size 21504, mamba_d_ssm 4096,
mamba_n_heads 32, mamba_d_head 128, mamba_n_groups 2, mamba_d_state 256, mamba_d_conv 4, mamba_chunk_size 128,
vocab_size 261120, tie_word_embeddings false, attn_layer_indices null; the file as a public repository's fixtures
captured it from the hub); transformers 5.24 modeling_falcon_h1 (FalconH1DecoderLayer: mamba and self_attn on the
same input, summed; FalconH1MLP gated). Published: 34B parameters (this config: 33.6B).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="falcon-h1-34b",
        num_decoder_layers=72,  # HF num_hidden_layers
        attention_layer_pattern="G",  # attention in every layer (HF attn_layer_indices null)
        parallel_layer_pattern="M",  # beside it, Mamba-2 in every layer
        emb_dim=5120,  # HF hidden_size
        vocab_size=261120,  # HF vocab_size
        num_query_heads=20,  # HF num_attention_heads
        num_kv_heads=4,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_dim=21504,  # HF intermediate_size (gated: hidden_act silu)
        mamba_num_heads=32,  # HF mamba_n_heads
        mamba_head_dim=128,  # HF mamba_d_head (32 x 128 = mamba_d_ssm 4096)
        mamba_state_dim=256,  # HF mamba_d_state
        mamba_n_groups=2,  # HF mamba_n_groups
        mamba_conv_kernel=4,  # HF mamba_d_conv
        mamba_chunk_size=128,  # HF mamba_chunk_size
    )
