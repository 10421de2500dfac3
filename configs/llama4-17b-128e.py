"""Llama 4 Maverick 17B-128E (~400B total, 17B active), text decoder: 48 layers with GQA
(40 query heads, 8 KV heads, head_dim 128). Three of every four layers use RoPE with chunked
local attention (chunks of 8192 tokens); every 4th layer (3, 7, ..., 47) is a NoPE layer with
global causal attention, so the pattern is CCCG. FFNs alternate dense and MoE: even layers
(0, 2, ...) have a dense SwiGLU FFN of 16384; odd layers (1, 3, ...) are MoE with 128 routed
SwiGLU experts, top-1, each 8192 wide, plus 1 shared expert of the same width. Untied
embedding / LM head over a 202048-token vocabulary. The vision encoder is not counted.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/llama4-17b-128e.yml
(snapshot e591f30c: nope_layer_interval 4, interleave_moe_layer_step 2,
chunk_attn_window_size 8192, "chunk attention is used on all RoPE layers, otherwise, on NoPE
layers, use global attention") and src/maxtext/models/llama4.py (NoPE iff (l+1) % 4 == 0;
MoE iff (l+1) % 2 == 0; attention GLOBAL if NoPE else CHUNK); cross-checked with HF
meta-llama/Llama-4-Maverick-17B-128E config.json text_config (hidden_size 5120,
num_hidden_layers 48, num_attention_heads 40, num_key_value_heads 8, head_dim 128,
intermediate_size 8192 (experts and shared expert), intermediate_size_mlp 16384 (dense
layers), num_local_experts 128, num_experts_per_tok 1, interleave_moe_layer_step 2,
attention_chunk_size 8192, vocab_size 202048; default no_rope_layers marks every 4th layer
NoPE): no disagreement.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="llama4-17b-128e",
        num_decoder_layers=48,  # maxtext llama4-17b-128e.yml base_num_decoder_layers; HF num_hidden_layers 48
        emb_dim=5120,  # maxtext base_emb_dim; HF hidden_size 5120
        vocab_size=202048,  # maxtext vocab_size; HF vocab_size 202048
        num_query_heads=40,  # maxtext base_num_query_heads; HF num_attention_heads 40
        num_kv_heads=8,  # maxtext base_num_kv_heads; HF num_key_value_heads 8
        # head_dim=128 (default): maxtext base.yml head_dim 128; HF head_dim 128
        attention_layer_pattern="CCCG",  # maxtext nope_layer_interval 4 + llama4.py; HF no_rope_layers default
        chunk_attn_window_size=8192,  # maxtext chunk_attn_window_size; HF attention_chunk_size 8192
        mlp_dim=16384,  # maxtext base_mlp_dim; HF intermediate_size_mlp 16384 (dense layers)
        interleave_moe_layer_step=2,  # maxtext interleave_moe_layer_step; HF interleave_moe_layer_step 2
        num_experts=128,  # maxtext num_experts; HF num_local_experts 128
        # num_experts_per_tok=1 (default): maxtext num_experts_per_tok 1; HF num_experts_per_tok 1
        moe_mlp_dim=8192,  # maxtext base_moe_mlp_dim; HF intermediate_size 8192 (routed + shared expert)
        shared_experts=1,  # maxtext shared_experts 1; HF Llama4TextMoe has one shared_expert
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
    )
