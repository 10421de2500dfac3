"""MiMo (MiMo-7B): Xiaomi's mimo files (architectures MiMoForCausalLM, trust_remote_code: its modeling_mimo extends
Qwen2's): Qwen2's layers (GQA with q/k/v biases, a gated MLP, Qwen's windows) and num_nextn_predict_layers MTP
layers (Xiaomi's MiMoMTPLayers: the token and hidden state projected together, one decoder layer, the shared head),
counted in training as maxflops' MTP modules. transformers 5.24 has no mimo config class: no class defaults, so
every key read is required."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# no transformers config class: nothing is defaulted (a file lacking a key read is refused, naming it)
DEFAULTS: dict = {}

TYPE = HFType(defaults=DEFAULTS, layers=parts.qwen_windows, extras=(parts.mtp_layers,),
              no_effect={"use_mrope": "no field of MiMo's config that its model reads (false in its files)"})
