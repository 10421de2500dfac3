"""Kimi K2: Moonshot's kimi_k2 files (architectures DeepseekV3ForCausalLM, trust_remote_code: the repo's own
configuration_deepseek.DeepseekV3Config and modeling_deepseek); DeepSeek-V3's layer: MLA, DeepSeek's MoE (a dense
prefix of first_k_dense_replace layers, MoE where layer % moe_layer_freq == 0), MTP modules
(num_nextn_predict_layers, read when given). transformers 5.24 has
no kimi_k2 config class (Kimi_K25Config reads a kimi_k2 text_config as a DeepseekV3Config): no class defaults, so
every key read is required."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# no transformers config class: nothing is defaulted (a file lacking a key read is refused, naming it)
DEFAULTS: dict = {}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(keeps_rotary_head_dim=True), ffn=parts.deepseek_moe())
