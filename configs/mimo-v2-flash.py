"""Xiaomi MiMo-V2-Flash: a 48-layer MoE decoder whose attention is mostly sliding-window.

- Attention: 64 query heads; queries and keys 192 wide, values 128 (``value_head_dim``); full attention on layer 0
  and every 6th layer with 4 KV heads, a sliding window of 128 keys plus the query (129) on the others with 8 KV
  heads and attention sinks (a softmax column: no FLOPs); rotary over a third of each head (no FLOPs).
- FFN: layer 0 a dense SwiGLU of 16384; layers 1..47 MoE: a sigmoid router over 256 SwiGLU experts of 2048, top-8,
  no shared expert.
- Untied embedding and head over 152576 tokens.

Sources: transformers 5.24's MiMoV2FlashConfig, whose defaults are XiaomiMiMo/MiMo-V2-Flash's (its docstring names
the checkpoint: vocab_size 152576, hidden_size 4096, intermediate_size 16384, num_hidden_layers 48,
num_attention_heads 64, num_key_value_heads 4, head_dim 192, v_head_dim 128, sliding_window 129, n_routed_experts
256, num_experts_per_tok 8, moe_intermediate_size 2048; the layer and MLP schedules of its __post_init__), and
modeling_mimo_v2_flash (twice the KV heads on sliding layers). The checkpoint's own config.json was not at hand; its
MTP modules, if it has them, are not counted. Published: 309B total parameters, 15B active (this config: 308.8B;
14.9B active without the embeddings).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="mimo-v2-flash",
        num_decoder_layers=48,  # num_hidden_layers
        attention_layer_pattern="GLLLLG" + "LLLLLG" * 7,  # full on layer 0 and each 6th (i + 1) % 6 == 0
        emb_dim=4096,  # hidden_size
        vocab_size=152576,  # vocab_size
        num_query_heads=64,  # num_attention_heads
        num_kv_heads=8,  # sliding layers: 2 x num_key_value_heads
        global_num_kv_heads=4,  # full layers: num_key_value_heads
        head_dim=192,  # head_dim (queries and keys)
        value_head_dim=128,  # v_head_dim
        sliding_window_size=129,  # sliding_window (128 previous keys and the query)
        mlp_activations=("silu", "linear"),  # SwiGLU
        mlp_dim=16384,  # intermediate_size (layer 0)
        first_num_dense_layers=1,  # mlp_layer_types: dense, then sparse
        num_experts=256,  # n_routed_experts
        num_experts_per_tok=8,  # num_experts_per_tok
        moe_mlp_dim=2048,  # moe_intermediate_size
    )
