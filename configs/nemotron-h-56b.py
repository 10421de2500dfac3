"""Nemotron-H-56B (NVIDIA, base 8K): a 118-layer hybrid of separate blocks, each a norm, one mixer and the residual:
54 Mamba-2 blocks (256 heads of 64 channels, state 256, 8 groups, conv 4), 54 MLP blocks (relu^2, 32768 wide, no
gate) and 10 GQA attention blocks (64 query heads, 8 KV heads of 128), in the published order (M Mamba-2, - MLP,
* attention). Untied embedding and head over 131072 tokens.

Sources: HF nvidia/Nemotron-H-56B-Base-8K config.json (hidden_size 8192, num_hidden_layers 118,
hybrid_override_pattern below, mamba_num_heads 256, mamba_head_dim 64, ssm_state_size 256, n_groups 8,
conv_kernel 4, expand 2, chunk_size 128, num_attention_heads 64, num_key_value_heads 8, attention_head_dim 128,
intermediate_size 32768, mlp_hidden_act relu2, vocab_size 131072, tie_word_embeddings false; the file as vendored
by ai-dynamo/aiconfigurator's model_configs); transformers 5.24 modeling_nemotron_h. Published: 56B parameters
(this config: 56.3B).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = ("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*"
          "-M-M-M-M-M-")  # HF hybrid_override_pattern (118 blocks)


def get_config():
    return model_config(
        model_name="nemotron-h-56b",
        num_decoder_layers=118,  # HF num_hidden_layers 118 (= len(hybrid_override_pattern))
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; - -> an MLP, no mixer
        emb_dim=8192,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=64,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # HF attention_head_dim 128 (transformers' head_dim default 128)
        mlp_dim=32768,  # HF intermediate_size
        mlp_activations=("relu2",),  # HF mlp_hidden_act relu2: up, act, down (no gate)
        mamba_num_heads=256,  # HF mamba_num_heads
        mamba_head_dim=64,  # HF mamba_head_dim
        mamba_state_dim=256,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # HF chunk_size
    )
