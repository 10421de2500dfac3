"""The figures MaxText asks its users to type for splash attention's cost estimate.

MaxText 0.2.5 passes ``cost_estimate_flops_fwd`` and ``cost_estimate_flops_bwd`` (-1: none) to tokamax's splash
kernel as the FLOPs of one call of its forward and of its backward kernel (tokamax's backward is always fused: one
kernel for dq, dk and dv). XLA uses the figure to schedule communication around the kernel; without one it sees
the kernel as free. One call is one sequence on one device's heads: MaxText maps the kernel over the device's batch
(the figure is multiplied by it, as the exported program shows) inside its shard_map.
"""

from __future__ import annotations


def splash_cost_estimates(config, tensor_shards: int = 1, **overrides) -> dict:
    """``{"cost_estimate_flops_fwd": int, "cost_estimate_flops_bwd": int, "note": str}`` for a MaxText config
    (its object, a YAML-loaded or MaxText-keyed mapping, or a maxflops config with ``attention_impl='blocked'``):
    the tiles splash visits over one sequence of ``max_target_length`` (every tile its mask touches: the kernel's
    tiles for unpacked rows; packed rows let tokamax skip more), times the matmuls of a tile (forward QK^T and PV;
    fused backward QK^T, dO V^T, P^T dO, dS^T Q and dS K), for all the model's heads: where a mesh shards the heads
    (a tensor axis), one call holds 1/size of them: ``tensor_shards`` is that size (the figures are divided by it;
    the query heads must split evenly). MaxText takes one value for every layer: where windowed and global layers
    differ, the largest (a global layer's) is given and the note says so."""
    from ..account import count
    from ..config import validate
    from .objects import from_maxtext, is_maxtext_config

    c = from_maxtext(config) if is_maxtext_config(config) else config
    resolved = validate({**validate(c), **overrides})
    if resolved["attention_impl"] != "blocked":
        raise ValueError(f"config key 'attention_impl': {resolved['attention_impl']!r}; the cost estimates are "
                         "splash's, for MaxText's attention='flash' (attention_impl='blocked')")
    heads = resolved["num_query_heads"]
    if isinstance(tensor_shards, bool) or not isinstance(tensor_shards, int) or tensor_shards < 1 \
            or heads % tensor_shards:
        raise ValueError(f"tensor_shards: {tensor_shards!r}; the size of the mesh axis that shards the heads, a "
                         f"positive divisor of num_query_heads ({heads})")
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
    fwd, bwd = fwd // tensor_shards, bwd // tensor_shards        # every head costs the same: exact
    note = (f"one call: one sequence of {resolved['max_target_length']} tokens on the device's "
            f"{heads // tensor_shards} of {heads} query heads" + (f" (heads over {tensor_shards} tensor shards)"
                                                                   if tensor_shards > 1 else "")
            + f", tiles {resolved['attention_block_q']}x{resolved['attention_block_kv']}")
    if len(per_layer) > 1:
        note += (f"; the layers differ ({len(per_layer)} values: windowed or chunked layers visit fewer tiles), the "
                 "largest is given")
    return {"cost_estimate_flops_fwd": fwd, "cost_estimate_flops_bwd": bwd, "note": note}
