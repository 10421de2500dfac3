"""DeepSeek-V4-Flash (284B total, 13B active): 43 layers of DeepSeek-V4 compressed attention over 64 query heads
of width 512 sharing one key/value head (the key is also the value), q through a 1024-rank latent, the output
through 8 groups of rank 1024; every layer attends a sliding window of 128 tokens, and besides it
- layers 0-1: the window only;
- layers 2, 4, ..., 42 (21): compressed sparse attention (CSA), blocks of 4 tokens pooled from overlapping windows
  of 8, an indexer (64 heads x 128) scoring every visible block and each query attending its top 512;
- layers 3, 5, ..., 41 (20): heavily compressed attention (HCA), every visible block of 128 tokens.
Every layer is MoE (256 experts of 2048, top-6, sqrt-softplus routing; one shared expert of 2048; layers 0-2 route by
a token-id hash table but still run the router matmul). mHC: 4 residual streams mixed around attention and the
FFN, collapsed by a hyper head before the output norm. Vocabulary 129280, untied head.

Multi-token prediction: the checkpoint has one MTP module (compress ratio 0: a window-only layer, the 44th entry of
compress_ratios), but MaxText's YAML drops it (its deepseek4 block refuses mtp_num_layers > 0) and transformers does
not build it, so mtp_num_layers stays 0 here, as for deepseek3.2-671b. To count it: --config.mtp_num_layers=1
(its mixer is mtp_layer_pattern='L', set here).

Sources: MaxText 0.2.5 src/maxtext/configs/models/deepseek4-284b.yml; the DeepSeek-V4-Flash config.json
(hidden_size 4096, num_hidden_layers 43, num_attention_heads 64, num_key_value_heads 1, head_dim 512, q_lora_rank
1024, o_groups 8, o_lora_rank 1024, n_routed_experts 256, num_experts_per_tok 6, moe_intermediate_size 2048,
n_shared_experts 1, hc_mult 4, sliding_window 128, index_n_heads 64, index_head_dim 128, index_topk 512,
num_hash_layers 3, num_nextn_predict_layers 1, vocab_size 129280, compress_ratios [0, 0, 4, 128, ..., 4, 0]);
transformers 5.24 DeepseekV4Config (compress_rates: compressed_sparse_attention 4, heavily_compressed_attention 128).
The two agree on every value above.
"""
from maxflops.config import model_config
from maxflops.loaders.maxtext.model import maxtext_quirks

# compress_ratios of the checkpoint, decoder layers only: 0 -> 'L', 4 -> 'S', 128 -> 'H'
PATTERN = "LL" + "SH" * 20 + "S"


def get_config():
    return model_config(
        model_name="deepseek4-284b",
        num_decoder_layers=43,  # maxtext base_num_decoder_layers 43; HF num_hidden_layers 43
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size 4096
        vocab_size=129280,  # maxtext vocab_size; HF vocab_size 129280
        attention_type="compressed",  # maxtext attention_type 'compressed'; HF DeepseekV4Attention
        num_query_heads=64,  # maxtext base_num_query_heads; HF num_attention_heads 64
        num_kv_heads=1,  # maxtext base_num_kv_heads 1; HF num_key_value_heads 1
        head_dim=512,  # maxtext head_dim; HF head_dim 512 (qk_rope_head_dim 64 of it rotated)
        q_lora_rank=1024,  # maxtext q_lora_rank; HF q_lora_rank 1024
        o_groups=8,  # maxtext o_groups; HF o_groups 8
        o_lora_rank=1024,  # maxtext o_lora_rank; HF o_lora_rank 1024
        attention_layer_pattern=PATTERN,  # maxtext compress_ratios; HF compress_ratios[:43]
        mtp_layer_pattern="L",  # HF compress_ratios[43] = 0: the MTP module attends its window only
        sliding_window_size=128,  # maxtext sliding_window_size; HF sliding_window 128
        # csa_compress_ratio=4, hca_compress_ratio=128 (defaults): HF compress_rates; maxtext's ratios 4 and 128
        use_sparse_indexer=True,  # maxtext use_indexer true; HF index_* (the CSA layers' indexer)
        index_n_heads=64,  # maxtext indexer_n_heads; HF index_n_heads 64
        # index_head_dim=128 (default): maxtext indexer_head_dim 128; HF index_head_dim 128
        index_topk=512,  # maxtext indexer_topk; HF index_topk 512
        num_experts=256,  # maxtext num_experts; HF n_routed_experts 256
        num_experts_per_tok=6,  # maxtext num_experts_per_tok; HF num_experts_per_tok 6
        # moe_mlp_dim=2048 (default): maxtext base_moe_mlp_dim 2048; HF moe_intermediate_size 2048
        shared_experts=1,  # maxtext shared_experts 1; HF n_shared_experts 1
        mhc_expansion_rate=4,  # maxtext mhc_expansion_rate; HF hc_mult 4
        mhc_hyper_head=True,  # MaxText's DeepSeek4HyperHead; HF DeepseekV4HyperHead (hc_head_fn [4, 16384])
        # mlp_activations=["silu", "linear"] (default, SwiGLU): maxtext mlp_activations; HF hidden_act silu
        # first_num_hash_layers / num_hash_layers 3: no FLOPs effect (the router matmul still runs)
        # How MaxText's DeepSeek-V4 function differs from its own rules elsewhere (under convention='maxtext' only)
        convention_quirks=maxtext_quirks("deepseek4"),
    )
