"""Per-device counts of SPMD-partitioned programs against the analytic per-device count.

Run it in a process whose XLA_FLAGS give several host devices, e.g.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python -m maxflops.xla.spmd

It prints one JSON line per check: the analytic per-device figure and the loop-aware matmul count of the
compiled (partitioned, per-device) module. Shapes avoid dims of 1, which the optimized module rewrites.
"""

from __future__ import annotations

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import maxflops

from ..families.attention.proof import attention
from ..proofkit import kernels as K
from . import model as M
from .hlo import count_matmuls


def batch_sharded_train_step(name: str, n: int, **knobs) -> dict:
    """The reduced model's train step with the batch split over n devices: per-device count vs the analytic
    count at per_device_batch_size = global batch / n."""
    c, model, params, _ = M.build(maxflops.load_config(name), abstract=True, mode="train", **knobs)
    mesh = Mesh(np.array(jax.devices()[:n]), ("data",))
    tokens = jax.ShapeDtypeStruct((n, M.REDUCED_LENGTH), jnp.int32, sharding=NamedSharding(mesh, P("data")))
    step, opt = M.train_step_fn(model)
    state = jax.eval_shape(opt.init, params)
    repl = NamedSharding(mesh, P())
    params, state = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=repl), (params, state))
    got = count_matmuls(jax.jit(step), params, state, tokens).matmul_flops
    per_device = maxflops.count(c, per_device_batch_size=1).hardware_flops
    return {"check": f"{name} train step, batch over {n} devices", "analytic": per_device, "xla": got}


def head_sharded_attention(n: int) -> dict:
    """Attention with the heads split over n devices (tensor parallel): per device = analytic / n."""
    B, L, H, d = 2, 12, 2 * n, 8
    mesh = Mesh(np.array(jax.devices()[:n]), ("model",))
    spec = NamedSharding(mesh, P(None, None, "model", None))
    args = [jax.ShapeDtypeStruct((B, L, H, d), jnp.float32, sharding=spec) for _ in range(3)]
    fn = jax.jit(lambda q, k, v: attention(q, k, v, "global", 0, "dense"), out_shardings=spec)
    got = count_matmuls(fn, *args).matmul_flops
    total = maxflops.count(maxflops.model_config(num_decoder_layers=1, num_query_heads=H, num_kv_heads=H,
                                                 head_dim=d, max_target_length=L, per_device_batch_size=B,
                                                 mode="prefill", attention_impl="dense"))
    return {"check": f"attention, heads over {n} devices", "analytic": total.hardware_components["core_attention"] // n,
            "xla": got}


def hidden_sharded_mlp(n: int) -> dict:
    """A gated MLP with its hidden dim split over n devices (column- then row-parallel): per device = 1/n."""
    B, L, D, F = 2, 12, 16, 4 * n
    mesh = Mesh(np.array(jax.devices()[:n]), ("model",))
    col, row, repl = (NamedSharding(mesh, s) for s in (P(None, "model"), P("model", None), P()))
    p = {"up": jax.ShapeDtypeStruct((D, F), jnp.float32, sharding=col),
         "gate": jax.ShapeDtypeStruct((D, F), jnp.float32, sharding=col),
         "down": jax.ShapeDtypeStruct((F, D), jnp.float32, sharding=row)}
    x = jax.ShapeDtypeStruct((B, L, D), jnp.float32, sharding=repl)
    got = count_matmuls(jax.jit(lambda p, x: K.mlp(p, x)), p, x).matmul_flops
    total = maxflops.count(maxflops.model_config(num_decoder_layers=1, emb_dim=D, mlp_dim=F, max_target_length=L,
                                                 per_device_batch_size=B, mode="prefill"))
    return {"check": f"gated MLP, hidden over {n} devices", "analytic": total.hardware_components["mlp"] // n,
            "xla": got}


def checks(n: int) -> list[dict]:
    # The optimized module rewrites dots without a contraction or without a free dimension on one side into
    # multiplies: per-query attention rows of one key, ideal MoE's per-token weight gradients (outer products),
    # DSA's per-query gathered keys and the indexer's head reduction (matrix-vector products). So these
    # per-device checks use dense attention and capacity MoE, on configs without DSA; the lowered module
    # proves those forms (tests/xla/test_xla_model.py).
    knobs = dict(attention_impl="dense", moe_impl="capacity", capacity_factor=1.5)
    return [batch_sharded_train_step("llama3.1-8b", n, **knobs),
            batch_sharded_train_step("mixtral-8x7b", n, **knobs),
            batch_sharded_train_step("deepseek3-671b", n, **knobs),
            batch_sharded_train_step("gemma3-27b", n, **knobs),
            head_sharded_attention(n), hidden_sharded_mlp(n)]


def main() -> int:
    n = jax.device_count()
    if n < 2:
        print(json.dumps({"error": "needs several devices: set XLA_FLAGS=--xla_force_host_platform_device_count=8 "
                                   "before starting Python"}))
        return 2
    ok = True
    for row in checks(n):
        row["equal"] = row["analytic"] == row["xla"]
        ok &= row["equal"]
        print(json.dumps(row))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
