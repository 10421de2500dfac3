"""NVIDIA Nemotron-3-Ultra-550B-A55B: a 108-layer hybrid latent MoE of separate blocks, each a norm, one mixer and the
residual: Mamba-2 blocks (256 heads of 64 channels; state 128, 8 groups, conv 4), latent MoE blocks (a
sigmoid router over 512 relu^2 experts of 5120, top-22, working in a 2048-wide latent space behind one projection
D -> 2048 and one back per token, plus one shared relu^2 MLP of 10240 at D; no gates) and GQA attention blocks (64
query heads, 2 KV heads of 128), in the published order (M Mamba-2, E MoE, * attention). One MTP module: an attention
block then a latent MoE block. Untied embedding and head over 131072 tokens. Its SSM cache is float32.

Sources: HF nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16 config.json (layers_block_type as M E *, hidden_size 8192,
num_hidden_layers 108, the block pattern below, mamba_num_heads 256, mamba_head_dim 64, ssm_state_size 128,
n_groups 8, conv_kernel 4, chunk_size 128, num_attention_heads 64, num_key_value_heads 2, head_dim 128, n_routed_experts
512, num_experts_per_tok 22, moe_intermediate_size 5120, moe_latent_size 2048, moe_shared_expert_intermediate_size
10240, mlp_hidden_act relu2, num_nextn_predict_layers 1 with the MTP pattern *E, mamba_ssm_cache_dtype float32,
vocab_size 131072, tie_word_embeddings false); transformers 5.24 modeling_nemotron_h (NemotronHMoE: fc1_latent_proj,
the experts on the latent, fc2_latent_proj; one shared NemotronHMLP on the hidden state). Published: 550B total
parameters, in the name (this config: see tests/core/test_models.py).
"""
from maxflops.config import model_config
from maxflops.loaders.hf.ssm import hybrid_patterns

HYBRID = "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"  # the published block pattern (108 blocks)


def get_config():
    return model_config(
        model_name="nemotron-3-ultra-550b-a55b",
        num_decoder_layers=108,  # HF num_hidden_layers (= the pattern's length)
        **hybrid_patterns(HYBRID),  # M -> a Mamba-2 layer, no FFN; * -> attention, no FFN; E -> MoE, no mixer
        mtp_num_layers=1,  # HF num_nextn_predict_layers
        mtp_layer_pattern="G-", mtp_ffn_layer_pattern="-E",  # the MTP module: an attention block, then a MoE block
        emb_dim=8192,  # HF hidden_size
        vocab_size=131072,  # HF vocab_size
        num_query_heads=64,  # HF num_attention_heads
        num_kv_heads=2,  # HF num_key_value_heads
        head_dim=128,  # HF head_dim
        mlp_activations=("relu2",),  # HF mlp_hidden_act relu2: experts and the shared MLP are up, act, down
        num_experts=512,  # HF n_routed_experts
        num_experts_per_tok=22,  # HF num_experts_per_tok
        moe_mlp_dim=5120,  # HF moe_intermediate_size
        moe_latent_size=2048,  # HF moe_latent_size: the routed experts' space
        shared_experts=1,  # NemotronHMoE: one shared MLP
        shared_expert_mlp_dim=10240,  # HF moe_shared_expert_intermediate_size
        mamba_num_heads=256,  # HF mamba_num_heads
        mamba_head_dim=64,  # HF mamba_head_dim
        mamba_state_dim=128,  # HF ssm_state_size
        mamba_n_groups=8,  # HF n_groups
        mamba_conv_kernel=4,  # HF conv_kernel
        mamba_chunk_size=128,  # HF chunk_size
        state_bytes=4,  # HF mamba_ssm_cache_dtype float32
    )
