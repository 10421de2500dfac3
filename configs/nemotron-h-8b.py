"""Nemotron-H-8B (NVIDIA, base 8K): a 52-layer hybrid of separate blocks, each a norm, one mixer and the residual:
24 Mamba-2 blocks (128 heads of 64 channels, state 128, 8 groups, conv 4), 24 MLP blocks (relu^2, 21504 wide, no
gate) and 4 GQA attention blocks (32 query heads, 8 KV heads of 128), in the published order (M Mamba-2, - MLP,
* attention). Untied embedding and head over 131072 tokens.

Sources: HF nvidia/Nemotron-H-8B-Base-8K config.json as transcribed in Megatron-Bridge's NemotronH bridge test
(hidden_size 4096, num_hidden_layers 52, hybrid_override_pattern below, mamba_num_heads 128, mamba_head_dim 64,
ssm_state_size 128, n_groups 8, conv_kernel 4, expand 2, chunk_size 128, num_attention_heads 32,
num_key_value_heads 8, attention_head_dim 128, intermediate_size 21504, mlp_hidden_act relu2, vocab_size 131072,
tie_word_embeddings false); transformers 5.24 modeling_nemotron_h (NemotronHBlock; NemotronHMamba2Mixer, width
mamba_num_heads x mamba_head_dim; NemotronHMLP: up, act, down). Published: 8B parameters (this config: 8.10B).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"  # HF hybrid_override_pattern (52 blocks)


def get_config():
    return model_config(
        model_name="nemotron-h-8b",
        num_decoder_layers=52,  # HF num_hidden_layers 52 (= len(hybrid_override_pattern))
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; - -> an MLP, no mixer
        emb_dim=4096,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=32,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # HF attention_head_dim 128 (transformers' head_dim default 128)
        mlp_dim=21504,  # HF intermediate_size
        mlp_activations=("relu2",),  # HF mlp_hidden_act relu2: up, act, down (no gate)
        mamba_num_heads=128,  # HF mamba_num_heads
        mamba_head_dim=64,  # HF mamba_head_dim
        mamba_state_dim=128,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # HF chunk_size
    )
