"""NVIDIA Nemotron-3-Super-120B-A12B: a 88-layer hybrid latent MoE of separate blocks, each a norm, one mixer and the
residual: Mamba-2 blocks (128 heads of 64 channels; state 128, 8 groups, conv 4), latent MoE blocks (a
sigmoid router over 512 relu^2 experts of 2688, top-22, working in a 1024-wide latent space behind one projection
D -> 1024 and one back per token, plus one shared relu^2 MLP of 5376 at D; no gates) and GQA attention blocks (32
query heads, 2 KV heads of 128), in the published order (M Mamba-2, E MoE, * attention). One MTP module: an attention
block then a latent MoE block. Untied embedding and head over 131072 tokens. Its SSM cache is float32.

Sources: HF nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8 config.json (hybrid_override_pattern, hidden_size 4096,
num_hidden_layers 88, the block pattern below, mamba_num_heads 128, mamba_head_dim 64, ssm_state_size 128,
n_groups 8, conv_kernel 4, chunk_size 128, num_attention_heads 32, num_key_value_heads 2, head_dim 128, n_routed_experts
512, num_experts_per_tok 22, moe_intermediate_size 2688, moe_latent_size 1024, moe_shared_expert_intermediate_size
5376, mlp_hidden_act relu2, num_nextn_predict_layers 1 with the MTP pattern *E, mamba_ssm_cache_dtype float32,
vocab_size 131072, tie_word_embeddings false); transformers 5.24 modeling_nemotron_h (NemotronHMoE: fc1_latent_proj,
the experts on the latent, fc2_latent_proj; one shared NemotronHMLP on the hidden state). Published: 120B total
parameters, in the name (this config: see tests/core/test_models.py).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME"  # the published block pattern (88 blocks)


def get_config():
    return model_config(
        model_name="nemotron-3-super-120b-a12b",
        num_decoder_layers=88,  # HF num_hidden_layers (= the pattern's length)
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; E -> MoE, no mixer
        mtp_num_layers=1,  # HF num_nextn_predict_layers
        mtp_layer_pattern="G-", mtp_ffn_layer_pattern="-E",  # the MTP module: an attention block, then a MoE block
        emb_dim=4096,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=32,  # HF num_attention_heads
        num_kv_heads=2,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_activations=("relu2",),  # HF mlp_hidden_act relu2: experts and the shared MLP are up, act, down
        num_experts=512,  # HF n_routed_experts
        num_experts_per_tok=22,  # HF num_experts_per_tok
        moe_mlp_dim=2688,  # HF moe_intermediate_size
        moe_latent_size=1024,  # HF moe_latent_size: the routed experts' space
        shared_experts=1,  # NemotronHMoE: one shared MLP
        shared_expert_mlp_dim=5376,  # HF moe_shared_expert_intermediate_size
        mamba_num_heads=128,  # HF mamba_num_heads
        mamba_head_dim=64,  # HF mamba_head_dim
        mamba_state_dim=128,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # HF chunk_size
        state_bytes=4,  # HF mamba_ssm_cache_dtype float32
    )
