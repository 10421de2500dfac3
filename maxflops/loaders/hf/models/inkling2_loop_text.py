"""Inkling 2 Loop's text model: Inkling2LoopTextConfig, modeling_inkling2_loop. Inkling 2's layers (see inkling2_text),
of which loop_layer_index_start to loop_layer_index_end - 1 run loop_num_passes passes in a row (layer_loops), each
pass restarting from the residual and attention-residual snapshots the loop began with; on each pass after the first
every looped layer reads the previous pass's messages (an aggregate of four queries) and gates its query, key, value
and FFN inputs by them, each gate 2D -> loop_gate_rank -> two of D (loop_message_rank). The original checkpoints'
loop_config (core_start, core_end, num_passes, gate_rank) sets the four, as the config class reads it."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType
from .inkling2_text import DEFAULTS as INKLING2, read as read_inkling2

# Inkling2LoopTextConfig
DEFAULTS = {**INKLING2, "hidden_size": 2304, "num_hidden_layers": 24, "num_attention_heads": 24,
            "swa_num_attention_heads": 24, "moe_intermediate_size": 1152, "n_routed_experts": 128,
            "loop_layer_index_start": 6, "loop_layer_index_end": 18, "loop_num_passes": 3, "loop_gate_rank": 64}
_LOOP_CONFIG = {"core_start": "loop_layer_index_start", "core_end": "loop_layer_index_end",
                "num_passes": "loop_num_passes", "gate_rank": "loop_gate_rank"}


def _read(r: Reader, d) -> dict:
    o = read_inkling2(r, d)
    given = r.mapping("loop_config") if r.has("loop_config") else {}
    loop = {}
    for name, field in _LOOP_CONFIG.items():  # loop_config's value over the field's (the class's __post_init__)
        if name in given:
            value = given[name]
            if not isinstance(value, int) or isinstance(value, bool):
                raise r.fail("loop_config", f"{name} = {value!r} is not an integer")
            loop[field] = value
            r.ignore(field, "superseded by loop_config")
        else:
            loop[field] = r.int(field, d(field))
    start, end, passes, rank = (loop[f] for f in _LOOP_CONFIG.values())
    block, n = o["attn_res_block_size"], o["num_decoder_layers"]
    key = "loop_config" if given else None
    # Inkling2LoopTextConfig.validate_architecture's rules
    if passes < 1:
        raise r.fail(key or "loop_num_passes", f"loop_num_passes = {passes}: at least 1")
    if start <= 0 or start % block:
        raise r.fail(key or "loop_layer_index_start", f"loop_layer_index_start = {start}: above 0 and a multiple of "
                                                      f"n_layers_per_attn_res_block ({block})")
    if end % block:
        raise r.fail(key or "loop_layer_index_end", f"loop_layer_index_end = {end}: a multiple of "
                                                    f"n_layers_per_attn_res_block ({block})")
    if end > n:
        raise r.fail(key or "loop_layer_index_end", f"loop_layer_index_end = {end}: past the {n} layers")
    if passes > 1 and end > start:
        o["layer_loops"] = (f"{start}-{end - 1}*{passes}",)
        if rank < 1:
            raise r.fail(key or "loop_gate_rank", f"loop_gate_rank = {rank}: the message gates' rank, at least 1")
        o["loop_message_rank"] = rank
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
