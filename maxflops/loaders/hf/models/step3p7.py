"""Step 3.7 Flash (multimodal, StepFun): Step3p7Config, modeling_step3p7; its text_config is Step3p7TextConfig
(``step3p5``: the class drops the model_type the text_config names and builds its own); the vision tower and its
projector are named, not priced.

A file with no text_config and the text model's keys at its top level (as NVIDIA's aiconfigurator publishes
Step-3.7-Flash, architecture Step3p7FlashForCausalLM) is read from those keys, as its publisher's code reads it:
transformers' Step3p7Config would ignore them and build its default text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="step3p5", flat_text=True, any_text_type=True,
              no_effect={"projector_bias": "not counted: the vision projector's bias",
                         "image_token_id": "the image placeholder token id (no matmul)"})
