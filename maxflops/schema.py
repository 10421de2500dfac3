"""The config schema: every key, its default, its type and what it means (``SCHEMA``, the trunk's keys, each trunk
feature's and each mixer family's), and the checks of one value against its key (``coerce``, ``check_value``, ``closest``).

A maxflops config is a locked ``ml_collections.ConfigDict`` whose keys are exactly the keys of ``SCHEMA``. Key names
follow MaxText where MaxText has the idea (``emb_dim``, ``num_query_heads``, ``index_topk``...)."""

from __future__ import annotations

import difflib
import math
from typing import Any

from .families import FAMILIES
from .features import FEATURES
from .families.conv import IMPL_DOC as _CONV_IMPL_DOC
from .fields import Field, Ints, field_of  # noqa: F401 (Field: the schema's entries)
from .peers import CONVENTIONS, convention_help, knobs_from_choices

INT_MAX = 2 ** 62  # the largest size or length a config may give (int64 indices; keeps every per-token figure


#                   within a float's range)


# The FFN activation names: those MaxText resolves (its _convert_to_activation_function: 'linear' is the identity,
# any other name an attribute of flax.linen), i.e. flax 0.12.8's activations that keep their input's shape, so that
# the gated product runs (glu halves the last axis; logsumexp and one_hot change it), then the elementwise ones of
# transformers and Megatron that flax lacks (squared ReLU...). tests/core/test_input_paths.py checks the list against
# flax.linen. Every name keeps the FFN's matmuls: the check is that the name means something.
ACTIVATION_NAMES = ("linear", "celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
                    "leaky_relu", "log_sigmoid", "log_softmax", "normalize", "relu", "relu6", "selu", "sigmoid", "silu",
                    "soft_sign", "softmax", "softplus", "standardize", "swish", "tanh",
                    # elementwise activations of transformers (its ACT2CLS) and Megatron that flax lacks
                    "relu2", "mish", "laplace", "xielu", "prelu", "sqrtsoftplus",
                    # and Kimi K3's (its remote code and Megatron-Bridge's port)
                    "situ")


# A value of a tuple key that is not one of its choices, with what to say instead (the gated-FFN names of other
# projects, said back in MaxText's two entries)
CHOICE_HINTS = {"mlp_activations": {name: f"a gated FFN is two entries: {list(pair)!r}" for name, pair in (
    ("swiglu", ("silu", "linear")), ("geglu", ("gelu", "linear")), ("reglu", ("relu", "linear")))}}


# The trunk's keys here; each trunk feature's and each mixer family's own keys are its module's SCHEMA section
# (maxflops.features, maxflops.families), added below.
SCHEMA: dict[str, Field] = {
    # --- identity and trunk -------------------------------------------------------------------------------
    "model_name": field_of("default", str, "Name shown in reports."),
    "num_decoder_layers": field_of(2, int, "Decoder layers (MTP modules not included).", minimum=1),
    "emb_dim": field_of(512, int, "Model (hidden) width D.", minimum=1),
    "vocab_size": field_of(32000, int, "Vocabulary size V of the output head (logits cost 2*D*V per token).",
                     minimum=1),
    # --- attention projections ----------------------------------------------------------------------------
    "attention_output_dim": field_of(0, int, "Width the attention output projects to; 0 means emb_dim. When it differs, "
                                       "the FFN (router and experts too) runs at this width and the layer closes "
                                       "with an up-projection to emb_dim (MaxText's qwen3_custom_moe).", minimum=0),
    # --- feed-forward -------------------------------------------------------------------------------------
    "mlp_dim": field_of(2048, int, "Dense FFN hidden width.", minimum=1),
    "mlp_activations": field_of(("silu", "linear"), tuple, "FFN activations, MaxText style: two entries mean a "
                                                     "gated FFN (3 matrices), one entry a plain FFN (2). Each is a "
                                                     "name MaxText resolves: 'linear' or an activation of "
                                                     "flax.linen that keeps its input's shape.",
                          choices=ACTIVATION_NAMES),
    "num_experts": field_of(1, int, "Routed experts E; 1 means no MoE layers.", minimum=1),
    "num_experts_per_tok": field_of(1, int, "Experts each token is routed to (top-k).", minimum=1),
    "moe_mlp_dim": field_of(2048, int, "Hidden width of each routed expert (and of each shared one unless "
                                 "shared_expert_mlp_dim says otherwise).", minimum=1),
    "head_dense": field_of(False, bool, "A D -> D projection (with its activation and norm) before the output head "
                                        "(ModernBERT's prediction head): part of the head, priced in 'logits'."),
    "logits_via_embedding": field_of(False, bool, "The output head is the token embedding table (tied "
                                                  "embeddings: MaxText's logits_via_embedding, a Hugging Face file's "
                                                  "tie_word_embeddings): counted once in the parameters; no FLOPs "
                                                  "effect."),
    "position_table_rows": field_of(0, int, "Rows of a learned absolute position table (GPT-2's n_positions, OPT's "
                                            "max_position_embeddings + 2, MaxText's trainable_position_size): a "
                                            "lookup, no FLOPs; counted in the parameters. 0: none.", minimum=0),
    "head_input_dim": field_of(0, int, "The output head's input width; 0: emb_dim (Reformer's head reads its two "
                                       "reversible streams side by side: 2 x emb_dim).", minimum=0),
    "moe_latent_size": field_of(0, int, "Latent MoE (Nemotron-3 Super and Ultra): the routed experts work in a space "
                                   "of this width, behind one projection D -> latent and one latent -> D per token "
                                   "(the router and the shared experts stay at D); 0: none.", minimum=0),
    "shared_experts": field_of(0, int, "Shared (always-on) experts per MoE layer.", minimum=0),
    "shared_expert_mlp_dim": field_of(0, int, "Hidden width of each shared expert; 0 means moe_mlp_dim (Gemma 4's is "
                                        "its mlp_dim).", minimum=0),
    "shared_expert_gate": field_of(False, bool, "Qwen3-Next: a sigmoid gate D -> 1 scales the shared experts."),
    "first_num_dense_layers": field_of(0, int, "Layers 0..k-1 use the dense FFN (DeepSeek first_k_dense).",
                                 minimum=0),
    "interleave_moe_layer_step": field_of(1, int, "With s > 1, layer l (0-based) past the dense prefix is MoE iff "
                                            "(l+1) % s == 0 (Llama 4).", minimum=1),
    "parallel_layer_pattern": field_of("", str, "A second mixer in each decoder layer, run beside the first on the same "
                                          "normed input and summed into its output (Falcon-H1's attention and "
                                          "Mamba-2), cyclic like attention_layer_pattern, letters as its (- none). "
                                          "'' (default): one mixer per layer."),
    "ffn_layer_pattern": field_of("", str, "The FFN of each decoder layer, cyclic like attention_layer_pattern (a "
                                     "per-layer list is a pattern of num_decoder_layers letters): F the dense FFN, "
                                     "E the MoE FFN, - none (a mixer-only layer, as Nemotron-H's Mamba and "
                                     "attention layers). '' (default): every layer has an FFN, MoE as num_experts, "
                                     "first_num_dense_layers and interleave_moe_layer_step say."),
    # --- mixers -------------------------------------------------------------------------------------------
    "attention_layer_pattern": field_of("G", str, "Mixer pattern over decoder layers, cyclic: layer l uses "
                                                  "pattern[l % len]. Letters (each family's, from its record: "
                                                  "maxflops.families.LETTERS): "
                                                  + "; ".join(f"{letter} {what}" for fam in reversed(FAMILIES)
                                                              for letter, what in fam.letters.items())
                                                  + "; - no mixer (an FFN-only layer: see ffn_layer_pattern). 'S' "
                                                  "and 'H' need attention_type='compressed'. Any length: a per-layer "
                                                  "list is a pattern of num_decoder_layers letters, and letters past "
                                                  "the last layer are not used (the MTP modules' mixers are "
                                                  "mtp_layer_pattern)."),
    # --- per-layer widths (Llama-Nemotron's block_configs, per-layer head counts) ------------------------------
    "layer_widths": field_of((), tuple, "Layers of their own widths: rules '<key>@<layers>=<value>' applied in order "
                                        "(keys num_query_heads, num_kv_heads, head_dim, mlp_dim, moe_mlp_dim, "
                                        "and MLA's q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, "
                                        "v_head_dim; emb_dim, a layer's own hidden width (BLT's patcher and global "
                                        "transformer); sliding_window_size, a windowed layer's own window; "
                                        "layers 0-based decoder layers, '3' or '0-2' joined by '+'), e.g. "
                                        "'mlp_dim@0-2+5=4096'. A layer no rule names has the config's widths; "
                                        "MTP modules always do."),
    # --- the MoE router and experts of other projects ---------------------------------------------------------
    "moe_router_product_keys": field_of(False, bool, "A product-key router (Doge's CDMoE): D -> 2 x floor(sqrt(E)) "
                                                     "scores, two half keys whose sums over every pair score the "
                                                     "experts (the sums and the top-k are no matmuls)."),
    "moe_experts_ungated": field_of(False, bool, "The routed experts are ungated (act(x W_up) W_down) while the dense "
                                                 "and shared FFNs follow mlp_activations (Doge's CDMoE: single-neuron "
                                                 "experts of moe_mlp_dim 1 beside a gated shared MLP)."),
    "moe_router_mlp_dim": field_of(0, int, "An MLP router (ZAYA's): D -> this width, two layers of this width to "
                                           "itself, then -> the scored experts (2 D R + 4 R^2 + 2 R E FLOPs per "
                                           "token, component moe_router); 0: a linear router D -> E.", minimum=0),
    "moe_router_shared": field_of(False, bool, "The MoE router also scores the shared experts (Inkling's: D -> "
                                               "routed + shared experts), its shared scores weighing them."),
    # --- a vision encoder (ViT) in front of the decoder (train and prefill; decode reuses its output) ---------
    "vision_layers": field_of(0, int, "Vision encoder layers; 0 means no vision encoder is counted.", minimum=0),
    "vision_hidden_dim": field_of(1152, int, "Vision encoder width h (attention: q, k, v, o of h x h).", minimum=1),
    "vision_mlp_dim": field_of(4304, int, "Vision encoder MLP width (two matrices).", minimum=1),
    "vision_patch_dim": field_of(588, int, "Inputs of one patch (channels x patch x patch) of the patch embedding.",
                           minimum=1),
    "vision_patches": field_of(4096, int, "Patches per image (or tile) through the patch embedding.", minimum=1),
    "vision_extra_tokens": field_of(0, int, "Tokens the encoder adds to the patches (a class token).", minimum=0),
    "vision_encoder_stages": field_of((), tuple, "Matmuls after the encoder layers that belong to the encoder (frozen "
                                           "with it), per image, each 'tokens:in:out' (a pixel-shuffle MLP)."),
    "vision_projector": field_of((), tuple, "The trained projection to the decoder, per image, each 'tokens:in:out'."),
    "vision_images": field_of(1, int, "Images (or tiles) encoded per sequence.", minimum=1),
    "vision_frozen": field_of(True, bool, "The encoder is frozen in training (forward only; the projector trains)."),
    # --- the step -----------------------------------------------------------------------------------------
    "per_device_batch_size": field_of(1.0, float, "Sequences per device per micro-batch (may be fractional, as in "
                                            "MaxText).", minimum=0),
    "max_target_length": field_of(2048, int, "Sequence length T (prompt length in prefill).", minimum=1),
    "gradient_accumulation_steps": field_of(1, int, "Micro-batches per train step (train mode only).", minimum=1),
    "mode": field_of("train", str, "'train' (forward + backward), 'prefill' (forward over the prompt), 'decode' "
                             "(one new token per sequence).", choices=("train", "prefill", "decode")),
    "decode_kv_length": field_of(0, int, "Decode: tokens already in the KV cache; the new token sees these and "
                                   "itself.", minimum=0),
    # --- hardware FLOPs: what the kernels execute -----------------------------------------------------------
    "moe_impl": field_of("ideal", str, "Hardware MoE: 'ideal' top-k experts per token; 'capacity' per dispatch group "
                                 "(a sequence row of max_target_length slots; in decode the batch) every expert "
                                 "runs capacity_rule's slots, padded; 'dense' every expert runs every token; "
                                 "'ragged_dense' every routed row (k per token) against every expert, as XLA-CPU "
                                 "lowers lax.ragged_dot.", choices=("ideal", "capacity", "dense", "ragged_dense")),
    "moe_dispatch": field_of("gather", str, "How the MoE moves and combines tokens: 'gather' by index (no "
                                      "matmul); 'einsum' with matmuls as MaxText does: the capacity form's one-hot "
                                      "dispatch and combine (2*S*E*C*D each per group of S), the dense form's "
                                      "router-weighted sum over experts (2*E*D per token), the ideal (sparse, "
                                      "ragged) form's router-weighted sum over the k experts' outputs (2*k*D per "
                                      "token; its gradient reaches the weights alone).",
                       choices=("gather", "einsum")),
    "moe_router_scale": field_of("output", str, "Hardware, train: what the router's weights scale in a routed expert: its "
                                          "'output' (the weights' gradient needs the expert's output, so remat "
                                          "recomputes its down projection) or its 'input' (Llama 4: the down "
                                          "projection's output is only summed, a tail, and the dense path's combine "
                                          "sums with constant weights that take no gradient).",
                           choices=("output", "input")),
    "moe_down_grad_replicas": field_of(1, int, "Hardware, train, moe_impl='capacity': devices that each compute the "
                                         "routed experts' down-projection input gradient for the same rows (1: "
                                         "split like the rest). MaxText's moe_dispatch_no_expert_sharding over an "
                                         "expert axis leaves it whole on every batch shard of an expert shard "
                                         "(batch shards / expert); each replica past the first adds one down "
                                         "projection's forward FLOPs as moe_down_grad_replicated. Other moe_impl values "
                                         "ignore it (as they ignore capacity_factor).", minimum=1),
    "moe_routing_replicas": field_of(1, int, "Hardware: devices that each run the MoE router, the capacity dispatch and "
                                       "combine and the dense path's weighted sum for the same tokens (1: split "
                                       "like the rest). MaxText's logical_axis_rules with the residual stream whole "
                                       "over the tensor axis (Megatron-style) leave them unsplit on every tensor "
                                       "rank; each replica past the first adds their FLOPs again as "
                                       "moe_routing_replicated.", minimum=1),
    "capacity_rule": field_of("ceil", str, "Slots per expert of moe_impl='capacity': 'ceil' ceil(cf * group * k / E); "
                                     "'maxtext' MaxText's int(max(ceil(group * k / E) * cf, cf)).",
                        choices=("ceil", "maxtext")),
    "capacity_factor": field_of(1.0, float, "Expert capacity factor of moe_impl='capacity'. Below 1 tokens are "
                                      "dropped, and hardware FLOPs fall below model FLOPs.", minimum=1e-9),
    "remat_policy": field_of("none", str, "Rematerialization of every decoder layer (and MTP module, see remat_mtp): the "
                                    "backward pass recomputes the layer's forward matmuls except those whose "
                                    "outputs are only added into the layer output (FFN down projections of the "
                                    "dense MLP and of ungated shared experts) and those the policy saves. 'none' "
                                    "recomputes nothing; 'full' saves nothing; MaxText's policies save: "
                                    "'minimal' q/k/v, out and the MLP (attention scores recomputed), "
                                    "'minimal_with_context' that and the attention output (QK^T recomputed), "
                                    "'save_dot_with_context_except_mlp' q/k/v, context and out, "
                                    "'save_dot_except_mlpwi' q/k/v, out and the MLP down projection, "
                                    "'save_dot_except_mlp' q/k/v and out, 'save_qkv_proj' and "
                                    "'qkv_proj_offloaded' q/k/v, 'save_out_proj' out, 'minimal_offloaded' as "
                                    "'minimal' (offloaded tensors are not recomputed); 'reversible' Reformer's "
                                    "reversible layers: each layer's whole forward again, its last matmuls "
                                    "included (the layer's input is rebuilt from its output), but what no gradient "
                                    "reads (LSH buckets) is kept from the forward.",
                       choices=("none", "full", "reversible", "minimal", "minimal_with_context",
                                "save_dot_with_context_except_mlp", "save_dot_except_mlpwi", "save_dot_except_mlp",
                                "save_qkv_proj", "save_out_proj", "qkv_proj_offloaded", "minimal_offloaded")),
    "remat_skip_layers": field_of(0, int, "Hardware, train: the first N decoder layers run outside rematerialization "
                                    "(MaxText's scanned DeepSeek-V4 runs its hash-routed prefix unrolled, "
                                    "without remat); remat_policy applies to the others.", minimum=0),
    "remat_block_layers": field_of(1, int, "Hardware, train: decoder layers per rematerialized unit, counted after the "
                                     "remat_skip_layers (MaxText's scanned DeepSeek-V4 block: an HCA and a CSA "
                                     "layer). Inside a unit each layer's output feeds the next, so only the unit's "
                                     "last layer keeps its tail unrecomputed.", minimum=1),
    "pipeline_stages": field_of(1, int, "Hardware: pipeline stages (MaxText's ici x dcn pipeline parallelism). Each "
                                  "stage runs its pipelined layers over pipeline_repeats x pipeline_microbatches + "
                                  "pipeline_stages - 1 iterations, stages - 1 of them on no microbatch (the "
                                  "bubble, the component pipeline_bubble); model FLOPs stay the ideal share.",
                          minimum=1),
    "pipeline_microbatches": field_of(0, int, "Hardware: microbatches per step through the pipeline (0: pipeline_stages).",
                                minimum=0),
    "pipeline_repeats": field_of(1, int, "Hardware: times each microbatch passes through the stages (a circular "
                                   "pipeline: pipelined layers / (stages x layers per stage)).", minimum=1),
    "pipeline_delay": field_of(False, bool, "Hardware: activations move to the next stage one iteration late (MaxText's "
                                      "pipeline_delay_activation_forwarding), doubling the bubble: 2 x (stages - "
                                      "1) bubble iterations."),
    "pipeline_layers": field_of((), Ints, "Hardware: 0-based decoder layers in the pipeline (empty: every decoder layer); "
                                    "the others run outside it, the stage axis acting as data parallelism."),
    "warmup_dead_last_layer": field_of(False, bool, "Hardware, DSA warm-up train (indexer_stage='warmup'): the last "
                                              "decoder layer compiles outside a loop (MaxText's scan_layers=False, "
                                              "or a scanned group of one layer) and nothing reads its output (the "
                                              "warm-up has no LM loss), so XLA drops its work the indexer's loss "
                                              "does not need: all but its q/k/v projections and its indexer."),
    "warmup_cse_layers": field_of((), Ints, "Hardware, DSA warm-up train: 0-based decoder layers each scanned alone (a "
                                      "MaxText scan group of one layer, which XLA unrolls): CSE merges their "
                                      "recompute of the q/k/v projections, the indexer's projections and its KL "
                                      "target with the forward (the indexer's scores are recomputed)."),
    "post_ffn_norm": field_of(False, bool, "A norm on the FFN output before it joins the residual (Gemma): under remat "
                                     "the FFN down projection is recomputed too."),
    "num_devices": field_of(0, int, "Hardware: devices the step's program is partitioned over (0: not given). With "
                              "batch_shards, the program's batch is padded to whole sequences per batch shard.",
                      minimum=0),
    "batch_shards": field_of(0, int, "Hardware: ways the program splits the batch (the product of the mesh axes its batch "
                               "is sharded over: MaxText's activation_batch rule, data x fsdp x fsdp_transpose x "
                               "expert; 0: not given). The global batch per_device_batch_size x num_devices, "
                               "sequences, is padded to a whole number per shard, and each shard's devices split "
                               "its work: with 0.5 sequences per device on fsdp 8, every device runs one.",
                        minimum=0),
    "packed_kernel": field_of("varlen", str, "Hardware for packed documents (segment_lengths): 'varlen' kernels run each "
                                       "document on its own (THD); 'row' the program runs every row whole, "
                                       "padding included, its attention over the full row (a model without "
                                       "segment masking, or masking inside a dense row).",
                        choices=("varlen", "row")),
    "outer_product_grads": field_of("matmul", str, "Hardware, train: some backward 'matmuls' contract nothing (the "
                                              "gradient of a per-token weighting or state: the gated delta net's "
                                              "state reads, the indexer's head weighting, MoE one-hot routing). "
                                              "'matmul' counts them as issued (an unoptimized module); "
                                              "'elementwise': XLA's optimizer turns them into multiplies, as in "
                                              "MaxText's compiled step.", choices=("matmul", "elementwise")),
    "aux_conv_impl": field_of("valid", str, "Hardware: the convs around attention (kv_conv_kernel, "
                                            "residual_conv_kernel): " + _CONV_IMPL_DOC + " Compressed "
                                            "convolutional attention's two convs (cca_depthwise_kernel) take "
                                            "'valid' or 'padded' (the sequence padded by t0 - 1 + t1 - 1 zeros "
                                            "before both unpadded convs: transformers' ZAYA). Engram's dilated conv "
                                            "(engram_layers) 'padded': every tap of every output, the sequence "
                                            "padded by (K - 1) x dilation zeros before an unpadded conv "
                                            "(transformers' Qwen4-Exp PLE); else its non-padding taps.",
                              choices=("valid", "padded", "pre_padded")),
    "weighted_sum_impl": field_of("einsum", str, "Hardware: per-token weighted sums over a few heads or streams (the "
                                           "indexer's head weighting, mHC's pre contraction over its G streams, "
                                           "Engram's per-stream gate): "
                                           "'einsum' as matmuls (MaxText's einsums); 'elementwise' as a multiply "
                                           "and a sum, no matmul (transformers' eager code); 'streams_elementwise' "
                                           "the stream sums (mHC's, attention residuals') elementwise and the "
                                           "indexer's head weighting a matmul (HY-V4's eager code).",
                            choices=("einsum", "elementwise", "streams_elementwise")),
    "remat_mtp": field_of(True, bool, "MTP modules are rematerialized like decoder layers (MaxText's are not)."),
    # --- conventions --------------------------------------------------------------------------------------
    "convention": field_of("exact", str, convention_help(), choices=tuple(CONVENTIONS)),
    "convention_knobs_from": field_of("exact", str, "Set by the library: the convention whose bundle filled the "
                                              "knobs, and its branch for the model's kind ('convention:branch', see "
                                              "CONVENTION_BRANCHES). When 'convention' or the kind differs (changed "
                                              "after the config was built), knobs still at that bundle's values are "
                                              "re-derived.",
                                choices=knobs_from_choices()),
    "packed_tokens": field_of("real", str, "Model FLOPs of a packed batch (segment_lengths): the token-linear terms over "
                                     "its 'real' tokens, or over every row slot, the 'padded' ones too "
                                     "(Megatron-Bridge); the attention pairs follow the documents either way.",
                        choices=("real", "padded")),
    "indexer_stage_in_model": field_of(True, bool, "Model FLOPs follow indexer_stage. Peer functions price the sparse "
                                             "stage whatever the stage (False); hardware FLOPs always follow it."),
    "indexer_train_factor": field_of(0, int, "Train multiplier of the indexer; 0 = the gradient rule "
                                       "(projections 2x, scoring 3x, or 1x with no indexer loss).",
                               minimum=0),
    "gate_projections": field_of(True, bool, "Count Qwen3-Next's attention output gate (the q projection's second "
                                       "half; MaxText omits it)."),
    "mla_gate_flops": field_of(True, bool, "Count MLA's output gate D -> heads x v_head_dim (attention_output_gate on "
                                     "MLA, Kimi K3's g_proj; Megatron-Bridge's MLA term omits it)."),
    "attn_res_flops": field_of(True, bool, "Count attention residuals' aggregates (attn_res_block_size, Kimi K3; "
                                     "Megatron-Bridge's function has no term for them)."),
    "shared_expert_gate_flops": field_of(True, bool, "Count Qwen3-Next's shared-expert gate D -> 1 (MaxText and "
                                               "Megatron omit it)."),
    "ffn_all_moe": field_of(False, bool, "Count the MoE FFN on every layer, the dense ones too (MaxText's function for "
                                   "blocks it has no dense/MoE rule for, e.g. envy)."),
    "convention_quirks": field_of((), tuple, "Per-model exceptions to a convention's bundle, each 'convention:key=value', "
                                       "applied when that convention is active (set by the MaxText mapping where "
                                       "MaxText's function counts a decoder block its own way). Knobs set "
                                       "explicitly still win."),
    "not_priced": field_of((), tuple, "What these figures leave out, each 'model: ...' (missing from every figure, "
                                "e.g. a vision encoder), 'hardware: ...' (an implementation choice hardware "
                                "FLOPs do not price yet) or 'traffic: ...' (what decode bytes do not read, e.g. a "
                                "file's quantized weights), or 'ignored: ...' (a file's keys that the code it was written for never reads); set "
                                "by the loaders, shown by every report."),
    "mhc_flops": field_of(True, bool, "Count the mHC mixing (MaxText's function leaves it out for its deepseek block)."),
    "mhc_head_flops": field_of(True, bool, "Count the mHC hyper head (mhc_hyper_head; MaxText's DeepSeek-V4 function "
                                     "leaves it out)."),
    "mhc_outer_flops": field_of(False, bool, "Count mHC's elementwise outer product (G*D per token per module) as "
                                       "MaxText's DeepSeek-V4 function does."),
    "router_flops": field_of(True, bool, "Count the MoE router D -> E (Megatron does not)."),
    "attention_flops": field_of(True, bool, "Count the attention components (sequence mixing: core attention, "
                                            "indexer scores, recurrences...); 6N conventions leave them out."),
    "embedding_flops": field_of(False, bool, "Count the token embedding table as a matmul, 2 x vocab x emb_dim per "
                                             "token, when it is not the output head (6N with the embedding in N, as "
                                             "Llama 3 and GPT-3 count it)."),
    "logits_flops": field_of(True, bool, "Count the output head (Kaplan et al.'s 6N leaves the vocabulary out of N)."),
    "recompute_forwards": field_of(0, int, "Train: forwards of every decoder layer (and MTP module) a published "
                                           "hardware-FLOPs formula adds for recomputation, the output head left "
                                           "alone: 1 under full recomputation (Narayanan et al. 2021's "
                                           "96 B s l h^2 (1 + s/6h + V/16lh)). A reporting knob: hardware FLOPs "
                                           "price what remat_policy recomputes.", minimum=0),
    "recompute_attention_forwards": field_of(0, int, "Train: forwards of the attention components added on top of "
                                                     "recompute_forwards: 3 in Korthikanti et al. 2022's eq. 8 for "
                                                     "selective recomputation (its s/3h term; the paper's text adds "
                                                     "one forward of QK^T and of the attention over V, its formula "
                                                     "and its table 5 three).", minimum=0),
    "mtp_layer_numbering": field_of("own", str, "MTP module k: 'own' numbers itself k for the index-reuse rule and "
                                          "copies the last decoder layer's mixer; 'after_decoder' (Megatron) is "
                                          "layer num_decoder_layers + k for both (on a hybrid its mixer follows "
                                          "the layer pattern).", choices=("own", "after_decoder")),
    "mtp_eh_proj": field_of(True, bool, "Count the MTP eh projection 2D -> D."),
    "mtp_logits": field_of(True, bool, "Count the MTP modules' output head."),
    "mtp_norm_flops": field_of(False, bool, "Megatron: add its MTP norm term 3*D multiply-adds (6*D FLOPs) per token "
                                      "per MTP module."),
    "make_vocab_size_divisible_by": field_of(1, int, "The output head is padded to a multiple of this x "
                                               "tensor_parallel_size: hardware FLOPs compute the padding.",
                                       minimum=1),
    # --- memory traffic of a decode step (maxflops.decode_traffic): bytes per element ----------------------------
    "weight_bytes": field_of(2, int, "Bytes per weight element read from HBM (2: bfloat16; 1: int8/fp8).", minimum=1),
    "weight_bytes_rules": field_of((), tuple, "Decode traffic: bytes per weight element by component group and layer, "
                                        "over weight_bytes: rules '<group>[@<layers>]=<bytes>' applied in order "
                                        "(groups attention, mlp, moe_routed, moe_shared, moe_router, logits, "
                                        "embeddings, other, or *; layers 0-based, '3' or '0-2' joined by '+'; "
                                        "bytes a decimal or a fraction with the scales included, e.g. "
                                        "'moe_routed=17/32' for MXFP4). The Hugging Face loader writes them from a "
                                        "file's quantization_config (see maxflops.weights)."),
    "tensor_parallel_size": field_of(1, int, "Tensor parallel degree; only used to pad the vocab.", minimum=1),
    "padded_vocab_in_model_flops": field_of(False, bool, "Megatron: model FLOPs use the padded vocab (divisor 128 "
                                                   "unless make_vocab_size_divisible_by is set)."),
}


for _part in (*FEATURES, *FAMILIES):  # each trunk feature's keys, then each family's: their sections of the schema
    for _key, _field in _part.schema.items():
        if _key in SCHEMA:
            raise ValueError(f"config key {_key!r} is declared twice (the trunk and {_part.name})")
        SCHEMA[_key] = _field


# Other frameworks' names for a schema key (Hugging Face config.json, Megatron, trainers): a user who types one means
# the schema key, not the nearest spelling (batch_size is no typo of mamba_chunk_size)
FOREIGN_NAMES = {
    **dict.fromkeys(("batch_size", "global_batch_size", "micro_batch_size", "train_batch_size"),
                    "per_device_batch_size"),
    **dict.fromkeys(("seq_len", "seq_length", "sequence_length", "max_seq_len", "max_seq_length", "context_length"),
                    "max_target_length"),
    **dict.fromkeys(("num_layers", "n_layers", "num_hidden_layers", "n_layer"), "num_decoder_layers"),
    **dict.fromkeys(("hidden_size", "d_model", "n_embd"), "emb_dim"),
    **dict.fromkeys(("num_attention_heads", "n_heads", "n_head"), "num_query_heads"),
    **dict.fromkeys(("num_key_value_heads", "num_query_groups", "n_kv_heads"), "num_kv_heads"),
    **dict.fromkeys(("intermediate_size", "ffn_hidden_size", "ffn_dim"), "mlp_dim"),
    **dict.fromkeys(("grad_accum_steps", "gradient_accumulation"), "gradient_accumulation_steps"),
    "sliding_window": "sliding_window_size", "moe_intermediate_size": "moe_mlp_dim",
}


def closest(key: str, names=None, cutoff: float | None = None) -> str:
    """' (did you mean X?)' for a misspelling of one of ``names`` (values: ratio 0.5), or of a schema key (by
    default; ratio 0.75, a typo's, so that a trainer's learning_rate or warmup_steps is no misspelling of a key), or
    another framework's name for a schema key (batch_size: per_device_batch_size); '' where nothing is close."""
    if names is None and key in FOREIGN_NAMES:
        return f" (did you mean {FOREIGN_NAMES[key]!r}?)"
    cutoff = cutoff if cutoff is not None else 0.75 if names is None else 0.5
    match = difflib.get_close_matches(key, SCHEMA if names is None else names, n=1, cutoff=cutoff)
    return f" (did you mean {match[0]!r}?)" if match else ""


def coerce(key: str, value: Any) -> Any:
    """Return ``value`` as the schema type of ``key`` or raise ValueError naming both."""
    field = SCHEMA[key]
    kind = field.kind
    if type(value) is kind and (kind is int or kind is str or kind is bool):  # already the schema's type
        return value
    bad = ValueError(f"config key {key!r}: expected {kind.__name__}, got {value!r} ({type(value).__name__})")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise bad
    if kind is int:
        if isinstance(value, bool):
            raise bad
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise bad from None
        if hasattr(value, "__index__"):  # numpy integers
            return int(value)
        raise bad
    if kind is float:
        if isinstance(value, bool):
            raise bad
        try:
            if isinstance(value, (int, float, str)) or hasattr(value, "__float__"):
                out = float(value)
                if not math.isfinite(out):
                    raise ValueError(f"config key {key!r}: must be a finite number, got {value!r}")
                return out
        except ValueError as e:
            if "finite" in str(e):
                raise
            raise bad from None
        raise bad
    if kind is str:
        if isinstance(value, str):
            return value
        raise bad
    if kind is Ints:  # stored as a plain tuple of ints
        bad = ValueError(f"config key {key!r}: expected a list of non-negative integers, got {value!r}")
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        try:
            out = tuple(int(v) for v in value if not isinstance(v, bool) and float(v).is_integer())
        except (TypeError, ValueError):
            raise bad from None
        if len(out) != len(value) or any(v < 0 for v in out):
            raise bad
        return out
    if kind is tuple:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value):
            return tuple(v.strip() for v in value)
        raise bad
    raise AssertionError(kind)


def check_value(key: str, value: Any) -> None:
    field = SCHEMA[key]
    if field.choices and field.kind is tuple:
        for item in value:
            if item not in field.choices:
                said = CHOICE_HINTS.get(key, {}).get(item)
                hint = f" ({said})" if said else closest(item, field.choices)
                raise ValueError(f"config key {key!r}: {item!r} (in {list(value)!r}) is not one of "
                                 f"{', '.join(map(repr, field.choices))}{hint}")
    elif field.choices and value not in field.choices:
        raise ValueError(f"config key {key!r}: {value!r} is not one of {', '.join(map(repr, field.choices))}")
    if field.minimum is not None and value < field.minimum:
        what = "must be positive" if field.minimum == 1 else f"must be >= {field.minimum}"
        raise ValueError(f"config key {key!r}: {what}, got {value!r}")
    if field.kind in (int, float) and not isinstance(value, bool) and abs(value) > INT_MAX:
        raise ValueError(f"config key {key!r}: must be at most 2**62 (the int64 range kernels index with), got "
                         f"{short_number(value)}")


def short_number(value) -> str:
    """A number as an error shows it: a very long integer by its size, not its digits."""
    text = repr(value)
    return text if len(text) <= 24 else f"a {len(text.lstrip('-'))}-digit number (about 2**{abs(value).bit_length() - 1})"


_DEFAULTS = {k: f.default for k, f in SCHEMA.items()}
