"""The figures MaxText asks its users to type for splash attention's cost estimate.

MaxText 0.2.5 passes ``cost_estimate_flops_fwd`` and ``cost_estimate_flops_bwd`` (-1: none) to tokamax's splash
kernel as the FLOPs of one call of its forward and of its backward kernel (tokamax's backward is always fused: one
kernel for dq, dk and dv). XLA uses the figure to schedule communication around the kernel; without one it sees
the kernel as free. One call is one sequence on one device's heads: MaxText maps the kernel over the device's batch
(the figure is multiplied by it, as the exported program shows) inside its shard_map.
"""

from __future__ import annotations


def splash_cost_estimates(config, **overrides) -> dict:
    """``{"cost_estimate_flops_fwd": int, "cost_estimate_flops_bwd": int, "note": str}`` for a MaxText config
    (its object, a YAML-loaded or MaxText-keyed mapping, or a maxflops config with ``attention_impl='blocked'``):
    the tiles splash visits over one sequence of ``max_target_length`` (every tile its mask touches: the kernel's
    tiles for unpacked rows; packed rows let tokamax skip more), times the matmuls of a tile (forward QK^T and PV;
    fused backward QK^T, dO V^T, P^T dO, dS^T Q and dS K), for all the model's heads: where a mesh shards the heads
    (a tensor axis), one call holds 1/size of them. MaxText takes one value for every layer: where windowed and
    global layers differ, the largest (a global layer's) is given and the note says so."""
    from ..account import count
    from ..config import validate
    from .objects import from_maxtext, is_maxtext_config

    c = from_maxtext(config) if is_maxtext_config(config) else config
    resolved = validate({**validate(c), **overrides})
    if resolved["attention_impl"] != "blocked":
        raise ValueError(f"config key 'attention_impl': {resolved['attention_impl']!r}; the cost estimates are "
                         "splash's, for MaxText's attention='flash' (attention_impl='blocked')")
    knobs = dict(per_device_batch_size=1, remat_policy="none", **overrides)
    forward = count(c, mode="prefill", **knobs)
    train = count(c, mode="train", gradient_accumulation_steps=1, flash_backward_recompute=True,
                  flash_backward_split=False, **knobs)
    rows = [(f.name, f.hardware_components.get("core_attention", 0), t.hardware_components.get("core_attention", 0))
            for f, t in zip(forward.layers, train.layers) if f.group == "decoder"]
    rows = [r for r in rows if r[1]]
    if not rows:
        raise ValueError("the model has no attention layer splash runs")
    per_layer = {(fwd, tr - fwd) for _, fwd, tr in rows}
    fwd, bwd = max(per_layer)
    note = (f"one call: one sequence of {resolved['max_target_length']} tokens on the device's heads, tiles "
            f"{resolved['attention_block_q']}x{resolved['attention_block_kv']}; heads sharded over a tensor axis: "
            "divide by its size")
    if len(per_layer) > 1:
        note += (f"; the layers differ ({len(per_layer)} values: windowed or chunked layers visit fewer tiles), the "
                 "largest is given")
    return {"cost_estimate_flops_fwd": fwd, "cost_estimate_flops_bwd": bwd, "note": note}
