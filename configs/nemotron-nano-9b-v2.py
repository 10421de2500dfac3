"""NVIDIA-Nemotron-Nano-9B-v2: a 56-layer hybrid of separate blocks, each a norm, one mixer and the residual: 27
Mamba-2 blocks (128 heads of 80 channels: 10240 wide, not 2 x hidden; state 128, 8 groups, conv 4), 25 MLP blocks
(relu^2, 15680 wide, no gate) and 4 GQA attention blocks (40 query heads, 8 KV heads of 128), in the published order
(M Mamba-2, - MLP, * attention). Untied embedding and head over 131072 tokens.

Sources: HF nvidia/NVIDIA-Nemotron-Nano-9B-v2 config.json at revision 6533e8de, its FLOPs keys as several
independent loaders transcribe them (hidden_size 4480, num_hidden_layers 56, hybrid_override_pattern below,
mamba_num_heads 128, mamba_head_dim 80, n_groups 8, ssm_state_size 128, conv_kernel 4, num_attention_heads 40,
num_key_value_heads 8, head_dim 128, intermediate_size 15680, vocab_size 131072); mlp_hidden_act relu2 and
chunk_size 128 are the family's (NemotronHConfig's defaults), not seen in this file. Published: 9B parameters
(this config: 8.88B).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"  # HF hybrid_override_pattern (56 blocks)


def get_config():
    return model_config(
        model_name="nemotron-nano-9b-v2",
        num_decoder_layers=56,  # HF num_hidden_layers 56 (= len(hybrid_override_pattern))
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; - -> an MLP, no mixer
        emb_dim=4480,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=40,  # HF num_attention_heads
        num_kv_heads=8,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_dim=15680,  # HF intermediate_size
        mlp_activations=("relu2",),  # mlp_hidden_act relu2 (NemotronHConfig's default): up, act, down (no gate)
        mamba_num_heads=128,  # HF mamba_num_heads
        mamba_head_dim=80,  # HF mamba_head_dim
        mamba_state_dim=128,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # chunk_size: NemotronHConfig's default
    )
