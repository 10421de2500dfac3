"""RWKV-4's time mix on the proof side: its reference kernel (the token shift, key, value and receptance, the WKV
recurrence per channel, the receptance's gate, the output), its Flax layer, its part of the reduced model and its
bench case. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import dense
from ..base import NO_FFN


def _shift(x):
    """The previous token of each position (zeros before the first)."""
    return jnp.concatenate([jnp.zeros_like(x[:, :1]), x[:, :-1]], axis=1)


def time_mix(p, x):
    """x [B, L, D]. Parameters: mix_k, mix_v, mix_r [D]; key, value, receptance [D, A]; time_decay, time_first [A];
    output [A, D]."""
    prev = _shift(x)
    mixed = {n: x * p["mix_" + n] + prev * (1 - p["mix_" + n]) for n in ("k", "v", "r")}
    with jax.named_scope("qkv_proj"):
        k, v, r = (dense(mixed[n], p[w]) for n, w in (("k", "key"), ("v", "value"), ("r", "receptance")))
    w, u = -jnp.exp(p["time_decay"]), p["time_first"]

    def step(state, kv):  # the WKV recurrence: per channel, elementwise
        num, den, top = state
        k_t, v_t = kv
        m = jnp.maximum(top, u + k_t)
        out = (jnp.exp(top - m) * num + jnp.exp(u + k_t - m) * v_t) / (jnp.exp(top - m) * den + jnp.exp(u + k_t - m))
        m2 = jnp.maximum(top + w, k_t)
        num = jnp.exp(top + w - m2) * num + jnp.exp(k_t - m2) * v_t
        den = jnp.exp(top + w - m2) * den + jnp.exp(k_t - m2)
        return (num, den, m2), out

    B, A = x.shape[0], k.shape[-1]
    init = (jnp.zeros((B, A), x.dtype), jnp.zeros((B, A), x.dtype), jnp.full((B, A), -1e30, x.dtype))
    _, wkv = jax.lax.scan(step, init, (k.transpose(1, 0, 2), v.transpose(1, 0, 2)))
    with jax.named_scope("out_proj"):
        return dense(jax.nn.sigmoid(r) * wkv.transpose(1, 0, 2), p["output"])


KERNELS = (time_mix,)


def params(p, D, A):
    return {"mix_k": p("mix_k", (D,)), "mix_v": p("mix_v", (D,)), "mix_r": p("mix_r", (D,)),
            "key": p("key", (D, A)), "value": p("value", (D, A)), "receptance": p("receptance", (D, A)),
            "time_decay": p("time_decay", (A,)), "time_first": p("time_first", (A,)), "output": p("output", (A, D))}


def layer(c, kind, p, h, top_idx, aux):
    """The time mix; and, with the layer's FFN, the channel mix's receptance gate (in the model it gates the FFN's
    output; here its sigmoid joins the mixer's: the same D -> D matmul on a D-wide input)."""
    D = h.shape[-1]
    out = time_mix(params(p, D, c["rwkv_attention_dim"] or D), h)
    if kind.ffn != NO_FFN:
        with jax.named_scope("rwkv_receptance"):
            out = out + jax.nn.sigmoid(dense(_shift(h), p("channel_receptance", (D, D))))
    return out, top_idx, aux


def reduce(c) -> dict:
    """The reduced model's time mix: 24 wide where the model has a width of its own (else the reduced emb_dim)."""
    return dict(rwkv_attention_dim=24 if c["rwkv_attention_dim"] else 0)


MATVEC = ""  # projections only: they stay matrix-matrix dots


def bench_cases(ctx) -> list:
    """RWKV-4's time mix at the preset's width."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]

    def run(mesh):
        prm = {"mix_k": arr(D), "mix_v": arr(D), "mix_r": arr(D), "key": arr(D, D), "value": arr(D, D),
               "receptance": arr(D, D), "time_decay": arr(D), "time_first": arr(D), "output": arr(D, D)}
        return jax.jit(time_mix), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="W", ffn_layer_pattern="-", emb_dim=D, per_device_batch_size=B,
                   max_target_length=L)
        return components(b, "qkv_proj", "out_proj")

    return [Case("RWKV-4 time mix (reference kernel)", f"B={B} L={L} D={D}", run, analytic)]
