"""MiniMax-Text-01 (and MiniMax-M1, the same architecture): 80 layers, lightning attention and softmax attention 7:1
(softmax on every 8th layer), each followed by MoE.

- Lightning attention: 64 heads of 128 (the attention's heads and width; 8192 wide against a 6144 hidden state):
  one q/k/v projection, a sigmoid output gate, out_proj; a 128 x 128 state per head with a fixed per-head decay;
  MiniMax's kernel runs blocks of 256 (``lightning_impl='blocked'`` prices that form).
- Softmax attention: GQA, 64 query heads and 8 KV heads of 128, rotary over 64 of them (no FLOPs).
- MoE: a softmax router over 32 gated experts of 9216, top-2; no shared expert.
- Untied embedding and head over 200064 tokens.

Sources: MiniMax's config.json for MiniMax-Text-01 (hidden_size 6144, num_hidden_layers 80, num_attention_heads 64,
num_key_value_heads 8, head_dim 128, intermediate_size 9216, num_local_experts 32, num_experts_per_tok 2, vocab_size
200064, attn_type_list 1 on every 8th layer), as transcribed by public inference code and tests; the
transformers-format file (model_type "minimax", layer_types) is written from the same values in
tests/fixtures/hf/minimax-text-01.json. transformers 5.24 modeling_minimax (MiniMaxLightningAttention,
MiniMaxSparseMoeBlock). Published: 456B total parameters, 45.9B activated per token (this config: 456.09B, and
45.94B activated without the two embedding tables).
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="minimax-text-01",
        num_decoder_layers=80,  # num_hidden_layers
        attention_layer_pattern="NNNNNNNG",  # N lightning attention, G softmax attention every 8th layer
        emb_dim=6144,  # hidden_size
        vocab_size=200064,  # vocab_size
        num_query_heads=64,  # num_attention_heads (lightning attention's heads too)
        num_kv_heads=8,  # num_key_value_heads
        head_dim=128,  # head_dim (lightning attention's width too)
        lightning_block_size=256,  # block_size
        mlp_activations=("silu", "linear"),  # gated experts
        num_experts=32,  # num_local_experts
        num_experts_per_tok=2,  # num_experts_per_tok
        moe_mlp_dim=9216,  # intermediate_size (the expert width)
    )
