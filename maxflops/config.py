"""The config schema: every key, its default, its type and what it means, in one place.

A maxflops config is a locked ``ml_collections.ConfigDict`` whose keys are exactly the keys of ``SCHEMA``.
Key names follow MaxText where MaxText has the idea (``emb_dim``, ``num_query_heads``, ``index_topk``...).

``ml_collections`` is imported only when a ConfigDict is built, so ``import maxflops`` stays cheap; the
accounting itself reads any mapping or attribute-style object with these keys.
"""

from __future__ import annotations

import difflib
import math
import os
import pathlib
from fractions import Fraction
from typing import Any, Mapping

from .families import FAMILIES, LETTERS
from .fields import Field, _f  # noqa: F401 (Field: the schema's entries)


class Ints(tuple):
    """Schema kind: a tuple of non-negative integers (given as a list, a tuple or '1,4')."""


INT_MAX = 2 ** 62  # the largest size or length a config may give (int64 indices; keeps every per-token figure
#                   within a float's range)


# The FFN activation names: those MaxText resolves (its _convert_to_activation_function: 'linear' is the identity,
# any other name an attribute of flax.linen), i.e. flax 0.12.8's activations that keep their input's shape, so that
# the gated product runs (glu halves the last axis; logsumexp and one_hot change it), then the elementwise ones of
# transformers and Megatron that flax lacks (squared ReLU...). tests/test_input_paths.py checks the list against
# flax.linen. Every name keeps the FFN's matmuls: the check is that the name means something.
ACTIVATION_NAMES = ("linear", "celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
                    "leaky_relu", "log_sigmoid", "log_softmax", "normalize", "relu", "relu6", "selu", "sigmoid", "silu",
                    "soft_sign", "softmax", "softplus", "standardize", "swish", "tanh",
                    # elementwise activations of transformers (its ACT2CLS) and Megatron that flax lacks
                    "relu2", "mish", "laplace", "xielu", "prelu", "sqrtsoftplus")
# A value of a tuple key that is not one of its choices, with what to say instead (the gated-FFN names of other
# projects, said back in MaxText's two entries)
CHOICE_HINTS = {"mlp_activations": {name: f"a gated FFN is two entries: {list(pair)!r}" for name, pair in (
    ("swiglu", ("silu", "linear")), ("geglu", ("gelu", "linear")), ("reglu", ("relu", "linear")))}}


# The trunk's keys here; each mixer family's own keys are its module's SCHEMA section (maxflops.families), added
# below.
SCHEMA: dict[str, Field] = {
    # --- identity and trunk -------------------------------------------------------------------------------
    "model_name": _f("default", str, "Name shown in reports."),
    "num_decoder_layers": _f(2, int, "Decoder layers (MTP modules not included).", minimum=1),
    "emb_dim": _f(512, int, "Model (hidden) width D.", minimum=1),
    "vocab_size": _f(32000, int, "Vocabulary size V of the output head (logits cost 2*D*V per token).",
                     minimum=1),
    # --- attention projections ----------------------------------------------------------------------------
    "attention_output_dim": _f(0, int, "Width the attention output projects to; 0 means emb_dim. When it differs, "
                                       "the FFN (router and experts too) runs at this width and the layer closes "
                                       "with an up-projection to emb_dim (MaxText's qwen3_custom_moe).", minimum=0),
    # --- feed-forward -------------------------------------------------------------------------------------
    "mlp_dim": _f(2048, int, "Dense FFN hidden width.", minimum=1),
    "mlp_activations": _f(("silu", "linear"), tuple, "FFN activations, MaxText style: two entries mean a "
                                                     "gated FFN (3 matrices), one entry a plain FFN (2). Each is a "
                                                     "name MaxText resolves: 'linear' or an activation of "
                                                     "flax.linen that keeps its input's shape.",
                          choices=ACTIVATION_NAMES),
    "num_experts": _f(1, int, "Routed experts E; 1 means no MoE layers.", minimum=1),
    "num_experts_per_tok": _f(1, int, "Experts each token is routed to (top-k).", minimum=1),
    "zero_experts": _f(0, int, "Zero-computation (identity) experts the router scores beside num_experts "
                               "(LongCat-Flash): the router is D -> num_experts + zero_experts; a slot routed to one "
                               "runs no matmul.", minimum=0),
    "zero_expert_share": _f(-1.0, float, "With zero_experts: the share of the top-k slots routed to them (what "
                                         "training measured; -1: zero_experts / (num_experts + zero_experts), as "
                                         "uniform routing would give). The routed experts run the other slots "
                                         "(an expected count: the component is rounded to the FLOP)."),
    "moe_mlp_dim": _f(2048, int, "Hidden width of each routed expert (and of each shared one unless "
                                 "shared_expert_mlp_dim says otherwise).", minimum=1),
    "shared_experts": _f(0, int, "Shared (always-on) experts per MoE layer.", minimum=0),
    "shared_expert_mlp_dim": _f(0, int, "Hidden width of each shared expert; 0 means moe_mlp_dim (Gemma 4's is "
                                        "its mlp_dim).", minimum=0),
    "shared_expert_gate": _f(False, bool, "Qwen3-Next: a sigmoid gate D -> 1 scales the shared experts."),
    "first_num_dense_layers": _f(0, int, "Layers 0..k-1 use the dense FFN (DeepSeek first_k_dense).",
                                 minimum=0),
    "interleave_moe_layer_step": _f(1, int, "With s > 1, layer l (0-based) past the dense prefix is MoE iff "
                                            "(l+1) % s == 0 (Llama 4).", minimum=1),
    "parallel_layer_pattern": _f("", str, "A second mixer in each decoder layer, run beside the first on the same "
                                          "normed input and summed into its output (Falcon-H1's attention and "
                                          "Mamba-2), cyclic like attention_layer_pattern, letters as its (- none). "
                                          "'' (default): one mixer per layer."),
    "ffn_layer_pattern": _f("", str, "The FFN of each decoder layer, cyclic like attention_layer_pattern (a "
                                     "per-layer list is a pattern of num_decoder_layers letters): F the dense FFN, "
                                     "E the MoE FFN, - none (a mixer-only layer, as Nemotron-H's Mamba and "
                                     "attention layers). '' (default): every layer has an FFN, MoE as num_experts, "
                                     "first_num_dense_layers and interleave_moe_layer_step say."),
    # --- mixers -------------------------------------------------------------------------------------------
    "attention_layer_pattern": _f("G", str, "Mixer pattern over decoder layers, cyclic: layer l uses "
                                            "pattern[l % len]. G global causal, L sliding window, C chunked, "
                                            "D gated-delta-net linear attention; with attention_type='compressed' "
                                            "S compressed sparse attention (window + the top-k compressed blocks "
                                            "an indexer picks) and H heavily compressed attention (window + every "
                                            "compressed block); - no mixer (an FFN-only layer: see "
                                            "ffn_layer_pattern). Any length: a per-layer list is a pattern of "
                                            "num_decoder_layers letters, and letters past the last layer are "
                                            "not used (the MTP modules' mixers are mtp_layer_pattern)."),
    "mtp_layer_pattern": _f("", str, "Mixers of the MTP modules, cyclic: module k (1-based) uses "
                                     "pattern[(k-1) % len], letters as attention_layer_pattern. '' (default): "
                                     "each module copies the last decoder layer's mixer (after_decoder "
                                     "numbering: it continues attention_layer_pattern's cycle). DeepSeek-V4's "
                                     "MTP module is window-only: 'L'. With mtp_ffn_layer_pattern: the mixers of "
                                     "every module's layers, in order, '-' for none."),
    "mtp_ffn_layer_pattern": _f("", str, "MTP modules of a model with hybrid layer shapes (ffn_layer_pattern): each "
                                         "module runs len(mtp_layer_pattern) layers, whose mixers are "
                                         "mtp_layer_pattern and whose FFNs are this pattern (letters as "
                                         "ffn_layer_pattern, the same length): Megatron-LM's hybrid pattern after "
                                         "'/', NemotronH's mtp_layers_block_type. The eh projection opens each module "
                                         "and its output head closes it."),
    # --- per-layer extras: KV sharing, per-layer embeddings (Gemma 4 E2B/E4B), Engram, mHC (DeepSeek) -----------
    "num_kv_shared_layers": _f(0, int, "The last N decoder layers reuse the keys and values of an earlier layer: "
                                       "no K/V projections of their own (they still attend).", minimum=0),
    "double_wide_kv_shared_mlp": _f(False, bool, "The KV-shared layers run their dense FFN at twice mlp_dim "
                                                 "(Gemma 4 E2B)."),
    "per_layer_input_dim": _f(0, int, "Per-layer embeddings of width P (Gemma 4 E2B/E4B): one projection "
                                      "D -> layers*P per token, and in every layer a gate D -> P and a "
                                      "projection P -> D; the table lookup is a gather.", minimum=0),
    "engram_layers": _f((), Ints, "0-based decoder layers with an Engram block before attention: n-gram "
                                      "embeddings (a gather) projected to keys (-> expansion x D) and a value "
                                      "(-> D), a per-stream gate (a dot product) and a causal depthwise conv."),
    "engram_num_heads": _f(8, int, "Engram embedding heads per n-gram order.", minimum=1),
    "engram_head_dim": _f(1280, int, "Engram embedding width per head.", minimum=1),
    "engram_max_ngram_size": _f(3, int, "Engram's largest n-gram: orders 2..n, and the conv's dilation.", minimum=2),
    "engram_kernel_size": _f(4, int, "Engram's depthwise conv width.", minimum=1),
    "mhc_expansion_rate": _f(1, int, "mHC hyper-connections: G residual streams; above 1 every decoder layer "
                                     "mixes them around attention and around the FFN (a projection "
                                     "G*D -> 2G + G^2 and the G- and G^2-way contractions, per token).",
                             minimum=1),
    "mhc_hyper_head": _f(False, bool, "mHC: the streams are collapsed before the final norm by a learned head "
                                      "(a projection G*D -> G and the G-way weighted sum per token; DeepSeek-V4), "
                                      "in every output head (the MTP modules' too)."),
    # --- a vision encoder (ViT) in front of the decoder (train and prefill; decode reuses its output) ---------
    "vision_layers": _f(0, int, "Vision encoder layers; 0 means no vision encoder is counted.", minimum=0),
    "vision_hidden_dim": _f(1152, int, "Vision encoder width h (attention: q, k, v, o of h x h).", minimum=1),
    "vision_mlp_dim": _f(4304, int, "Vision encoder MLP width (two matrices).", minimum=1),
    "vision_patch_dim": _f(588, int, "Inputs of one patch (channels x patch x patch) of the patch embedding.",
                           minimum=1),
    "vision_patches": _f(4096, int, "Patches per image (or tile) through the patch embedding.", minimum=1),
    "vision_extra_tokens": _f(0, int, "Tokens the encoder adds to the patches (a class token).", minimum=0),
    "vision_encoder_stages": _f((), tuple, "Matmuls after the encoder layers that belong to the encoder (frozen "
                                           "with it), per image, each 'tokens:in:out' (a pixel-shuffle MLP)."),
    "vision_projector": _f((), tuple, "The trained projection to the decoder, per image, each 'tokens:in:out'."),
    "vision_images": _f(1, int, "Images (or tiles) encoded per sequence.", minimum=1),
    "vision_frozen": _f(True, bool, "The encoder is frozen in training (forward only; the projector trains)."),
    # --- multi-token prediction ---------------------------------------------------------------------------
    "mtp_num_layers": _f(0, int, "MTP modules (train mode only): eh projection 2D -> D, one layer like the "
                                 "last decoder layer, and the output head.", minimum=0),
    # --- the step -----------------------------------------------------------------------------------------
    "per_device_batch_size": _f(1.0, float, "Sequences per device per micro-batch (may be fractional, as in "
                                            "MaxText).", minimum=0),
    "max_target_length": _f(2048, int, "Sequence length T (prompt length in prefill).", minimum=1),
    "gradient_accumulation_steps": _f(1, int, "Micro-batches per train step (train mode only).", minimum=1),
    "mode": _f("train", str, "'train' (forward + backward), 'prefill' (forward over the prompt), 'decode' "
                             "(one new token per sequence).", choices=("train", "prefill", "decode")),
    "decode_kv_length": _f(0, int, "Decode: tokens already in the KV cache; the new token sees these and "
                                   "itself.", minimum=0),
    # --- hardware FLOPs: what the kernels execute -----------------------------------------------------------
    "moe_impl": _f("ideal", str, "Hardware MoE: 'ideal' top-k experts per token; 'capacity' per dispatch group "
                                 "(a sequence row of max_target_length slots; in decode the batch) every expert "
                                 "runs capacity_rule's slots, padded; 'dense' every expert runs every token; "
                                 "'ragged_dense' every routed row (k per token) against every expert, as XLA-CPU "
                                 "lowers lax.ragged_dot.", choices=("ideal", "capacity", "dense", "ragged_dense")),
    "moe_dispatch": _f("gather", str, "How moe_impl 'capacity' and 'dense' move tokens: 'gather' by index (no "
                                      "matmul); 'einsum' with one-hot matmuls as MaxText's dense_matmul does: the "
                                      "capacity form's dispatch and combine (2*S*E*C*D each per group of S), the "
                                      "dense form's router-weighted sum over experts (2*E*D per token).",
                       choices=("gather", "einsum")),
    "moe_router_scale": _f("output", str, "Hardware, train: what the router's weights scale in a routed expert: its "
                                          "'output' (the weights' gradient needs the expert's output, so remat "
                                          "recomputes its down projection) or its 'input' (Llama 4: the down "
                                          "projection's output is only summed, a tail, and the dense path's combine "
                                          "sums with constant weights that take no gradient).",
                           choices=("output", "input")),
    "moe_down_grad_replicas": _f(1, int, "Hardware, train, moe_impl='capacity': devices that each compute the "
                                         "routed experts' down-projection input gradient for the same rows (1: "
                                         "split like the rest). MaxText's moe_dispatch_no_expert_sharding over an "
                                         "expert axis leaves it whole on every batch shard of an expert shard "
                                         "(batch shards / expert); each replica past the first adds one down "
                                         "projection's forward FLOPs as moe_down_grad_replicated. Other moe_impl values "
                                         "ignore it (as they ignore capacity_factor).", minimum=1),
    "moe_routing_replicas": _f(1, int, "Hardware: devices that each run the MoE router, the capacity dispatch and "
                                       "combine and the dense path's weighted sum for the same tokens (1: split "
                                       "like the rest). MaxText's logical_axis_rules with the residual stream whole "
                                       "over the tensor axis (Megatron-style) leave them unsplit on every tensor "
                                       "rank; each replica past the first adds their FLOPs again as "
                                       "moe_routing_replicated.", minimum=1),
    "capacity_rule": _f("ceil", str, "Slots per expert of moe_impl='capacity': 'ceil' ceil(cf * group * k / E); "
                                     "'maxtext' MaxText's int(max(ceil(group * k / E) * cf, cf)).",
                        choices=("ceil", "maxtext")),
    "capacity_factor": _f(1.0, float, "Expert capacity factor of moe_impl='capacity'. Below 1 tokens are "
                                      "dropped, and hardware FLOPs fall below model FLOPs.", minimum=1e-9),
    "remat_policy": _f("none", str, "Rematerialization of every decoder layer (and MTP module, see remat_mtp): the "
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
                                    "'minimal' (offloaded tensors are not recomputed).",
                       choices=("none", "full", "minimal", "minimal_with_context", "save_dot_with_context_except_mlp",
                                "save_dot_except_mlpwi", "save_dot_except_mlp", "save_qkv_proj", "save_out_proj",
                                "qkv_proj_offloaded", "minimal_offloaded")),
    "remat_skip_layers": _f(0, int, "Hardware, train: the first N decoder layers run outside rematerialization "
                                    "(MaxText's scanned DeepSeek-V4 runs its hash-routed prefix unrolled, "
                                    "without remat); remat_policy applies to the others.", minimum=0),
    "remat_block_layers": _f(1, int, "Hardware, train: decoder layers per rematerialized unit, counted after the "
                                     "remat_skip_layers (MaxText's scanned DeepSeek-V4 block: an HCA and a CSA "
                                     "layer). Inside a unit each layer's output feeds the next, so only the unit's "
                                     "last layer keeps its tail unrecomputed.", minimum=1),
    "pipeline_stages": _f(1, int, "Hardware: pipeline stages (MaxText's ici x dcn pipeline parallelism). Each "
                                  "stage runs its pipelined layers over pipeline_repeats x pipeline_microbatches + "
                                  "pipeline_stages - 1 iterations, stages - 1 of them on no microbatch (the "
                                  "bubble, the component pipeline_bubble); model FLOPs stay the ideal share.",
                          minimum=1),
    "pipeline_microbatches": _f(0, int, "Hardware: microbatches per step through the pipeline (0: pipeline_stages).",
                                minimum=0),
    "pipeline_repeats": _f(1, int, "Hardware: times each microbatch passes through the stages (a circular "
                                   "pipeline: pipelined layers / (stages x layers per stage)).", minimum=1),
    "pipeline_delay": _f(False, bool, "Hardware: activations move to the next stage one iteration late (MaxText's "
                                      "pipeline_delay_activation_forwarding), doubling the bubble: 2 x (stages - "
                                      "1) bubble iterations."),
    "pipeline_layers": _f((), Ints, "Hardware: 0-based decoder layers in the pipeline (empty: every decoder layer); "
                                    "the others run outside it, the stage axis acting as data parallelism."),
    "warmup_dead_last_layer": _f(False, bool, "Hardware, DSA warm-up train (indexer_stage='warmup'): the last "
                                              "decoder layer compiles outside a loop (MaxText's scan_layers=False, "
                                              "or a scanned group of one layer) and nothing reads its output (the "
                                              "warm-up has no LM loss), so XLA drops its work the indexer's loss "
                                              "does not need: all but its q/k/v projections and its indexer."),
    "warmup_cse_layers": _f((), Ints, "Hardware, DSA warm-up train: 0-based decoder layers each scanned alone (a "
                                      "MaxText scan group of one layer, which XLA unrolls): CSE merges their "
                                      "recompute of the q/k/v projections, the indexer's projections and its KL "
                                      "target with the forward (the indexer's scores are recomputed)."),
    "post_ffn_norm": _f(False, bool, "A norm on the FFN output before it joins the residual (Gemma): under remat "
                                     "the FFN down projection is recomputed too."),
    "num_devices": _f(0, int, "Hardware: devices the step's program is partitioned over (0: not given). With "
                              "batch_shards, the program's batch is padded to whole sequences per batch shard.",
                      minimum=0),
    "batch_shards": _f(0, int, "Hardware: ways the program splits the batch (the product of the mesh axes its batch "
                               "is sharded over: MaxText's activation_batch rule, data x fsdp x fsdp_transpose x "
                               "expert; 0: not given). The global batch per_device_batch_size x num_devices, "
                               "sequences, is padded to a whole number per shard, and each shard's devices split "
                               "its work: with 0.5 sequences per device on fsdp 8, every device runs one.",
                        minimum=0),
    "packed_kernel": _f("varlen", str, "Hardware for packed documents (segment_lengths): 'varlen' kernels run each "
                                       "document on its own (THD); 'row' the program runs every row whole, "
                                       "padding included, its attention over the full row (a model without "
                                       "segment masking, or masking inside a dense row).",
                        choices=("varlen", "row")),
    "outer_product_grads": _f("matmul", str, "Hardware, train: some backward 'matmuls' contract nothing (the "
                                              "gradient of a per-token weighting or state: the gated delta net's "
                                              "state reads, the indexer's head weighting, MoE one-hot routing). "
                                              "'matmul' counts them as issued (an unoptimized module); "
                                              "'elementwise': XLA's optimizer turns them into multiplies, as in "
                                              "MaxText's compiled step.", choices=("matmul", "elementwise")),
    "weighted_sum_impl": _f("einsum", str, "Hardware: per-token weighted sums over a few heads or streams (the "
                                           "indexer's head weighting, mHC's pre contraction over its G streams): "
                                           "'einsum' as matmuls (MaxText's einsums); 'elementwise' as a multiply "
                                           "and a sum, no matmul (transformers' eager code).",
                            choices=("einsum", "elementwise")),
    "remat_mtp": _f(True, bool, "MTP modules are rematerialized like decoder layers (MaxText's are not)."),
    # --- conventions --------------------------------------------------------------------------------------
    "convention": _f("exact", str, "'exact' (this library's count), or a bundle of the knobs below that "
                                   "reproduces 'maxtext' (MaxText 0.2.5), 'megatron' (Megatron-LM as the seed pull "
                                   "requests compute it: #6148's first commit for DSA, #3128 for windows), "
                                   "'megatron_main' (main at d98e8a6, 2026-08-22: no DSA, indexer or window terms), "
                                   "'megatron_pr6148' (#6148's head: top-k scaling at floor(mean length), the "
                                   "indexer by its gradient rule) or 'megatron_pr6753' (#6148's head with the DSA "
                                   "core in the absorbed form), or 'megatron_bridge' (NVIDIA-NeMo/Megatron-Bridge at "
                                   "067f987d, its hybrid path: main's rules with its sliding-window context and a "
                                   "packed batch's padding priced; models with Mamba layers or hybrid layer shapes "
                                   "only). Knobs set explicitly win.",
                     choices=("exact", "maxtext", "megatron", "megatron_main", "megatron_pr6148", "megatron_pr6753",
                              "megatron_bridge")),
    "convention_knobs_from": _f("exact", str, "Set by the library: the convention whose bundle filled the "
                                              "knobs, and its branch for the model's kind ('convention:branch', see "
                                              "CONVENTION_BRANCHES). When 'convention' or the kind differs (changed "
                                              "after the config was built), knobs still at that bundle's values are "
                                              "re-derived.",
                                choices=("exact", "maxtext", "megatron", "megatron_main", "megatron_pr6148",
                                         "megatron_pr6753", "megatron_bridge", "megatron_main:hybrid",
                                         "megatron_bridge:compressed", "megatron_bridge:hybrid")),
    "packed_tokens": _f("real", str, "Model FLOPs of a packed batch (segment_lengths): the token-linear terms over "
                                     "its 'real' tokens, or over every row slot, the 'padded' ones too "
                                     "(Megatron-Bridge); the attention pairs follow the documents either way.",
                        choices=("real", "padded")),
    "indexer_stage_in_model": _f(True, bool, "Model FLOPs follow indexer_stage. Peer functions price the sparse "
                                             "stage whatever the stage (False); hardware FLOPs always follow it."),
    "indexer_train_factor": _f(0, int, "Train multiplier of the indexer; 0 = the gradient rule "
                                       "(projections 2x, scoring 3x, or 1x with no indexer loss).",
                               minimum=0),
    "gate_projections": _f(True, bool, "Count Qwen3-Next's attention output gate (the q projection's second "
                                       "half; MaxText omits it)."),
    "shared_expert_gate_flops": _f(True, bool, "Count Qwen3-Next's shared-expert gate D -> 1 (MaxText and "
                                               "Megatron omit it)."),
    "ffn_all_moe": _f(False, bool, "Count the MoE FFN on every layer, the dense ones too (MaxText's function for "
                                   "blocks it has no dense/MoE rule for, e.g. envy)."),
    "convention_quirks": _f((), tuple, "Per-model exceptions to a convention's bundle, each 'convention:key=value', "
                                       "applied when that convention is active (set by the MaxText mapping where "
                                       "MaxText's function counts a decoder block its own way). Knobs set "
                                       "explicitly still win."),
    "not_priced": _f((), tuple, "What these figures leave out, each 'model: ...' (missing from every figure, "
                                "e.g. a vision encoder), 'hardware: ...' (an implementation choice hardware "
                                "FLOPs do not price yet) or 'traffic: ...' (what decode bytes do not read, e.g. a "
                                "file's quantized weights); set by the loaders, shown by every report."),
    "mhc_flops": _f(True, bool, "Count the mHC mixing (MaxText's function leaves it out for its deepseek block)."),
    "mhc_head_flops": _f(True, bool, "Count the mHC hyper head (mhc_hyper_head; MaxText's DeepSeek-V4 function "
                                     "leaves it out)."),
    "mhc_outer_flops": _f(False, bool, "Count mHC's elementwise outer product (G*D per token per module) as "
                                       "MaxText's DeepSeek-V4 function does."),
    "router_flops": _f(True, bool, "Count the MoE router D -> E (Megatron does not)."),
    "mtp_layer_numbering": _f("own", str, "MTP module k: 'own' numbers itself k for the index-reuse rule and "
                                          "copies the last decoder layer's mixer; 'after_decoder' (Megatron) is "
                                          "layer num_decoder_layers + k for both (on a hybrid its mixer follows "
                                          "the layer pattern).", choices=("own", "after_decoder")),
    "mtp_eh_proj": _f(True, bool, "Count the MTP eh projection 2D -> D."),
    "mtp_logits": _f(True, bool, "Count the MTP modules' output head."),
    "mtp_norm_flops": _f(False, bool, "Megatron: add its MTP norm term 3*D multiply-adds (6*D FLOPs) per token "
                                      "per MTP module."),
    "make_vocab_size_divisible_by": _f(1, int, "The output head is padded to a multiple of this x "
                                               "tensor_parallel_size: hardware FLOPs compute the padding.",
                                       minimum=1),
    # --- memory traffic of a decode step (maxflops.decode_traffic): bytes per element ----------------------------
    "weight_bytes": _f(2, int, "Bytes per weight element read from HBM (2: bfloat16; 1: int8/fp8).", minimum=1),
    "weight_bytes_rules": _f((), tuple, "Decode traffic: bytes per weight element by component group and layer, "
                                        "over weight_bytes: rules '<group>[@<layers>]=<bytes>' applied in order "
                                        "(groups attention, mlp, moe_routed, moe_shared, moe_router, logits, "
                                        "embeddings, other, or *; layers 0-based, '3' or '0-2' joined by '+'; "
                                        "bytes a decimal or a fraction with the scales included, e.g. "
                                        "'moe_routed=17/32' for MXFP4). The Hugging Face loader writes them from a "
                                        "file's quantization_config (see maxflops.weights)."),
    "tensor_parallel_size": _f(1, int, "Tensor parallel degree; only used to pad the vocab.", minimum=1),
    "padded_vocab_in_model_flops": _f(False, bool, "Megatron: model FLOPs use the padded vocab (divisor 128 "
                                                   "unless make_vocab_size_divisible_by is set)."),
}
for _family in FAMILIES:  # each family's keys, its section of the schema
    for _key, _field in _family.schema.items():
        if _key in SCHEMA:
            raise ValueError(f"config key {_key!r} is declared twice (the trunk and the {_family.name} family)")
        SCHEMA[_key] = _field

# What each convention bundle sets. A knob given explicitly in the same config wins over its bundle.
CONVENTIONS: dict[str, dict[str, Any]] = {
    "exact": {},
    "maxtext": {
        "causal_pairs": "half_square",
        "window_pairs": "maxtext",
        "dsa_pairs": "maxtext",
        "indexer_pairs": "half_square",
        "indexer_skip_within_topk": True,
        "indexer_every_layer": True,
        "indexer_train_factor": 3,
        "indexer_stage_in_model": False,
        "gdn_conv_taps": "full",
        "gdn_core_state_ops": 4,
        "gate_projections": False,
        "shared_expert_gate_flops": False,
        "mtp_eh_proj": False,
        "mtp_logits": False,
        "ffn_all_moe": False,
        "mhc_outer_flops": True,
        "compressed_pairs": "maxtext",
    },
    "megatron": {
        "causal_pairs": "half_square",
        "window_pairs": "megatron",
        "window_scope": "all_layers",
        "dsa_pairs": "megatron",
        "indexer_pairs": "half_square",
        "indexer_train_factor": 3,
        "indexer_stage_in_model": False,
        "gdn_core_state_ops": 4,
        "gdn_conv_taps": "full",
        "shared_expert_gate_flops": False,
        "mtp_layer_numbering": "after_decoder",
        "router_flops": False,
        "indexer_head_reduction": False,
        "mtp_norm_flops": True,
        "mla_norm_flops": True,
        "padded_vocab_in_model_flops": True,
    },
}
# Later Megatron-LM revisions, each the seed bundle with what that revision changed: main has neither windows nor
# DSA (DSA layers count as dense MLA, no indexer); #6148's head and #6753 (both on dev) have no window term, scale
# the dense pairs at floor(mean length) and price the indexer by its gradient rule; #6753 prices the core absorbed.
_NO_WINDOWS = {"window_pairs": "global", "window_scope": "pattern"}
# Megatron's hybrid path prices a Mamba layer with d_in = 2 x hidden, 7 FLOPs per (token, channel, state) for the
# scan and no conv (training.py's mamba_layer_flops, unchanged since 2025-03)
CONVENTIONS["megatron"].update({"mamba_scan_flops": 7, "mamba_inner_width": "twice_hidden", "ssm_conv_flops": False})
# main also prices gated-delta-product layers (its gated_delta_product_layer_flops): the core at (4 M + 3) per state
# element, the conv at every tap (gdn_conv_taps above)
CONVENTIONS["megatron_main"] = {**CONVENTIONS["megatron"], **_NO_WINDOWS, "dsa_pairs": "global", "indexer_flops": False,
                                "gdp_core_flops": "megatron"}
CONVENTIONS["megatron_pr6148"] = {**CONVENTIONS["megatron"], **_NO_WINDOWS, "dsa_pairs": "megatron_floor",
                                  "indexer_train_factor": 0}
CONVENTIONS["megatron_pr6753"] = {**CONVENTIONS["megatron_pr6148"], "dsa_core_form": "absorbed"}
# Megatron-Bridge: main's rules, plus its sliding-window context, the padding of a packed batch, DSA's absorbed sparse
# core and its indexer (by the reuse rule, MTP layers numbering themselves from 1 and copying the last layer's mixer)
CONVENTIONS["megatron_bridge"] = {**CONVENTIONS["megatron_main"], "window_pairs": "bridge", "packed_tokens": "padded",
                                  "dsa_pairs": "bridge", "dsa_core_form": "absorbed", "indexer_flops": True,
                                  "indexer_pairs": "bridge", "indexer_head_reduction": True,
                                  "indexer_train_factor": 0, "mtp_layer_numbering": "own",
                                  "kda_output_gate": "full", "kda_core_state_ops": 4, "indexer_kl_flops": True}

# Where a peer's function takes a branch of its own for a kind of model, the knobs that branch sets on top of the
# convention's bundle (a model's convention_quirks and explicit keys still win). The kinds (``branch_of``):
# 'compressed' (attention_type='compressed') and 'hybrid' (hybrid layer shapes: ffn_layer_pattern).
# - Megatron-Bridge prices DeepSeek-V4's compressed attention by its dsv4_hybrid rule: a flat window and its own
#   top-k and block pairs (compressed_pairs='bridge'), the q latent's and the KV entry's norms, the indexer over the
#   full L x L/m rectangle (indexer_pairs='bridge') without its head weighting and trained 3x whatever the loss, and
#   no mHC.
# - Megatron-LM's and Megatron-Bridge's hybrid path (hybrid_flops) prices an MTP module's layers (the hybrid pattern
#   after '/', once per depth) and its output head, but not its eh projection or norms (their GPT path does).
_HYBRID_MTP = {"mtp_eh_proj": False, "mtp_norm_flops": False}
CONVENTION_BRANCHES = {
    "megatron_bridge": {"compressed": {"compressed_pairs": "bridge", "compressed_norm_flops": True,
                                       "indexer_head_reduction": False, "indexer_train_factor": 3,
                                       "mhc_flops": False, "mhc_head_flops": False},
                        "hybrid": _HYBRID_MTP},
    "megatron_main": {"hybrid": _HYBRID_MTP},
}


def branch_of(convention: str, values: Mapping[str, Any]) -> str:
    """The branch ``convention`` takes for this kind of model (see CONVENTION_BRANCHES): '' for none."""
    kind = "compressed" if values.get("attention_type") == "compressed" else \
        "hybrid" if values.get("ffn_layer_pattern") else ""
    return kind if kind in CONVENTION_BRANCHES.get(convention, {}) else ""


def bundle(convention: str, branch: str) -> dict[str, Any]:
    """The knobs a convention sets for a model of this kind (``branch_of``): its bundle and its branch (if any)."""
    knobs = CONVENTION_BRANCHES.get(convention, {}).get(branch)
    return {**CONVENTIONS[convention], **knobs} if knobs else CONVENTIONS[convention]


CONFIG_DIR_ENV = "MAXFLOPS_CONFIG_DIR"


def _closest(key: str, names=None, cutoff: float = 0.5) -> str:
    match = difflib.get_close_matches(key, SCHEMA if names is None else names, n=1, cutoff=cutoff)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _coerce(key: str, value: Any) -> Any:
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


def _check_value(key: str, value: Any) -> None:
    field = SCHEMA[key]
    if field.choices and field.kind is tuple:
        for item in value:
            if item not in field.choices:
                said = CHOICE_HINTS.get(key, {}).get(item)
                hint = f" ({said})" if said else _closest(item, field.choices)
                raise ValueError(f"config key {key!r}: {item!r} (in {list(value)!r}) is not one of "
                                 f"{', '.join(map(repr, field.choices))}{hint}")
    elif field.choices and value not in field.choices:
        raise ValueError(f"config key {key!r}: {value!r} is not one of {', '.join(map(repr, field.choices))}")
    if field.minimum is not None and value < field.minimum:
        what = "must be positive" if field.minimum == 1 else f"must be >= {field.minimum}"
        raise ValueError(f"config key {key!r}: {what}, got {value!r}")
    if field.kind in (int, float) and not isinstance(value, bool) and abs(value) > INT_MAX:
        raise ValueError(f"config key {key!r}: must be at most 2**62 (the int64 range kernels index with), got "
                         f"{_short(value)}")


def _short(value) -> str:
    """A number as an error shows it: a very long integer by its size, not its digits."""
    text = repr(value)
    return text if len(text) <= 24 else f"a {len(text.lstrip('-'))}-digit number (about 2**{abs(value).bit_length() - 1})"


def _check_relations(c: Mapping[str, Any]) -> None:
    """Checks that involve more than one key."""

    def err(key, msg):
        raise ValueError(f"config key {key!r}: {msg}")

    if c["weight_bytes_rules"]:
        from .weights import parse_rule

        for rule in c["weight_bytes_rules"]:
            try:
                parse_rule(rule)
            except ValueError as e:
                err("weight_bytes_rules", str(e))
    if c["num_query_heads"] % c["num_kv_heads"] and c["attention_type"] != "mla":  # (MLA never reads kv heads)
        err("num_kv_heads", f"{c['num_kv_heads']} does not divide num_query_heads={c['num_query_heads']}")
    if c["global_num_kv_heads"] and c["num_query_heads"] % c["global_num_kv_heads"]:
        err("global_num_kv_heads", f"{c['global_num_kv_heads']} does not divide num_query_heads="
                                   f"{c['num_query_heads']}")
    if c["num_experts_per_tok"] > c["num_experts"] + c["zero_experts"]:
        err("num_experts_per_tok", f"{c['num_experts_per_tok']} exceeds num_experts={c['num_experts']}"
                                   + (f" + zero_experts={c['zero_experts']}" if c["zero_experts"] else ""))
    if c["zero_experts"]:
        if c["num_experts"] < 2:
            err("zero_experts", f"{c['zero_experts']} without routed experts (num_experts={c['num_experts']})")
        if not (c["zero_expert_share"] == -1 or 0 <= c["zero_expert_share"] <= 1):
            err("zero_expert_share", f"{c['zero_expert_share']!r}: a share of the slots in [0, 1], or -1 (uniform)")
        if c["moe_impl"] == "capacity":
            err("moe_impl", "'capacity' with zero_experts: a dispatch with identity experts is not modelled")
        if c["convention"] != "exact":
            err("convention", f"{c['convention']!r} has no rule for zero-computation experts (zero_experts="
                              f"{c['zero_experts']}); use 'exact'")
    if bool(c["num_devices"]) != bool(c["batch_shards"]):
        err("batch_shards" if c["num_devices"] else "num_devices", "give num_devices and batch_shards together (got "
            f"num_devices={c['num_devices']}, batch_shards={c['batch_shards']})")
    if c["batch_shards"] and c["num_devices"] % c["batch_shards"]:
        err("batch_shards", f"{c['batch_shards']} does not divide num_devices={c['num_devices']}")
    if not 1 <= len(c["mlp_activations"]) <= 2:
        err("mlp_activations", f"{list(c['mlp_activations'])!r}: give one activation (plain FFN) or two "
                               "(gated FFN)")
    pattern = c["attention_layer_pattern"]
    if not pattern:
        err("attention_layer_pattern", "'' is empty; use e.g. 'G'")
    for key in ("attention_layer_pattern", "mtp_layer_pattern", "parallel_layer_pattern"):
        for ch in c[key]:
            bare = ch == NO_MIXER_LETTER and (key != "mtp_layer_pattern" or c["mtp_ffn_layer_pattern"])
            if ch not in LETTERS and not bare:
                err(key, f"{c[key]!r} has unknown letter {ch!r}; letters are "
                         + ", ".join(f"{k} ({fam.letters[k]})" for k, fam in LETTERS.items())
                         + (f", {NO_MIXER_LETTER} (no mixer)" if key != "mtp_layer_pattern" else ""))
    _check_layer_shapes(c, err)
    n_layers, n_mtp = c["num_decoder_layers"], c["mtp_num_layers"]
    # the letters in use: the decoder's (a cycle of any length) and the MTP modules' (built in train mode, checked
    # in every mode so that one config serves all three)
    used = pattern[:n_layers] if len(pattern) >= n_layers else pattern
    if n_mtp and c["mtp_ffn_layer_pattern"]:  # every module runs every layer of the pattern
        used += c["mtp_layer_pattern"].replace(NO_MIXER_LETTER, "")
    elif n_mtp:
        used += c["mtp_layer_pattern"][:n_mtp] if c["mtp_layer_pattern"] else ""
        if not c["mtp_layer_pattern"] and c["mtp_layer_numbering"] == "after_decoder":
            used += "".join(pattern[(n_layers + k) % len(pattern)] for k in range(min(n_mtp, len(pattern))))
    mtp_letters = used[len(pattern[:n_layers] if len(pattern) >= n_layers else pattern):]

    def err_mtp(key, msg):  # a family's complaint about the MTP modules' letters names their key
        err("mtp_layer_pattern" if key == "attention_layer_pattern" and c["mtp_layer_pattern"] else key, msg)

    parallel = c["parallel_layer_pattern"]
    parallel_used = (parallel[:n_layers] if len(parallel) >= n_layers else parallel).replace(NO_MIXER_LETTER, "")
    for family in FAMILIES:  # each family's own checks, on the letters in use
        if family.conventions and c["convention"] not in family.conventions:  # a peer with no rule for its layers
            present = [ch for ch in family.letters if ch in used or ch in parallel_used]
            if present:
                where = "attention_layer_pattern" if present[0] in used else "parallel_layer_pattern"
                err("convention", f"{c['convention']!r} has no rule for {next(iter(family.mixers.values()))} "
                                  f"({present[0]!r} layers in {where}={c[where]!r}); use "
                                  + " or ".join(repr(name) for name in family.conventions))
        if family.check is not None:
            family.check(c, used[:len(used) - len(mtp_letters)].replace(NO_MIXER_LETTER, ""), err)
            if parallel_used:
                family.check(c, parallel_used, lambda key, msg: err(
                    "parallel_layer_pattern" if key == "attention_layer_pattern" else key, msg))
            if mtp_letters:
                family.check(c, mtp_letters, err_mtp)
    pattern = used
    if c["mhc_hyper_head"] and c["mhc_expansion_rate"] < 2:
        err("mhc_hyper_head", "True needs mHC streams (mhc_expansion_rate >= 2), got mhc_expansion_rate="
                              f"{c['mhc_expansion_rate']}")
    if c["num_kv_shared_layers"] >= c["num_decoder_layers"]:
        err("num_kv_shared_layers", f"{c['num_kv_shared_layers']} leaves no layer to share keys and values from "
                                    f"(num_decoder_layers={c['num_decoder_layers']})")
    for key in ("engram_layers", "warmup_cse_layers", "pipeline_layers"):
        for layer in c[key]:
            if layer >= c["num_decoder_layers"]:
                err(key, f"layer {layer} is past the last decoder layer ({c['num_decoder_layers'] - 1})")
    for key in ("vision_encoder_stages", "vision_projector"):
        for stage in c[key]:
            parts = stage.split(":")
            if len(parts) != 3 or not all(x.isdigit() and int(x) > 0 for x in parts):
                err(key, f"{stage!r} is not 'tokens:in:out' with positive integers")
    n = c["num_decoder_layers"]
    if c["remat_skip_layers"] > n:
        err("remat_skip_layers", f"{c['remat_skip_layers']} exceeds num_decoder_layers={n}")
    if c["remat_block_layers"] > max(n - c["remat_skip_layers"], 1):
        err("remat_block_layers", f"{c['remat_block_layers']} exceeds the {n - c['remat_skip_layers']} rematerialized "
                                  f"layers (num_decoder_layers={n}, remat_skip_layers={c['remat_skip_layers']})")
    if c["attention_output_gate"] and c["attention_type"] != "global":
        err("attention_output_gate", f"True: the output gate is a feature of 'global' attention, not of "
                                     f"attention_type={c['attention_type']!r}")
    if c["mode"] != "train" and c["convention"] != "exact":
        err("convention", f"{c['convention']!r} reproduces that project's training FLOPs function; its formulas "
                          f"do not define {c['mode']} (use convention='exact' for mode={c['mode']!r})")
    if c["convention"] == "megatron_bridge":
        refused = bridge_refusal(c)
        if refused:
            err(*refused)
    if c["mode"] == "decode" and not c["causal"]:
        err("causal", "decode needs causal attention")
    check_step(c)


# The step's keys: no relation but check_step's involves them, and no plan reads them (a sweep over them re-checks
# only these; see maxflops.resolve)
STEP_KEYS = frozenset({"max_target_length", "per_device_batch_size", "decode_kv_length", "gradient_accumulation_steps"})


def check_step(c: Mapping[str, Any]) -> None:
    """The relations of the step's keys (STEP_KEYS): the batch a whole number of tokens, a fraction of a sequence
    with denominator up to 2^20, whole in decode."""
    def err(key, msg):
        raise ValueError(f"config key {key!r}: {msg}")

    b = c["per_device_batch_size"]
    if b <= 0:
        err("per_device_batch_size", f"must be positive, got {b!r}")
    if c["num_devices"] and (Fraction(b) * c["num_devices"]).denominator != 1:
        err("per_device_batch_size", f"{b!r} x num_devices={c['num_devices']} is not a whole number of sequences")
    if type(b) is int or (type(b) is float and b.is_integer()):  # whole sequences: every rule below holds
        return
    if c["mode"] == "decode" and not float(b).is_integer():
        err("per_device_batch_size", f"{b!r}: decode adds one token per sequence, so it must be a whole number")
    exact_batch = Fraction(b).limit_denominator(1 << 20)
    if exact_batch == 0 or abs(exact_batch - Fraction(b)) > Fraction(b) / 10**9:
        err("per_device_batch_size", f"{b!r} is not a fraction of a sequence with denominator up to 2^20 (the "
                                     "batch is counted exactly as such a fraction)")
    if c["mode"] != "decode" and (exact_batch * c["max_target_length"]).denominator != 1:
        err("per_device_batch_size", f"{b!r} x max_target_length={c['max_target_length']} must be a whole number "
                                     "of tokens")


NO_MIXER_LETTER = "-"  # attention_layer_pattern: a layer without a mixer (its FFN only)


def convention_defined(c, convention: str | None = None) -> bool:
    """Whether ``convention`` (default: the config's own) has a rule for every layer of this model: Megatron-Bridge's
    (``bridge_refusal``), and each family's list of the conventions that price its layers (Kimi delta attention:
    exact and Megatron-Bridge only). A config under a convention that is not defined is refused by its check."""
    convention = convention or c["convention"]
    if convention == "megatron_bridge" and bridge_refusal(c):
        return False
    if c["zero_experts"] and convention != "exact":  # no peer prices zero-computation experts
        return False
    letters = set(c["attention_layer_pattern"]) | set(c["mtp_layer_pattern"]) | set(c["parallel_layer_pattern"])
    return all(not LETTERS[ch].conventions or convention in LETTERS[ch].conventions for ch in letters if ch in LETTERS)


def bridge_refusal(c) -> tuple | None:
    """(key, why) where Megatron-Bridge's function has no rule for this model, else None. Its DeepSeek-V4 rule (the
    dsv4_hybrid variant) knows compression ratios 4 (with the indexer) and 128 only, every other layer a window layer,
    one KV head, the q latent and the grouped low-rank output."""
    if c["attention_type"] != "compressed":
        return None
    letters = set(c["attention_layer_pattern"]) | set(c["mtp_layer_pattern"])
    rule = "under 'megatron_bridge': its DeepSeek-V4 rule (the dsv4_hybrid variant)"
    if "G" in letters:
        return "attention_layer_pattern", f"'G' layers with attention_type='compressed' {rule} has none"
    if "S" in letters and c["csa_compress_ratio"] != 4:
        return "csa_compress_ratio", f"{c['csa_compress_ratio']} {rule} prices ratio 4 only"
    if "S" in letters and not c["use_sparse_indexer"]:
        return "use_sparse_indexer", f"False {rule} always runs the indexer on its ratio-4 layers"
    if "H" in letters and c["hca_compress_ratio"] != 128:
        return "hca_compress_ratio", f"{c['hca_compress_ratio']} {rule} prices ratio 128 only"
    for key, ok in (("num_kv_heads", c["num_kv_heads"] == 1), ("q_lora_rank", c["q_lora_rank"] > 0),
                    ("o_groups", c["o_groups"] > 0)):
        if not ok:
            return key, f"{c[key]} {rule} has one KV head, the q latent and a grouped output"
    return None


FFN_LETTERS = {"F": "the dense FFN", "E": "the MoE FFN", "-": "no FFN (a mixer-only layer)"}


def _check_layer_shapes(c, err) -> None:
    """ffn_layer_pattern's letters, and that every layer has a mixer or an FFN (or both)."""
    ffn, mixers = c["ffn_layer_pattern"], c["attention_layer_pattern"]
    parallel = c["parallel_layer_pattern"]
    if parallel:
        if c["mtp_num_layers"]:
            err("mtp_num_layers", f"{c['mtp_num_layers']}: MTP modules of a model with parallel_layer_pattern are not "
                                  "modelled")
        for layer in range(c["num_decoder_layers"]):
            if parallel[layer % len(parallel)] != NO_MIXER_LETTER and mixers[layer % len(mixers)] == NO_MIXER_LETTER:
                err("parallel_layer_pattern", f"layer {layer} has a parallel mixer but no first mixer "
                                              f"(attention_layer_pattern={mixers!r}): put it there")
    for ch in ffn:
        if ch not in FFN_LETTERS:
            err("ffn_layer_pattern", f"{ffn!r} has unknown letter {ch!r}; letters are "
                                     + ", ".join(f"{k} ({v})" for k, v in FFN_LETTERS.items()))
    if not ffn:
        if c["mtp_ffn_layer_pattern"]:
            err("mtp_ffn_layer_pattern", f"{c['mtp_ffn_layer_pattern']!r}: MTP layer shapes belong to a model with "
                                         "ffn_layer_pattern (hybrid layer shapes)")
        return
    n = c["num_decoder_layers"]
    if "E" in ffn[:n] and c["num_experts"] < 2:
        err("ffn_layer_pattern", f"{ffn!r} has MoE layers ('E') but num_experts={c['num_experts']}")
    for key, default in (("first_num_dense_layers", 0), ("interleave_moe_layer_step", 1)):
        if c[key] != default:
            err(key, f"{c[key]!r}: ffn_layer_pattern={ffn!r} says each layer's FFN (leave {key} at {default!r})")
    for layer in range(n):
        if mixers[layer % len(mixers)] == NO_MIXER_LETTER and ffn[layer % len(ffn)] == "-":
            err("ffn_layer_pattern", f"layer {layer} has neither a mixer (attention_layer_pattern={mixers!r}) nor an "
                                     f"FFN (ffn_layer_pattern={ffn!r})")
    mtp_mixers, mtp_ffns = c["mtp_layer_pattern"], c["mtp_ffn_layer_pattern"]
    if c["mtp_num_layers"] and not mtp_ffns:
        err("mtp_ffn_layer_pattern", f"'' with mtp_num_layers={c['mtp_num_layers']} and ffn_layer_pattern={ffn!r}: give "
                                     "the layers of an MTP module of a hybrid model (e.g. 'E' beside "
                                     "mtp_layer_pattern='G-'... of the same length)")
    if mtp_ffns:
        for ch in mtp_ffns:
            if ch not in FFN_LETTERS:
                err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} has unknown letter {ch!r}; letters are "
                                             + ", ".join(f"{k} ({v})" for k, v in FFN_LETTERS.items()))
        if len(mtp_mixers) != len(mtp_ffns):
            err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} and mtp_layer_pattern={mtp_mixers!r}: one letter each per "
                                         "layer of an MTP module (the same length)")
        for j, (m, f) in enumerate(zip(mtp_mixers, mtp_ffns)):
            if m == NO_MIXER_LETTER and f == "-":
                err("mtp_ffn_layer_pattern", f"an MTP module's layer {j} has neither a mixer (mtp_layer_pattern="
                                             f"{mtp_mixers!r}) nor an FFN ({mtp_ffns!r})")
        if "E" in mtp_ffns and c["num_experts"] < 2:
            err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} has MoE layers ('E') but num_experts={c['num_experts']}")


_DEFAULTS = {k: f.default for k, f in SCHEMA.items()}


def resolve(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults + convention bundle + overrides -> validated plain dict. Raises ValueError on bad input."""
    values = dict(_DEFAULTS)
    given = {}
    for key, value in overrides.items():
        if key not in SCHEMA:
            raise ValueError(f"unknown config key {key!r}{_closest(key)}")
        given[key] = _coerce(key, value)
    convention = given.get("convention", values["convention"])
    _check_value("convention", convention)
    branch = branch_of(convention, {**values, **given})
    values.update(bundle(convention, branch))
    values.update(quirks(given.get("convention_quirks", ()), convention))
    values.update(given)
    values["convention_knobs_from"] = f"{convention}:{branch}" if branch else convention
    for key, value in values.items():
        if value is not _DEFAULTS[key]:  # (every default passes _check_value: tests/test_config.py)
            _check_value(key, value)
    _check_relations(values)
    return values


def quirks(entries, convention: str) -> dict[str, Any]:
    """The knobs that ``convention_quirks`` entries ('convention:key=value') set under ``convention``."""
    out = {}
    for entry in entries:
        conv, sep, rest = entry.partition(":") if isinstance(entry, str) else ("", "", "")
        key, eq, value = rest.partition("=")
        if not (sep and eq) or conv not in CONVENTIONS or key not in SCHEMA or key in _NOT_KNOBS:
            raise ValueError(f"config key 'convention_quirks': {entry!r} is not 'convention:key=value' with a "
                             f"convention of {', '.join(CONVENTIONS)} and a knob of the schema")
        try:  # every entry's value is checked, whichever convention it belongs to
            coerced = _coerce(key, value)
            _check_value(key, coerced)
        except ValueError as e:
            raise ValueError(f"config key 'convention_quirks': entry {entry!r}: {e}") from None
        if conv == convention:
            out[key] = coerced
    return out


_NOT_KNOBS = frozenset({"convention", "convention_knobs_from", "convention_quirks"})

# The implementation knobs under which hardware FLOPs can fall below model FLOPs (every other knob only adds work);
# the README lists each (tests/test_docs.py checks it), the property tests exempt exactly these.
HARDWARE_BELOW_MODEL = {
    "capacity_factor": "below 1 with moe_impl='capacity' (tokens are dropped)",
    "mla_absorbed": "True (the kv latent may be narrower than the heads)",
    "outer_product_grads": "'elementwise' (train)",
    "weighted_sum_impl": "'elementwise'",
    "indexer_skip_short": "True",
    "packed_kernel": "'row' on chunked layers, documents that do not fill whole rows",
    "warmup_dead_last_layer": "True (the DSA warm-up drops the last layer's work its loss does not read)",
    "dead_compressor": "either value where no sequence of the step reaches a compressed layer's ratio (its compressor "
                       "runs forward only, or not at all, while the model counts it)",
}

assert set(SCHEMA["convention_knobs_from"].choices) == set(CONVENTIONS) | {
    f"{conv}:{branch}" for conv, branches in CONVENTION_BRANCHES.items() for branch in branches}

# Knobs that say how a peer reports, never what a program runs: every key a convention bundle sets, and the
# reporting-only knobs MaxText's per-model quirks use. Hardware FLOPs read each at its default (resolve.hardware_view).
REPORTING_KNOBS = frozenset(k for knobs in CONVENTIONS.values() for k in knobs) | frozenset(
    k for branches in CONVENTION_BRANCHES.values() for knobs in branches.values() for k in knobs) | frozenset(
    {"mhc_flops", "mhc_head_flops", "indexer_proj_split", "mamba_scan_flops", "mamba1_scan_flops"})


def apply_overrides(resolved: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config with some keys replaced (not 'convention'), validated. Overrides of the step's keys alone
    (STEP_KEYS) re-check only their relations (``check_step``): the rest of a resolved config is unchanged."""
    values = dict(resolved)
    for key, value in overrides.items():
        if key not in SCHEMA:
            raise ValueError(f"unknown config key {key!r}{_closest(key)}")
        values[key] = _coerce(key, value)
        _check_value(key, values[key])
    if STEP_KEYS.issuperset(overrides):
        check_step(values)
    else:
        _check_relations(values)
    return values


class InertKeyWarning(UserWarning):
    """A key set explicitly that no figure of this model reads (a window on a model with no windowed layers)."""


def _letters(c: Mapping[str, Any]) -> str:
    return c["attention_layer_pattern"] + c["mtp_layer_pattern"] + c["parallel_layer_pattern"]


# key -> (does this resolved config read it?, why not). A key given explicitly (a Python override, a CLI flag, a key
# of an ml_collections file) that the model does not read is said (InertKeyWarning); keys a loaded file carries are
# not overrides (a Hugging Face or MaxText file sets what its model has).
_MOE_KEYS = ("shared_experts", "moe_mlp_dim", "num_experts_per_tok")
_MLA_KEYS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_INDEX_KEYS = ("index_topk", "index_n_heads", "index_head_dim", "index_topk_freq", "index_skip_offset")
READ_WHEN: dict = {
    "sliding_window_size": (lambda c: any(x in _letters(c) for x in "LSH"),
                            "no layer of attention_layer_pattern (or the MTP / parallel patterns) is windowed ('L', or "
                            "compressed 'S' / 'H')"),
    "chunk_attn_window_size": (lambda c: "C" in _letters(c), "no layer is chunked ('C' in attention_layer_pattern)"),
    **{k: (lambda c: c["num_experts"] > 1, "the model has no routed experts (num_experts = 1)") for k in _MOE_KEYS},
    **{k: (lambda c: c["attention_type"] == "mla", "attention_type is not 'mla'") for k in _MLA_KEYS},
    "q_lora_rank": (lambda c: c["attention_type"] == "mla" or any(x in _letters(c) for x in "SH"),
                    "attention_type is not 'mla' and no layer is compressed ('S' / 'H')"),
    "dead_compressor": (lambda c: any(x in _letters(c) for x in "SH"), "no layer is compressed ('S' / 'H')"),
    **{k: (lambda c: c["use_sparse_indexer"] or "S" in _letters(c),
           "the model runs no indexer (use_sparse_indexer is false and no layer is 'S')") for k in _INDEX_KEYS},
}


def say_inert(c: Mapping[str, Any], keys) -> None:
    """Warn (InertKeyWarning) for each of ``keys``, set explicitly, that the resolved config ``c`` does not read."""
    for key in keys:
        rule = READ_WHEN.get(key)
        if rule is not None and not rule[0](c):
            import warnings

            warnings.warn(f"config key {key!r} = {c[key]!r} changes nothing here: {rule[1]}", InertKeyWarning,
                          stacklevel=4)


def model_config(**overrides):
    """A locked ConfigDict: schema defaults, then the convention bundle, then ``overrides``; validated. A key given
    that the model does not read is said (``InertKeyWarning``)."""
    return config_from(overrides, given=overrides)


def config_from(values: Mapping[str, Any], given=()):
    """``model_config`` of ``values`` that says only the inert keys among ``given``: for loaders, whose other keys
    are a file's, not a user's choice."""
    from ml_collections import config_dict

    resolved = resolve(values)
    say_inert(resolved, given)
    cfg = config_dict.ConfigDict()
    # Every resolved value is plain (int, float, str, bool, tuple; no dict, no FieldReference): what ConfigDict's
    # own filling stores, key by key, without its per-key dir() call (most of a ConfigDict's construction time).
    # The storage is a Fields: it keeps the config's cache key until its next write (maxflops.resolve.config_key)
    super(config_dict.ConfigDict, cfg).__setattr__("_fields", Fields(resolved))
    super(config_dict.ConfigDict, cfg).__setattr__("_locked", True)  # lock(): no value is a ConfigDict to lock
    return cfg


class Fields(dict):
    """The storage of a ConfigDict that ``model_config`` builds: a dict that remembers the config's cache key
    (``maxflops.resolve.config_key``) until its next write, so that a config counted again, unchanged, is not read
    key by key. ConfigDict writes its storage through ``__setitem__`` and ``__delitem__``; every other mutating
    method forgets the key too."""

    __slots__ = ("key",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key = None

    def __setitem__(self, k, v):
        self.key = None
        super().__setitem__(k, v)

    def __delitem__(self, k):
        self.key = None
        super().__delitem__(k)

    def _forget(method):  # noqa: N805 - wraps the other mutating dict methods
        def forgetting(self, *args, **kwargs):
            self.key = None
            return method(self, *args, **kwargs)
        forgetting.__name__ = method.__name__
        return forgetting

    update = _forget(dict.update)
    pop = _forget(dict.pop)
    popitem = _forget(dict.popitem)
    clear = _forget(dict.clear)
    setdefault = _forget(dict.setdefault)
    __ior__ = _forget(dict.__ior__)
    del _forget

    def __reduce__(self):  # a copy or unpickled config is a plain dict's worth of values; the key is recomputed
        return (Fields, (dict(self),))


def config_dir() -> pathlib.Path:
    """The built-in model configs: $MAXFLOPS_CONFIG_DIR, else the repository's configs/ (a source checkout or an
    editable install), else the copy a wheel installs as maxflops/configs."""
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent
    source = here.parent / "configs"
    return source if source.is_dir() else here / "configs"


def available_models() -> list[str]:
    d = config_dir()
    return sorted(p.stem for p in d.glob("*.py") if not p.name.startswith("_")) if d.is_dir() else []


def model_path(name: str) -> pathlib.Path:
    """The config file of a built-in model, or a ValueError that suggests the closest name."""
    path = config_dir() / f"{name}.py"
    if not path.is_file():
        names = available_models()
        match = difflib.get_close_matches(name, names, n=1, cutoff=0.4)
        hint = f" (did you mean {match[0]!r}?)" if match else ""
        raise ValueError(f"unknown model {name!r}{hint}; known: {', '.join(names)}")
    return path


def as_dict(config: Any) -> dict[str, Any]:
    """Any ConfigDict, mapping or attribute object with schema keys -> plain dict (no validation)."""
    if hasattr(config, "to_dict"):
        return config.to_dict()
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "__dict__"):  # an attribute object: every attribute is a key (unknown ones are errors)
        return {k: v for k, v in vars(config).items() if not k.startswith("_")}
    raise ValueError(f"cannot read a config from a {type(config).__name__}: pass a ConfigDict, a mapping, or an "
                     "object whose attributes are the keys")


def _explicit(values: Mapping[str, Any], given=(), previous_quirks=None) -> dict[str, Any]:
    """The keys to resolve again: a built config carries every key, its convention knobs filled from the bundle
    of ``convention_knobs_from`` and its quirks (``previous_quirks``, when an override replaces them). When
    ``convention`` or the quirks have changed since (a ``--config.convention=...`` flag, an override), knobs still
    at the old bundle's value are dropped, so that the new bundle fills them; knobs set to anything else, and the
    keys in ``given``, stay."""
    out = dict(values)
    new = out.get("convention", "exact")
    old, _, old_branch = out.pop("convention_knobs_from", new).partition(":")
    entries = _coerce("convention_quirks", out.get("convention_quirks", ()))
    old_entries = entries if previous_quirks is None else _coerce("convention_quirks", previous_quirks)
    if (old != new or old_entries != entries or branch_of(old, out) != old_branch) and old in CONVENTIONS:
        before = {**bundle(old, old_branch), **quirks(old_entries, old)}
        after = {**(bundle(new, branch_of(new, out)) if new in CONVENTIONS else {}),
                 **(quirks(entries, new) if new in CONVENTIONS else {})}
        for key in before.keys() | after.keys():
            if key in out and key not in given and out[key] == before.get(key, SCHEMA[key].default):
                del out[key]
    return out


def validate(config: Any, given=()) -> dict[str, Any]:
    """Validate any config-like object and return the resolved plain dict (convention knobs applied).
    ``given``: keys set explicitly (e.g. command-line flags), kept even when the convention changed."""
    c = resolve(_explicit(as_dict(config), given=given))
    if given:
        say_inert(c, given)
    return c

