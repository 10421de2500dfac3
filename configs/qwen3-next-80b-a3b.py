"""Qwen3-Next-80B-A3B: 48-layer hybrid MoE decoder. Three of every four layers (0, 1, 2, 4,
...) use Gated DeltaNet linear attention (16 key heads and 32 value heads of 128 dims,
causal depthwise conv of kernel 4 over q/k/v, gated RMSNorm output); every 4th layer
(3, 7, ..., 47) is gated full attention: GQA with 16 query heads and 2 KV heads of head_dim
256, whose q projection also emits a per-head sigmoid output gate (so it is 2x wide).
Every layer's FFN is MoE: 512 routed SwiGLU experts, top-10, each 512 wide, plus 1 shared
expert of width 512 scaled by a sigmoid gate (emb_dim -> 1). Untied embedding / LM head over
a 151936-token vocabulary. Qwen3-Next was trained with multi-token prediction, but MaxText's
yml sets no mtp_num_layers (base.yml default 0), so none is counted here.

Sources: MaxText AI-Hypercomputer/maxtext src/maxtext/configs/models/qwen3-next-80b-a3b.yml
(snapshot e591f30c) and src/maxtext/models/qwen3.py (full attention iff
(l+1) % inhomogeneous_layer_cycle_interval == 0 with interval 4; shared_expert_gate
DenseGeneral emb_dim -> 1 with sigmoid; shared expert width = moe_mlp_dim; q projection
split into query and gate); cross-checked with HF Qwen/Qwen3-Next-80B-A3B-Instruct
config.json (hidden_size 2048, num_hidden_layers 48, num_attention_heads 16,
num_key_value_heads 2, head_dim 256, full_attention_interval 4, layer_types
[linear, linear, linear, full] x 12, linear_num_key_heads 16, linear_num_value_heads 32,
linear_key_head_dim 128, linear_value_head_dim 128, linear_conv_kernel_dim 4, num_experts 512,
num_experts_per_tok 10, moe_intermediate_size 512, shared_expert_intermediate_size 512,
decoder_sparse_step 1, mlp_only_layers [], vocab_size 151936). Disagreement (no FLOPs
effect): HF intermediate_size is 5120 but MaxText sets base_mlp_dim 512 ("to match
base_moe_mlp_dim to pass validation for fully MoE models"); no layer is dense, so mlp_dim is
unused. MaxText's 512 is used here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="qwen3-next-80b-a3b",
        num_decoder_layers=48,  # maxtext qwen3-next-80b-a3b.yml base_num_decoder_layers; HF num_hidden_layers 48
        emb_dim=2048,  # maxtext base_emb_dim; HF hidden_size 2048
        vocab_size=151936,  # maxtext vocab_size; HF vocab_size 151936
        num_query_heads=16,  # maxtext base_num_query_heads; HF num_attention_heads 16
        num_kv_heads=2,  # maxtext base_num_kv_heads; HF num_key_value_heads 2
        head_dim=256,  # maxtext head_dim; HF head_dim 256
        attention_output_gate=True,  # maxtext qwen3.py (query + gate from one q projection); HF gated attention
        attention_layer_pattern="DDDG",  # maxtext inhomogeneous_layer_cycle_interval 4; HF full_attention_interval 4
        # Gated DeltaNet dims, all equal to the schema defaults (so not set):
        #   gdn_num_key_heads=16    maxtext gdn_num_key_heads 16; HF linear_num_key_heads 16
        #   gdn_num_value_heads=32  maxtext gdn_num_value_heads 32; HF linear_num_value_heads 32
        #   gdn_key_head_dim=128    maxtext gdn_key_head_dim 128; HF linear_key_head_dim 128
        #   gdn_value_head_dim=128  maxtext gdn_value_head_dim 128; HF linear_value_head_dim 128
        #   gdn_conv_kernel_dim=4   maxtext gdn_conv_kernel_dim 4; HF linear_conv_kernel_dim 4
        mlp_dim=512,  # maxtext base_mlp_dim 512 (unused, all layers MoE; HF intermediate_size 5120)
        num_experts=512,  # maxtext num_experts; HF num_experts 512
        num_experts_per_tok=10,  # maxtext num_experts_per_tok; HF num_experts_per_tok 10
        moe_mlp_dim=512,  # maxtext base_moe_mlp_dim; HF moe_intermediate_size 512
        shared_experts=1,  # maxtext shared_experts 1; HF shared_expert_intermediate_size 512 (= moe dim)
        shared_expert_gate=True,  # maxtext qwen3.py shared_expert_gate (emb_dim -> 1, sigmoid)
        # mlp_activations=["silu", "linear"] (default, SwiGLU): HF hidden_act silu
    )
