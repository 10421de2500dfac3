"""MiniMax-M3 (the language model): 60 layers, GQA everywhere, the first three dense attention and a dense MLP, the
other 57 MiniMax sparse attention (a Lightning indexer picks whole key blocks) and a MoE.

- Attention: 64 query heads and 4 KV heads of 128 (8192 wide against a 6144 hidden state), per-head Gemma q/k
  norms and rotary over 64 of each head's 128 channels (no FLOPs).
- Sparse layers ('B'): keys in blocks of 128; each query attends 16 blocks, its own (up to itself) and 15 earlier
  ones its KV group's index head picks: at most 127 + 15 x 128 + 1 = 2,048 keys. The indexer: 4 index heads of 128
  (one per KV head) and one index key of 128 per token, q . k over every earlier key, max-pooled per block (the
  pick and the pooling are comparisons). Its output is block indices: no gradient reaches it in training.
- FFN: the first 3 layers a SwiGLU-OAI MLP of 12288 (gate and up clamped, elementwise); the other 57 a sigmoid
  router (with a routing bias) over 128 experts of 3072, top-4, and one shared expert of 3072.
- Seven MTP modules of one transformer layer each (num_mtp_modules 7): counted in training as maxflops' MTP modules
  (an eh projection, a layer like the last decoder layer, their own logits; transformers builds none). The file's
  num_nextn_predict_layers 1 is a serving key (the modules a speculative decoder loads).
- Untied embedding and head over 200064 tokens. The vision tower is not part of this config.

Sources: MiniMax's config.json for MiniMaxAI/MiniMax-M3 (hidden_size 6144, num_hidden_layers 60,
num_attention_heads 64, num_key_value_heads 4, head_dim 128, rotary_dim 64, dense_intermediate_size 12288,
intermediate_size 3072, shared_intermediate_size 3072, n_shared_experts 1, num_local_experts 128,
num_experts_per_tok 4, moe_layer_freq and sparse_attention_freq 0 on layers 0-2 and 1 after, sparse_block_size 128,
sparse_topk_blocks 16, sparse_local_block 1, sparse_init_block 0, sparse_index_dim 128, sparse_num_index_heads 4,
sparse_disable_index_value 1 on the sparse layers, num_mtp_modules 7, vocab_size 200064, tie_word_embeddings false),
as ai-dynamo/aiconfigurator transcribes it; the layers as transformers 5.24's modeling_minimax_m3_vl builds them.
The weights of this config count 426.17B with both embeddings (the indexers' 0.22B included, the MTP modules not);
no published figure could be checked from here.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="minimax-m3",
        num_decoder_layers=60,  # num_hidden_layers
        attention_layer_pattern="GGG" + "B" * 57,  # sparse_attention_freq: G dense attention, B sparse
        emb_dim=6144,  # hidden_size
        vocab_size=200064,  # vocab_size
        num_query_heads=64,  # num_attention_heads
        num_kv_heads=4,  # num_key_value_heads
        head_dim=128,  # head_dim
        index_n_heads=4,  # sparse_num_index_heads
        index_head_dim=128,  # sparse_index_dim
        msa_block_size=128,  # sparse_block_size
        msa_topk_blocks=16,  # sparse_topk_blocks
        msa_local_blocks=1,  # sparse_local_block
        mlp_activations=("silu", "linear"),  # swigluoai: gated, clamps elementwise
        mlp_dim=12288,  # dense_intermediate_size (layers 0-2)
        num_experts=128,  # num_local_experts
        num_experts_per_tok=4,  # num_experts_per_tok
        moe_mlp_dim=3072,  # intermediate_size (the expert width)
        shared_experts=1,  # n_shared_experts, shared_intermediate_size 3072
        first_num_dense_layers=3,  # moe_layer_freq: 0 on layers 0-2
        mtp_num_layers=7,  # num_mtp_modules 7 (one transformer layer each)
    )
