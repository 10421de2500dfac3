"""What MaxText's config keys mean for FLOPs: the table behind the MaxText mapping (``mapping``), so behind
``maxflops.maxtext.from_maxtext`` and the model YAML loader.

Every key of MaxText 0.2.5's resolved config object (``pyconfig.initialize``: 856 keys) is in exactly one of:

- ``MODEL_KEYS``: read to build the model (shapes, layer pattern, features, the step);
- ``IMPLEMENTATION_KEYS``: the code path a program runs; they set maxflops' hardware knobs;
- ``UNPRICED``: a feature that changes FLOPs and that maxflops does not price: an error unless it is off;
- ``NO_EFFECT``: no matmul of a train, prefill or decode step depends on it (optimizer, data, checkpointing,
  sharding and mesh, logging and profiling, kernels' memory layouts, dtypes and quantization, RoPE, norms,
  routing details that keep the top-k count, inference serving, eval, audio and vision towers' settings that
  are not read by any count).

``BASE`` is MaxText 0.2.5's ``base.yml`` value of every key this module reads: a mapping or a YAML that does not
set a key gets this value, as ``pyconfig`` would give it. ``tests/peers/test_maxtext_real.py`` checks that this table
classifies every key of the committed MaxText object exactly once and that ``BASE`` equals it.
"""

from __future__ import annotations

MAXTEXT_VERSION = "0.2.5"

# base.yml's logical_axis_rules (the mesh axes each logical array axis is sharded over): a program under other rules
# may leave a matmul replicated over a mesh axis (maxflops.loaders.maxtext.program notes it in not_priced)
LOGICAL_AXIS_RULES: list = [
    ['circular_repeats', []],
    ['activation_embed_and_logits_batch', ['data', 'stage', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_embed_and_logits_batch_sequence', [
        'data', 'stage', 'fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['activation_vocab', ['tensor', 'tensor_sequence']],
    ['activation_vocab', ['tensor']],
    ['activation_vocab', 'tensor_sequence'],
    ['vocab', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['embed_vocab', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['activation_batch_attn', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_input_length_attn', ['tensor_sequence', 'context']],
    ['activation_heads', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['activation_kv_heads', ['tensor', 'tensor_sequence']],
    ['activation_length_attn', ['context', 'context_usp_ulysses']],
    ['activation_q_length', ['context', 'context_usp_ulysses']],
    ['activation_kv_length', []],
    ['activation_embed_attn', ['tensor']],
    ['activation_kv', ['tensor', 'tensor_sequence']],
    ['activation_kv_batch', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_kv_head_dim', ['tensor', 'tensor_sequence']],
    ['heads', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['q_heads', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['kv_heads', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['qkv', []],
    ['kv', []],
    ['kv_head_dim', []],
    ['q_lora', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['q_lora', ['fsdp', 'context', 'context_usp_ulysses', 'expert']],
    ['q_lora_up_proj', []],
    ['kv_lora', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['kv_lora', ['fsdp', 'context', 'context_usp_ulysses', 'expert']],
    ['kv_lora_up_proj', []],
    ['embed_attn', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['activation_batch_moe', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_length_moe', ['context', 'context_usp_ulysses']],
    ['activation_norm_length_moe', ['tensor_sequence', 'context', 'context_usp_ulysses']],
    ['activation_embed_moe', ['tensor']],
    ['activation_mlp_moe', ['tensor', 'tensor_sequence']],
    ['activation_exp', ['expert']],
    ['exp', 'expert'],
    ['mlp_moe', ['fsdp_transpose', 'tensor', 'tensor_sequence', 'autoregressive']],
    ['embed_moe', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses']],
    ['embed_moe', ['fsdp', 'context', 'context_usp_ulysses']],
    ['embed_router', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses']],
    ['embed_router', ['fsdp', 'context', 'context_usp_ulysses']],
    ['segment_ids_batch', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_mlp', ['tensor', 'tensor_sequence']],
    ['activation_batch', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['activation_length', ['context', 'context_usp_ulysses']],
    ['activation_norm_length', ['tensor_sequence', 'context', 'context_usp_ulysses']],
    ['activation_embed', ['tensor']],
    ['activation_stage', 'stage'],
    ['mlp', ['fsdp_transpose', 'tensor', 'tensor_sequence', 'autoregressive']],
    ['gdn_head', ['fsdp_transpose', 'tensor', 'tensor_sequence', 'autoregressive']],
    ['embed', ['fsdp', 'fsdp_transpose', 'context', 'context_usp_ulysses', 'expert']],
    ['embed', ['fsdp', 'context', 'context_usp_ulysses', 'expert']],
    ['norm', ['tensor']],
    ['layers', 'stage'],
    ['diloco', 'diloco'],
    ['engram_dim', ['tensor']],
    ['dense_layers', []],
    ['moe_layers', []],
    ['local_layers', []],
    ['mhc', []],
    ['prefill_activation_length', ['context', 'context_usp_ulysses']],
    ['prefill_activation_norm_length', ['tensor_sequence', 'context', 'context_usp_ulysses']],
    ['activation_prefill_kv_batch', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['decode_batch', ['data', 'fsdp', 'fsdp_transpose', 'expert']],
    ['decode_length', []],
    ['cache_heads', ['autoregressive', 'tensor', 'tensor_sequence']],
    ['paged_kv_heads', ['tensor']],
    ['cache_batch_prefill', []],
    ['cache_batch', []],
    ['cache_heads_none', []],
    ['cache_kv', []],
    ['cache_sequence', []],
    ['num_pages', []],
    ['tokens_per_page', []],
    ['paged_kv_head_dim_size', []],
    ['mlp_no_fsdp', ['tensor', 'tensor_sequence', 'autoregressive']],
    ['exp_with_fsdp', 'fsdp'],
]

# base.yml's values for the keys read (MODEL_KEYS and IMPLEMENTATION_KEYS).
BASE: dict = {
    "decoder_block": "llama2", "model_name": "default", "global_parameter_scale": 1, "base_emb_dim": 2048,
    "base_num_query_heads": 16, "base_num_kv_heads": 16, "base_mlp_dim": 7168, "base_moe_mlp_dim": -1,
    "base_num_decoder_layers": 16, "emb_dim": 2048, "num_query_heads": 16, "num_kv_heads": 16, "mlp_dim": 7168,
    "moe_mlp_dim": -1, "num_decoder_layers": 16, "head_dim": 128, "vocab_size": 32000,
    "mlp_activations": ["silu", "linear"], "num_experts": 1, "num_experts_per_tok": 1, "shared_experts": 0,
    "first_num_dense_layers": 0, "interleave_moe_layer_step": 1, "attention_type": "global", "q_lora_rank": 0,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "sliding_window_size": 0, "chunk_attn_window_size": 0, "nope_layer_interval": -1,
    "inhomogeneous_layer_cycle_interval": 1, "use_indexer": False, "indexer_n_heads": 64, "indexer_head_dim": 128,
    "indexer_topk": 2048, "indexer_loss_scaling_factor": 0.0, "mtp_num_layers": 0, "gdn_num_key_heads": 16,
    "gdn_num_value_heads": 32, "gdn_key_head_dim": 128, "gdn_value_head_dim": 128, "gdn_conv_kernel_dim": 4,
    "per_device_batch_size": 12.0, "max_target_length": 2048, "gradient_accumulation_steps": 1,
    "global_head_dim": 0, "global_num_kv_heads": 0, "share_kv_projections": False, "attention_output_dim": -1,
    "moe_expert_input_dim": -1, "num_kv_shared_layers": 0, "use_double_wide_mlp": False,
    "hidden_size_per_layer_input": 0, "engram_layers": [], "engram_head_dim": 1280, "engram_num_heads": 8,
    "engram_max_ngram_size": 3, "engram_kernel_size": 4, "mhc_expansion_rate": 1, "use_multimodal": False,
    "freeze_vision_encoder_params": True, "num_channels_for_vit": 3, "image_size_for_vit": 896,
    "tile_size_for_vit": 336, "patch_size_for_vit": 14, "hidden_size_for_vit": 1408,
    "intermediate_size_for_vit": 5632, "num_hidden_layers_for_vit": 34, "projector_input_dim_for_vit": 4096,
    "projector_output_dim_for_vit": 4096, "pixel_shuffle_ratio_for_vit": 0.5, "use_dpo": False, "use_audio": False,
    "compress_ratios": [], "o_groups": 0, "o_lora_rank": 0, "first_num_hash_layers": 0,
    "logits_via_embedding": False, "trainable_position_size": -1,
    "attention": "autoselected", "sparse_matmul": True, "megablox": True, "capacity_factor": -1.0,
    "remat_policy": "full", "scan_layers": True, "sa_block_q": 512, "sa_block_kv": 512,
    "sa_block_q_dkv": 512, "sa_block_kv_dkv": 512, "sa_block_q_dq": 512, "sa_block_kv_dq": 512,
    "sa_use_fused_bwd_kernel": False, "use_tokamax_splash": False,
    "indexer_sparse_training": False, "gdn_chunk_size": 64, "use_mla_absorbed_mqa": False, "use_post_ffw_norm": False,
    "use_qk_norm": False, "num_target_devices": 1, "num_slices": 1, "moe_dispatch_no_expert_sharding": False,
    "num_layers_per_pipeline_stage": 1, "num_pipeline_microbatches": -1, "num_pipeline_repeats": -1,
    "pipeline_delay_activation_forwarding": False,
    "hardware": "tpu", "logical_axis_rules": LOGICAL_AXIS_RULES,
    "mesh_axes": ["diloco", "data", "stage", "fsdp", "fsdp_transpose", "context", "context_usp_ulysses",
                  "context_autoregressive", "tensor", "tensor_sequence", "expert", "autoregressive"],
    "ici_parallelism": [1, 1, 1, -1, 1, 1, 1, 1, 1, 1, 1, 1],
    "dcn_parallelism": [1, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
}

MODEL_KEYS = frozenset("""
    decoder_block model_name global_parameter_scale base_emb_dim base_num_query_heads base_num_kv_heads base_mlp_dim
    base_moe_mlp_dim base_num_decoder_layers emb_dim num_query_heads num_kv_heads mlp_dim moe_mlp_dim
    num_decoder_layers head_dim vocab_size mlp_activations num_experts num_experts_per_tok shared_experts
    first_num_dense_layers interleave_moe_layer_step attention_type q_lora_rank kv_lora_rank qk_nope_head_dim
    qk_rope_head_dim v_head_dim sliding_window_size chunk_attn_window_size nope_layer_interval
    inhomogeneous_layer_cycle_interval use_indexer indexer_n_heads indexer_head_dim indexer_topk
    indexer_loss_scaling_factor mtp_num_layers gdn_num_key_heads gdn_num_value_heads gdn_key_head_dim
    gdn_value_head_dim gdn_conv_kernel_dim per_device_batch_size max_target_length gradient_accumulation_steps
    global_head_dim global_num_kv_heads share_kv_projections attention_output_dim moe_expert_input_dim
    num_kv_shared_layers use_double_wide_mlp hidden_size_per_layer_input engram_layers engram_head_dim
    engram_num_heads engram_max_ngram_size engram_kernel_size mhc_expansion_rate use_multimodal
    freeze_vision_encoder_params num_channels_for_vit image_size_for_vit tile_size_for_vit patch_size_for_vit
    hidden_size_for_vit intermediate_size_for_vit num_hidden_layers_for_vit projector_input_dim_for_vit
    projector_output_dim_for_vit pixel_shuffle_ratio_for_vit use_dpo use_audio compress_ratios o_groups o_lora_rank
    first_num_hash_layers logits_via_embedding trainable_position_size
""".split())

IMPLEMENTATION_KEYS = frozenset("""
    attention sparse_matmul megablox capacity_factor remat_policy scan_layers sa_block_q sa_block_kv
    sa_block_q_dkv sa_block_kv_dkv sa_block_q_dq sa_block_kv_dq sa_use_fused_bwd_kernel use_tokamax_splash
    indexer_sparse_training gdn_chunk_size use_mla_absorbed_mqa use_post_ffw_norm use_qk_norm
    num_target_devices num_slices mesh_axes ici_parallelism dcn_parallelism logical_axis_rules
    moe_dispatch_no_expert_sharding hardware num_layers_per_pipeline_stage num_pipeline_microbatches
    num_pipeline_repeats pipeline_parallel_layers pipeline_delay_activation_forwarding
    quantization quantize_kvcache kv_quant_dtype
""".split())


def _off(value) -> bool:
    return value in (None, False, 0, "", [], ())


# key -> (is it off?, what it is). On, it is an error naming the key.
UNPRICED = {
    "moba": (_off, "MoBA block-sparse attention"),
    "lora": (lambda v: not (v or {}).get("enable_lora"), "LoRA adapters (lora.enable_lora)"),
    "weight_sparsity_n": (_off, "N:M structured weight sparsity"),
    "training_objective": (lambda v: v in (None, "causal_lm"), "a training objective other than causal_lm"),
    "use_m3_model": (_off, "the M3 model"),
    "learn_to_init_mode": (_off, "learn-to-init layers"),
    "lti_layer_indices": (_off, "learn-to-init layers (lti_layer_indices)"),
}

# Run-specific paths and names (the fixture generator leaves their values out; they are keys all the same).
RUN_KEYS = frozenset("""
    run_name base_output_directory checkpoint_dir metrics_dir tensorboard_dir managed_mldiagnostics_dir
    dump_jaxpr_gcs_dir dump_hlo_gcs_dir hf_access_token
""".split())

NO_EFFECT = RUN_KEYS | frozenset("""
    abort_on_inf_loss abort_on_nan_loss act_quantization_calibration_method activation_dropout_for_audio
    activation_function_for_audio activations_in_float32 adam_b1 adam_b2 adam_eps adam_eps_root adam_weight_decay
    adamw_mask add_bos add_eos allow_split_physical_axes ar_cache_axis_order async_checkpointing async_scheduling
    attention_bias attention_dropout_for_audio attention_for_vit attention_out attention_sink attn_logits_soft_cap
    attn_module_name audio_path audio_placeholder autoregressive_decode_assert base_config batch_split_factor
    beta_fast beta_slow blend_cache_dir blend_index_dir block_diffusion_canvas_policy
    block_diffusion_logit_alignment block_diffusion_mask_id block_diffusion_min_noise block_state_before_run_start
    bwd_quantization_calibration_method cast_logits_to_fp32 causal_block_size chat_template chat_template_path
    check_vma checkpoint_conversion_fn checkpoint_is_quantized checkpoint_period checkpoint_storage_concurrent_gb
    checkpoint_storage_device_host_concurrent_gb checkpoint_storage_target_data_file_size_bytes
    checkpoint_storage_use_ocdbt checkpoint_storage_use_zarr3 checkpoint_todelete_full_path
    checkpoint_todelete_subdir colocated_python_checkpointing colocated_python_data_input
    communication_overlapping_alpha compile_topology compile_topology_num_slices compile_xla_flags
    compiled_trainstep_file compressed_rope_max_timescale compute_axis_order constant_bound_config context
    context_parallel_load_balance context_parallel_reorder_strategy context_parallel_strategy context_sharding
    conv_chunksize_for_audio conv_stride_for_vit convert_checkpoint_if_possible cost_estimate_flops_bwd
    cost_estimate_flops_fwd csa_qk_head_chunk_size custom_mesh custom_mesh_and_rule custom_mesh_and_rule_for_eval
    d_model_for_audio data_sharding data_shuffle_seed data_template_path dataset_name dataset_path dataset_type
    dcn_autoregressive_parallelism dcn_bandwidth_burst dcn_bandwidth_interface dcn_bandwidth_latency
    dcn_bandwidth_limit dcn_context_autoregressive_parallelism dcn_context_parallelism
    dcn_context_usp_ulysses_parallelism dcn_data_parallelism dcn_diloco_parallelism dcn_expert_parallelism
    dcn_fsdp_parallelism dcn_fsdp_transpose_parallelism  dcn_pipeline_parallelism
    dcn_sequence_parallelism dcn_tensor_parallelism dcn_tensor_sequence_parallelism debug_converter debug_sharding
    decode_sampling_nucleus_p decode_sampling_strategy decode_sampling_temperature decode_sampling_top_k
    decoder_layer_input deepstack_visual_indexes_for_vit default_prompt defer_small_all_reduces
    dense_fsdp_use_two_stage_all_gather dense_init_scale diloco_outer_lr diloco_outer_momentum diloco_sync_period
    distill_alpha distill_alpha_end distill_alpha_schedule distill_beta distill_beta_end distill_beta_schedule
    distill_feature_loss_type distill_layer_indices distill_student_weights_share_map distill_temperature
    distill_temperature_end distill_temperature_schedule distill_weights_copy_map downsample_hidden_size_for_audio
    dpo dq_reduction_steps drhs_grad_quantization_calibration_method dropout_rate dtype dtype_mm dump_hlo
    dump_hlo_delete_local_after dump_hlo_local_dir dump_hlo_local_module_name dump_hlo_module_name
    dump_hlo_upload_all dump_hlo_xla_flags dump_jaxpr dump_jaxpr_delete_local_after dump_jaxpr_local_dir dump_step
    elastic_backup_kind elastic_enabled elastic_max_retries elastic_min_slice_count elastic_timeout_seconds
    enable_autocheckpoint enable_checkpoint_cloud_logger enable_checkpointing enable_continuous_checkpointing
    enable_data_shuffling enable_diloco enable_dp_attention enable_dropout enable_emergency_checkpoint
    enable_expert_parallel enable_gcp_goodput_metrics enable_gcp_step_deviation_metrics enable_goodput_recording
    enable_jax_profiler enable_llm_inference_pool enable_mhc_lite enable_mllog enable_model_warmup
    enable_multi_tier_checkpointing enable_orbax_v1 enable_padding_causal_mask enable_pathways_goodput
    enable_prefix_caching enable_rampup_batch_size enable_single_controller enable_single_replica_ckpt_restoring
    enable_streaming_diloco enable_tensorboard enable_tpu_profiling_options enable_wandb
    encoder_attention_heads_for_audio encoder_ffn_dim_for_audio encoder_layers_for_audio engram engram_seed
    engram_vocab_bases eod_mask_loss eval_data_columns eval_dataset_name eval_image_column eval_interval
    eval_local_sa_block_kv eval_local_sa_block_kv_compute eval_local_sa_block_q eval_local_sa_k_layout
    eval_local_sa_q_layout eval_local_sa_v_layout eval_per_device_batch_size eval_ragged_buffer_factor
    eval_sa_block_kv eval_sa_block_kv_compute eval_sa_block_q eval_sa_k_layout eval_sa_q_layout eval_sa_v_layout
    eval_split eval_start_step eval_steps eval_wi_tile_fwd_batch_seq eval_wi_tile_fwd_embed_dim
    eval_wi_tile_fwd_mlp_dim eval_wo_tile_fwd_batch_seq eval_wo_tile_fwd_embed_dim eval_wo_tile_fwd_mlp_dim
    expansion_factor_real_data experimental_sa_quant_k_fp8 experimental_sa_quant_q_fp8 final_logits_soft_cap
    first_phase_ragged_buffer_factor float32_gate_logits float32_logits float32_qk_product float32_weight_sum
    force_q_layout force_unroll formatting_func_kwargs formatting_func_path free_kv_cache_during_weight_sync
    freeze_audio_encoder_params fuse_expert_scales fused_mlp fused_qkv gcs_debug_path gcs_metrics
    gdn_mamba_block_size generate_padding_batch_eval generate_padding_batch_train generate_slice
    global_batch_size_to_eval_on global_batch_size_to_load global_batch_size_to_load_eval
    global_batch_size_to_load_increment global_batch_size_to_load_start global_batch_size_to_train_on
    global_rampup_samples global_rope_max_timescale global_rope_proportion goodput_job_name
    goodput_upload_interval_seconds grad_dtype gradient_clipping_threshold grain_data_source_max_workers
    grain_eval_files grain_file_type grain_index_storage_option grain_num_threads grain_num_threads_eval
    grain_packing_type grain_per_worker_buffer_size grain_per_worker_buffer_size_eval grain_prefetch_buffer_size
    grain_prefetch_buffer_size_eval grain_ram_budget_mb grain_shuffle_buffer_size grain_train_files
    grain_train_mixture_config_path grain_use_elastic_iterator grain_worker_count grain_worker_count_eval 
    hbm_utilization_vllm heartbeat_reporting_interval_in_seconds hf_data_dir hf_eval_files hf_eval_split
    hf_lora_adapter_path hf_name hf_path hf_train_files hide_profiler_step_metric ici_autoregressive_parallelism
    ici_context_autoregressive_parallelism ici_context_parallelism ici_context_usp_ulysses_parallelism
    ici_data_parallelism ici_diloco_parallelism ici_expert_parallelism ici_fsdp_parallelism
    ici_fsdp_transpose_parallelism  ici_pipeline_parallelism ici_sequence_parallelism
    ici_tensor_parallelism ici_tensor_sequence_parallelism image_path image_placeholder indexer_approx_top_k_recall
    indexer_cutoff_threshold indexer_mask_exact_topk indexer_use_approx_top_k inference_benchmark_test
    inference_metadata_file inference_microbenchmark_log_file_path inference_microbenchmark_loop_iters
    inference_microbenchmark_num_samples inference_microbenchmark_prefill_lengths inference_microbenchmark_stages
    inference_server init_weights_seed input_data_sharding_logical_axes internal_compile
    internal_compile_num_devices jax_cache_dir jax_debug_log_modules jax_distributed_initialization_timeout
    jax_profiler_port key_proj kv_cache_buffer kv_proj kv_quant_axis kv_tp_size kv_wa_proj
    learning_rate learning_rate_final_fraction learning_rate_schedule_steps load_balance_loss_weight
    load_checkpoint_only_once load_from_prefill_dir load_full_state_path load_parameters_path
    local_checkpoint_directory local_checkpoint_period local_rope_max_timescale local_rope_proportion
    local_sa_block_kv local_sa_block_kv_compute local_sa_block_kv_dkv local_sa_block_kv_dkv_compute
    local_sa_block_kv_dq local_sa_block_q local_sa_block_q_dkv local_sa_block_q_dq local_sa_fuse_reciprocal
    local_sa_k_layout local_sa_q_layout local_sa_use_base2_exp local_sa_use_fused_bwd_kernel local_sa_v_layout
    local_use_splash_scheduler log_config log_moe_bias_norms log_period log_required_ragged_buffer_factor
    log_step_diagnostics log_weight_sync_time  logical_axis_rules_for_eval logits_dot_in_fp32
    logits_proj_quant_calibration_method lora_input_adapters_path lr_schedule_type
    lti_use_general_linear_map managed_mldiagnostics managed_mldiagnostics_on_demand_profiling
    managed_mldiagnostics_region managed_mldiagnostics_run_group managed_mldiagnostics_storage_path matmul_precision
    max_checkify max_corpus_chars max_inflight_computations max_num_batched_tokens max_num_checkpoints_to_keep
    max_num_images_per_example max_num_seqs max_position_embeddings max_prefill_predict_length
    max_sample_len_for_audio max_segments_per_seq max_source_positions_for_audio max_timescale_for_audio
    merge_gating_gmm  metrics_file mhc_pallas_kernel_bwd_block_size
    mhc_pallas_kernel_bwd_feature_block_size mhc_pallas_kernel_fwd_block_size micro_batch_size_to_eval_on
    micro_batch_size_to_train_on mla_kv mla_naive_kvcache mla_q mla_qk_head_chunk_size mllog_file
    mlp_activations_limit mlp_bias mlpwi mlpwi_0 mlpwi_1 mlpwo mmap_eod_id mmap_npy_split mmap_split_sentences
    moba_chunk_size moba_topk model_call_mode moe_chunk_barrier 
    moe_dropless_fallback moe_ep_all_gather_sparse_core_id moe_fsdp_all_gather_sparse_core_id
    moe_fsdp_use_two_stage_all_gather moe_log_max_load_ratio moe_mlp_tp_size moe_mlpwi_0 moe_mlpwi_1 moe_mlpwo
    moe_pin_sparse_core_all_gathers moe_pin_sparse_core_ep_all_gathers moe_pin_sparse_core_fsdp_all_gathers
    moe_pin_sparse_core_fsdp_all_gathers_fwd_only moe_quantize_combine_bwd_method moe_quantize_token_all_gather
    moe_routing_maps moe_topk_before_ep_all_gather moe_use_direct_token_gather moe_use_megatron_seq_aux_loss
    moe_x_sorted monitor_goodput monitor_step_time_deviation mrope_section mscale mtc_data_parallelism
    mtp_eval_target_module mtp_loss_scaling_factor mtp_reuse_input_embedding mu_dtype multi_sampling
    multi_tier_checkpointing_backup_interval_minutes multi_tier_checkpointing_backup_interval_steps muon_beta
    muon_consistent_rms muon_include_routers muon_type muon_use_all_to_all muon_weight_decay n_routing_groups
    n_window_for_audio n_window_infer_for_audio norm_topk_prob normalization_layer_epsilon
    normalize_embedding_logits num_attention_heads_for_vit num_communication_overlapping_steps
    num_conv_layers_for_audio num_diloco_fragments num_diloco_replicas num_epoch
    num_mel_bins_for_audio num_moe_emb_chunks num_moe_token_chunks
    num_position_embeddings_for_vit   num_vocab_tiling offline_data_dir
    olmo_apply_ngram_filter olmo_index_path olmo_path_remap_from olmo_path_remap_to opt_type
    optimize_mesh_for_tpu_v6e optimizer_memory_host_offload original_max_position_embeddings out_hidden_size_for_vit
    out_proj output_dim_for_audio override_logical_axis_rules override_model_config packing
    packing_max_segments_per_sample padded_base_moe_mlp_dim param_scan_axis parameter_memory_host_offload
    partial_rotary_factor per_device_batch_size_increment per_device_batch_size_start
    pipeline_fsdp_ag_once pipeline_fsdp_ag_per_repeat
    posemb_type_for_vit position_id_per_seconds prefill_cache_axis_order prefill_cache_dir prefill_chunk_size
    prefill_slice prefix_caching_dram_byte prefix_caching_hbm_byte prefuse_moe_weights profile_cleanly
    profile_periodically_period profile_power_events profiler profiler_steps projector_dropout_for_vit
    prometheus_port prompt qk_clip_threshold qk_norm_with_scale qkv_proj quant_cfg_path
    quantization_local_shard_count quantize_logits_proj quantize_mtp quantize_router_proj
    query_proj query_wa_proj ragged_block_size ragged_buffer_factor ragged_gather_cost_estimate_bytes_accessed
    ragged_gather_cost_estimate_flops ragged_gather_fallback ragged_gather_reduce_cost_estimate_bytes_accessed
    ragged_gather_reduce_cost_estimate_flops ragged_gather_reduce_fallback ragged_sort_use_single_sparsecore
    rampup_end_step rampup_samples_per_increment_to_load record_internal_nn_metrics remat_policy_for_vit
    remove_size_one_mesh_axis_from_type replicate_quant_scale replicator_backup_interval_minutes
    report_heartbeat_metric_for_gcp_monitoring report_performance_metric_for_gcp_monitoring reset_attention_mask
    reshape_q retry_dropless_first_steps return_log_prob return_routed_experts reuse_example_batch ring_scan_unroll
    rollout_backend rollout_tensor_parallelism rope_attention_scaling rope_factor rope_interleave
    rope_linear_scaling_factor rope_max_timescale rope_min_timescale rope_pairwise rope_theta_for_vit rope_truncate
    rope_type rope_use_scale routed_bias routed_bias_update_rate routed_scaling_factor routed_score_func
    router_topk_matmul_vjp sa_block_kv_compute sa_block_kv_dkv_compute 
    sa_bwd_dkv_megacore sa_fuse_reciprocal sa_k_layout sa_q_layout sa_use_base2_exp
    sa_v_layout save_checkpoint_on_completion save_checkpoint_on_start save_config_to_gcs
    save_quantized_params_path scale_embedding_for_audio scan_layers_per_stage scan_pipeline_iterations
    scan_pipeline_repeats set_remat_policy_on_layers_per_stage set_remat_policy_on_pipeline_iterations
    sft_train_on_completion_only shard_embed_moe_on_fsdp shard_exp_on_fsdp shard_mode shard_optimizer_over_data
    sharding_strategy sharding_tolerance shardy sinkhorn_iterations skip_first_n_steps_for_profiler
    skip_jax_distributed_system skip_step_interval skip_step_on_spikes skip_step_scaling_factor
    source_checkpoint_layout spatial_merge_size_for_vit stack_prefill_result_cache
    standalone_checkpointer_drop_page_cache_before_restore standalone_checkpointer_enable_restore_in_loop
    standalone_checkpointer_per_step_interval standalone_checkpointer_start_from_checkpoint
    step_deviation_interval_seconds steps stop_strings student_overrides student_params_to_update subslice_shape
    swap_space_vllm_gb system_prompt target_eval_loss te_comm_gemm_overlap te_ep_overflow_check_every_n_steps
    te_gmm_quantization te_moe_block teacher_overrides temperature_tuning temporal_patch_size_for_vit
    tensors_on_device tensors_to_offload tokenize_eval_data tokenize_train_data tokenizer_path tokenizer_type
    topk_routing_group tpu_num_chips_to_profile_per_task tpu_num_sparse_core_tiles_to_trace
    tpu_num_sparse_cores_to_trace train_data_columns train_image_column train_interleave_cycle_length
    train_shard_in_read train_split trainable_parameters_mask ulysses_context_sharding
    unquantized_modules upload_all_profiler_results use_2d_fsdp_sharding use_audio_in_video use_batch_split_schedule
    use_chat_template use_chunked_prefill use_csa_streamindex_kernel use_custom_sort_vjp use_gather_mosaic_kernel
    use_gmm_v2 use_gmm_v2_heuristic_tiling use_grpo use_iota_embed use_jax_splash use_lineage
    use_manual_quantization use_max_logit_estimate use_mhc_pallas_kernel use_mrope use_post_attn_norm
    use_qk_clip use_qk_norm_in_gdn use_qwix_quantization use_ragged_attention
    use_ragged_sort use_raiden_ffi use_random_routing use_replicator_service use_ring_of_experts
    use_sequential_layers use_sft use_sliced_mla_proj use_splash_scheduler use_standalone_converter
    use_stream_chunking use_tokamax_gmm use_truncation use_tunix_gradient_accumulation
    use_untrainable_positional_embedding use_vertex_tensorboard use_weight_converter using_pipeline_parallelism
    v_norm_with_scale value_proj vertex_tensorboard_project vertex_tensorboard_region video_max_grid_h
    video_max_grid_t video_max_grid_w video_path video_placeholder vision_connector_activation
    vision_connector_hidden_size vision_connector_num_layers vision_connector_use_bias vision_encoder_block
    vision_output_dim_for_vit vision_output_length vision_projector_type vllm_additional_config vllm_block_size
    vllm_hf_config_path vllm_hf_overrides vllm_load_format vocab_size_per_layer_input vocab_tiling_ag_once
    wandb_project_name wandb_run_name warm_input_reshard_before_run_start warmup_programs_in_init
    warmup_steps_fraction weight_block_size weight_dtype weight_quantization_calibration_method weight_sparsity_m
    weight_sparsity_start_step weight_sparsity_update_step weight_sync_debug wi_tile_dlhs_batch_seq
    wi_tile_dlhs_embed_dim wi_tile_dlhs_mlp_dim wi_tile_drhs_batch_seq wi_tile_drhs_embed_dim wi_tile_drhs_mlp_dim
    wi_tile_fwd_batch_seq wi_tile_fwd_embed_dim wi_tile_fwd_mlp_dim wo_tile_dlhs_batch_seq wo_tile_dlhs_embed_dim
    wo_tile_dlhs_mlp_dim wo_tile_drhs_batch_seq wo_tile_drhs_embed_dim wo_tile_drhs_mlp_dim wo_tile_fwd_batch_seq
    wo_tile_fwd_embed_dim wo_tile_fwd_mlp_dim write_estimator_result wsd_decay_steps_fraction wsd_decay_style
    xprof_e2e_enable_fw_power_level_event xprof_e2e_enable_fw_thermal_event xprof_e2e_enable_fw_throttle_event
    xprof_tpu_power_trace_level z_loss_multiplier
""".split())
