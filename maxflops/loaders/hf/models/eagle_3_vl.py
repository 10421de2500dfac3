"""Eagle 3 VL (NVIDIA's eagle_3_vl files, trust_remote_code): a vision encoder and an MLP connector before a text
decoder its text_config names (Qwen3 in Eagle-Block2A); the tower and the connector are named, not priced. No
transformers config class: the text model's own type gives the defaults."""

from __future__ import annotations

from ..house import HFType

_NOT_PRICED = "the vision tower's or its connector's setting (not priced)"

TYPE = HFType(wrapper="qwen3", text_types=("*",), no_effect={
    **{key: _NOT_PRICED for key in ("downsample_ratio", "dynamic_image_size", "max_dynamic_tiles",
                                    "min_dynamic_tiles", "mlp_connector_layers", "pad2square", "select_layer",
                                    "use_pixel_shuffle", "use_thumbnail", "image_token_index")},
    "loss_version": "a training-loss variant of NVIDIA's code (the same matmuls)",
    "mlp_checkpoint": "activation checkpointing of the connector (the tower is not priced)",
    "_attn_implementation": "an attention kernel choice", "_commit_hash": "hub bookkeeping",
})
