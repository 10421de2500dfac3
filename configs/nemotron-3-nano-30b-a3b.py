"""NVIDIA Nemotron-3-Nano-30B-A3B: a 52-layer hybrid MoE of separate blocks, each a norm, one mixer and the
residual: 23 Mamba-2 blocks (64 heads of 64 channels: 4096 wide, not 2 x hidden; state 128, 8 groups, conv 4), 23
MoE blocks (a sigmoid router over 128 relu^2 experts of 1856, top-6, plus one shared relu^2 MLP of 3712; no gates)
and 6 GQA attention blocks (32 query heads, 2 KV heads of 128), in the published order (M Mamba-2, E MoE,
* attention). Untied embedding and head over 131072 tokens. Its SSM cache is float32.

Sources: HF nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json (hidden_size 2688, num_hidden_layers 52,
hybrid_override_pattern below, mamba_num_heads 64, mamba_head_dim 64, ssm_state_size 128, n_groups 8,
conv_kernel 4, chunk_size 128, num_attention_heads 32, num_key_value_heads 2, head_dim 128, n_routed_experts 128,
num_experts_per_tok 6, moe_intermediate_size 1856, moe_shared_expert_intermediate_size 3712, n_shared_experts 1,
mlp_hidden_act relu2, mamba_ssm_cache_dtype float32, vocab_size 131072, tie_word_embeddings false; the file as
vendored by ai-dynamo/aiconfigurator and a JAX test, identical but for transformers_version); transformers 5.24
modeling_nemotron_h (NemotronHMoE: experts up, act, down; one shared NemotronHMLP). Published: 31.6B total
parameters, 3.2B active (this config: 31.58B).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"  # HF hybrid_override_pattern (52 blocks)


def get_config():
    return model_config(
        model_name="nemotron-3-nano-30b-a3b",
        num_decoder_layers=52,  # HF num_hidden_layers 52 (= len(hybrid_override_pattern))
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; E -> MoE, no mixer
        emb_dim=2688,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=32,  # HF num_attention_heads
        num_kv_heads=2,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_activations=("relu2",),  # HF mlp_hidden_act relu2: experts and the shared MLP are up, act, down
        num_experts=128,  # HF n_routed_experts
        num_experts_per_tok=6,  # HF num_experts_per_tok
        moe_mlp_dim=1856,  # HF moe_intermediate_size
        shared_experts=1,  # NemotronHMoE: one shared MLP
        shared_expert_mlp_dim=3712,  # HF moe_shared_expert_intermediate_size
        mamba_num_heads=64,  # HF mamba_num_heads
        mamba_head_dim=64,  # HF mamba_head_dim
        mamba_state_dim=128,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # HF chunk_size
        state_bytes=4,  # HF mamba_ssm_cache_dtype float32
    )
