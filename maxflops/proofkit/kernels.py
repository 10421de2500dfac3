"""The trunk's reference JAX kernels: the dense projection, the FFN and the MoE layer (one form per ``moe_impl``).

Each mixer family's kernels live in its proof module (``maxflops.families.<name>.proof``, listed by
``maxflops.xla.registry.proof_of``). Each kernel issues exactly the matmuls its analytic hardware count says, so
that XLA's loop-aware matmul count of the jitted kernel equals the engine's figure (``tests/xla/test_xla_kernels.py``);
everything else (masks, softmax, gates, top-k, gathers) is elementwise or data movement. Scopes
(``jax.named_scope``) carry the engine's component names so that a module's matmuls can be attributed per
component.
"""

from __future__ import annotations


import jax
import jax.numpy as jnp

from ..terms import capacity_slots

NEG = -1e30


# --- projections ---------------------------------------------------------------------------------------------------

def dense(x, w, scope=None):
    if scope:
        with jax.named_scope(scope):
            return jnp.einsum("...d,df->...f", x, w)
    return jnp.einsum("...d,df->...f", x, w)


def rms(x):
    """RMS norm without a scale over the last axis (elementwise)."""
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)


# --- FFN and MoE -------------------------------------------------------------------------------------------------

def mlp(p, x, gated=True, prefix=""):
    """Gated: down(act(x W_gate) * (x W_up)); plain: down(act(x W_up))."""
    h = dense(x, p[prefix + "up"])
    if gated:
        h = jax.nn.silu(dense(x, p[prefix + "gate"])) * h
    else:
        h = jax.nn.gelu(h)
    return dense(h, p[prefix + "down"])


def moe(p, x, num_experts, k, gated=True, impl="ideal", capacity_factor=1.0, shared=0, shared_gate=False,
        experts_gated=None, product_keys=False):
    """Top-k MoE over the tokens of x [B, L, D]. ``ideal``: each token runs its k experts (their weights are
    gathered per token); ``capacity``: per sequence, every expert runs ceil(cf * L * k / E) slots (padded,
    overflow dropped); ``dense``: every expert runs every token. Router D -> E; shared experts and their gate
    as dense layers. With ``p["latent_in"]`` [D, X] and ``p["latent_out"]`` [X, D] a latent MoE: the routed
    experts take x projected to X and their sum is projected back (the router and shared experts see x)."""
    B, L, D = x.shape
    xt = x.reshape(B * L, D)
    T = B * L
    with jax.named_scope("moe_router"):
        if "router_down" in p:  # an MLP router (ZAYA's): D -> R, normed, two GELU layers R -> R, then R -> E
            r = dense(xt, p["router_down"])
            r = r * jax.lax.rsqrt(jnp.mean(r * r, -1, keepdims=True) + 1e-6)
            r = jax.nn.gelu(dense(jax.nn.gelu(dense(r, p["router_fc1"])), p["router_fc2"]))
            logits = dense(r, p["router"])
        elif product_keys:  # Doge's: two half-key scores per token, every pair's sum scores an expert (no matmul)
            half = dense(xt, p["router"])
            n = half.shape[-1] // 2
            logits = (half[:, :n, None] + half[:, None, n:]).reshape(T, n * n)
        else:
            logits = dense(xt, p["router"])
    logits, shared_logits = logits[:, :num_experts], logits[:, num_experts:]  # (a router that scores the shared
    gate_w, idx = jax.lax.top_k(logits, k)  # experts too: Inkling's)
    gate_w = jax.nn.softmax(gate_w, -1)
    experts_gated = gated if experts_gated is None else experts_gated
    names = ["up", "down"] + (["gate"] if experts_gated else [])
    latent = "latent_in" in p
    x_in, xt_in = x, xt
    if latent:
        with jax.named_scope("moe_latent_proj"):
            xt_in = dense(xt, p["latent_in"])
        x_in = xt_in.reshape(B, L, -1)
    out = _routed(p, x_in, xt_in, idx, gate_w, names, num_experts, k, experts_gated, impl, capacity_factor)
    if latent:
        with jax.named_scope("moe_latent_proj"):
            out = dense(out, p["latent_out"])
    if shared:
        with jax.named_scope("moe_shared"):
            s = sum(mlp(p, xt, gated, prefix=f"shared{i}_") for i in range(shared))
            if shared_gate:
                s = jax.nn.sigmoid(dense(xt, p["shared_gate"])) * s
            if shared_logits.shape[-1]:
                s = jax.nn.sigmoid(shared_logits).mean(-1, keepdims=True) * s
            out = out + s
    return out.reshape(B, L, D)


def _routed(p, x, xt, idx, gate_w, names, num_experts, k, gated, impl, capacity_factor):
    """The routed experts over the tokens xt [T, X] (x: the same as [B, L, X]), weighted by the router's gates."""
    B, L, X = x.shape
    T = B * L
    with jax.named_scope("moe_routed"):
        if impl == "ideal":
            w = {n: p["experts_" + n][idx] for n in names}  # [T, k, ...]
            y = _expert_ffn(xt, w, gated, "td,tkdf->tkf", "tkf,tkfd->tkd")
            out = (gate_w[..., None] * y).sum(1)
        elif impl == "dense":
            w = {n: p["experts_" + n] for n in names}
            y = _expert_ffn(xt, w, gated, "td,edf->tef", "tef,efd->ted")
            weights = jnp.zeros((T, num_experts), xt.dtype).at[jnp.arange(T)[:, None], idx].set(gate_w)
            out = (weights[..., None] * y).sum(1)
        else:  # each sequence (row of the batch) is one dispatch group
            out = jax.vmap(lambda xg, ig, wg: _capacity_group(p, xg, ig, wg, num_experts, k, gated,
                                                             capacity_factor))(
                x, idx.reshape(B, L, k), gate_w.reshape(B, L, k)).reshape(T, X)
    return out


def _expert_ffn(x, w, gated, up_spec, down_spec):
    """An expert FFN in any layout: gated act(x W_gate) * (x W_up), or plain act(x W_up), then W_down."""
    h = jnp.einsum(up_spec, x, w["up"])
    h = jax.nn.silu(jnp.einsum(up_spec, x, w["gate"])) * h if gated else jax.nn.gelu(h)
    return jnp.einsum(down_spec, h, w["down"])


def _capacity_group(p, xt, idx, gate_w, num_experts, k, gated, capacity_factor):
    """One dispatch group: every expert runs C = ceil(cf * tokens * k / E) slots; overflow is dropped."""
    T, D = xt.shape
    C = capacity_slots(T, k, num_experts, capacity_factor)  # the engine's own rule
    onehot = jax.nn.one_hot(idx.reshape(-1), num_experts, dtype=jnp.int32)  # [T*k, E]
    pos = (jnp.cumsum(onehot, axis=0) * onehot - 1).max(-1)  # slot of each (token, choice) in its expert
    keep = pos < C
    tok = jnp.repeat(jnp.arange(T), k)
    slot_tok = jnp.full((num_experts, C), T).at[idx.reshape(-1), jnp.where(keep, pos, C)].set(tok, mode="drop")
    xe = jnp.concatenate([xt, jnp.zeros((1, D), xt.dtype)], 0)[slot_tok]  # [E, C, D]
    w = {n: p["experts_" + n] for n in ("up", "down", "gate") if "experts_" + n in p}
    ye = _expert_ffn(xe, w, gated, "ecd,edf->ecf", "ecf,efd->ecd")
    ye = jnp.concatenate([ye.reshape(-1, D), jnp.zeros((1, D), xt.dtype)], 0)
    flat_slot = jnp.where(keep, idx.reshape(-1) * C + pos, num_experts * C)
    return (ye[flat_slot].reshape(T, k, D) * gate_w[..., None]).sum(1)


def causal_conv(x, w, K: int):
    """Causal depthwise conv over the channels of x [B, L, C] with the kernel w [K, 1, C] (K - 1 zeros before): the
    short conv of Mamba-1 / Mamba-2, the gated delta net and product, and Kimi delta attention."""
    return jax.lax.conv_general_dilated(x, w, window_strides=(1,), padding=[(K - 1, 0)],
                                        dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=x.shape[-1])
