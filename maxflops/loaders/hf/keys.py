"""The keys every model type shares: those with no FLOPs effect (whatever the type: RoPE, norms, dtypes, token
ids, training and hub bookkeeping), those of a multimodal wrapper's towers, and the config.json key that sets each
schema key (named in errors)."""

from __future__ import annotations

from ..reader import NO_EFFECT, NOT_UNDERSTOOD, VISION

# the state-space models' keys with no FLOPs effect: biases, dt limits and initialisation, kernels, multipliers
_SSM_NO_EFFECT = frozenset("""
    use_conv_bias mamba_proj_bias use_bias mamba_hidden_act time_step_min time_step_max time_step_limit
    time_step_floor time_step_rank residual_in_fp32 rescale_prenorm_residual layer_norm_epsilon use_mamba_kernels
    num_logits_to_keep use_long_context use_mem_eff_path moe_shared_expert_overlap norm_eps mamba_conv_bias
    z_loss_coefficient embedding_multiplier
    logits_scaling residual_multiplier attention_multiplier position_embedding_type normalization_function
    time_step_scale time_step_init_scheme use_mambapy use_associative_scan mixer_rms_eps mamba_proj_bias
    use_falcon_mambapy mamba_norm_before_gate mamba_rms_norm projectors_bias lm_head_multiplier mlp_multipliers
    key_multiplier attention_out_multiplier attention_in_multiplier ssm_multipliers ssm_in_multiplier
    ssm_out_multiplier
""".split())
# PreTrainedConfig's own attributes as transformers 4.x wrote them into every file (generation defaults, export
# switches, label maps): none is read by a decoder's layers
_BASE_CONFIG = frozenset("""
    is_decoder cross_attention_hidden_size max_length min_length do_sample early_stopping num_beams num_beam_groups
    diversity_penalty temperature top_k top_p typical_p repetition_penalty length_penalty no_repeat_ngram_size
    encoder_no_repeat_ngram_size bad_words_ids num_return_sequences output_scores return_dict_in_generate
    forced_bos_token_id forced_eos_token_id remove_invalid_values exponential_decay_length_penalty suppress_tokens
    begin_suppress_tokens finetuning_task tokenizer_class prefix sep_token_id decoder_start_token_id
    task_specific_params torchscript use_bfloat16 tf_legacy_loss pruned_heads _pad_token_id
""".split())

# keys with no FLOPs effect at these values only (a decoder-only LM with cross-attention or tied to an encoder is
# another model)
# (gradient_checkpointing: PreTrainedModel turns it into activation checkpointing of every layer when true)
AT_VALUE = {"add_cross_attention": False, "tie_encoder_decoder": False, "use_backbone_lora": 0, "use_llm_lora": 0,
            "gradient_checkpointing": False}

NO_EFFECT_KEYS = frozenset("""
    qkv_bias unsloth_fixed unsloth_version
    architectures _name_or_path auto_map transformers_version torch_dtype dtype use_cache initializer_range
    bos_token_id eos_token_id pad_token_id attention_bias mlp_bias attention_dropout hidden_dropout
    max_position_embeddings initial_context_length rms_norm_eps layer_norm_eps rope_theta rope_scaling
    rope_parameters rope_local_base_freq partial_rotary_factor rope_interleave indexer_rope_interleave
    tie_word_embeddings pretraining_tp quantization_config output_router_logits router_aux_loss_coef
    router_jitter_noise norm_topk_prob aux_loss_alpha seq_aux ep_size n_group topk_group topk_method
    scoring_func routed_scaling_factor moe_router_dtype query_pre_attn_scalar final_logit_softcapping
    attn_logit_softcapping cache_implementation swiglu_limit swiglu_alpha attn_temperature_tuning floor_scale
    attn_scale use_qk_norm for_llm_compressor _attn_implementation_autoset compress_rope_theta hc_eps
    hc_sinkhorn_iters chunk_size_feed_forward is_encoder_decoder id2label label2id output_attentions
    output_hidden_states problem_type return_dict rotary_dim mla_use_nope use_grouped_topk moe_router_activation_func
    num_expert_group moe_renormalize model_max_length full_attn_alpha_factor full_attn_beta_factor
    linear_attn_alpha_factor linear_attn_beta_factor mlp_alpha_factor mlp_beta_factor linear_a_log_min
    linear_a_log_max linear_dt_min linear_dt_max linear_dt_init_floor linear_allow_neg_eigval attention_value_scale
""".split()) | _SSM_NO_EFFECT | _BASE_CONFIG

VISION_KEYS = frozenset("""
    vision_config mm_tokens_per_image boi_token_index eoi_token_index image_token_index image_token_id
    boi_token_id eoi_token_id vision_feature_layer vision_feature_select_strategy projector_hidden_act
    multimodal_projector_bias video_token_id vision_start_token_id vision_end_token_id audio_config audio_token_id
    boa_token_id eoa_token_index eoa_token_id boa_token_index vision_soft_tokens_per_image audio_soft_tokens_per_image
    audio_ms_per_token vision_token_id vq_config
""".split())


# the sub-configs of a multimodal file that are a model of their own, run beside the text decoder
TOWERS = {"vision_config": "vision encoder and its projector", "audio_config": "audio encoder and its projector"}



def classify(key: str) -> str:
    """The reason for a key no reader took: shared no-effect, a tower's, else not understood."""
    if key in NO_EFFECT_KEYS:
        return NO_EFFECT
    if key in VISION_KEYS:
        return VISION
    return NOT_UNDERSTOOD


# schema key -> the config.json key that usually sets it (named in errors about the schema key)
SOURCES = {
    "num_decoder_layers": "num_hidden_layers", "emb_dim": "hidden_size", "num_query_heads": "num_attention_heads",
    "num_kv_heads": "num_key_value_heads", "mlp_dim": "intermediate_size", "moe_mlp_dim": "moe_intermediate_size",
    "sliding_window_size": "sliding_window", "chunk_attn_window_size": "attention_chunk_size",
    "mtp_num_layers": "num_nextn_predict_layers", "shared_experts": "n_shared_experts",
    "mhc_expansion_rate": "hc_mult", "num_experts": "num_experts / n_routed_experts / num_local_experts",
}


