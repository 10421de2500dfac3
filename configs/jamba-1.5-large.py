"""AI21 Jamba-1.5-Large (398B total, 94B active): 72 layers in 9 blocks of 8, each layer one mixer then an FFN. The
mixer is GQA attention at layers 4, 12, ..., 68 (every 8th from 4: 64 query heads, 8 KV heads of 128, no positional
encoding) and Mamba-1 elsewhere (inner width 2 x hidden = 16384, state 16, dt rank 512, conv 4; its RMS norms of dt,
B and C are elementwise). The FFN is MoE at the odd layers (16 SwiGLU experts of 24576, top-2) and a SwiGLU MLP of
24576 at the even ones. Untied embedding and head over 65536 tokens.

Sources: HF ai21labs/AI21-Jamba-1.5-Large config.json (hidden_size 8192, num_hidden_layers 72, attn_layer_period 8,
attn_layer_offset 4, expert_layer_period 2, expert_layer_offset 1, num_attention_heads 64, num_key_value_heads 8,
intermediate_size 24576, num_experts 16, num_experts_per_tok 2, mamba_d_state 16, mamba_d_conv 4, mamba_expand 2,
mamba_dt_rank 512, vocab_size 65536, max_position_embeddings 262144), as transcribed, with the file's address, by
abhibambhaniya/GenZ-LLM-Analyzer (GenZ/Models/Model_sets/misc.py); the Jamba-1.5 report (arXiv 2408.12570: 9 blocks
of 8 layers, attention to Mamba 1:7, MoE every other layer, 16 experts, top-2, 64 query / 8 KV heads); transformers
5.24 modeling_jamba and JambaConfig for the keys that transcription leaves out (tie_word_embeddings false,
mamba_conv_bias true, mamba_proj_bias false: none changes FLOPs). Published: 398B total parameters, 94B active. This
config's weights count 398.55B with the head untied (JambaConfig's default; 398.01B were it tied, which the
transcription cannot settle) and 94.15B active.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="jamba-1.5-large",
        num_decoder_layers=72,  # HF num_hidden_layers
        attention_layer_pattern="AAAAGAAA",  # attention iff layer % attn_layer_period 8 == attn_layer_offset 4
        ffn_layer_pattern="FE",  # MoE iff layer % expert_layer_period 2 == expert_layer_offset 1
        emb_dim=8192,  # HF hidden_size
        vocab_size=65536,  # HF vocab_size
        num_query_heads=64,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # hidden_size / num_attention_heads
        mlp_dim=24576,  # HF intermediate_size (the dense MLP, SwiGLU: hidden_act silu)
        num_experts=16,  # HF num_experts
        num_experts_per_tok=2,  # HF num_experts_per_tok
        moe_mlp_dim=24576,  # HF intermediate_size (each expert)
        mamba1_inner_dim=16384,  # HF mamba_expand 2 x hidden_size
        mamba1_state_dim=16,  # HF mamba_d_state
        mamba1_dt_rank=512,  # HF mamba_dt_rank
        mamba1_conv_kernel=4,  # HF mamba_d_conv
    )
