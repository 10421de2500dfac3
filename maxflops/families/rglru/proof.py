"""Griffin's recurrent block on the proof side: its reference kernel (linear_y, linear_x, the causal conv, the
RG-LRU's block-diagonal gates and its elementwise recurrence, the gate by gelu(y), linear_out), its Flax layer, its
part of the reduced model and its bench case. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def recurrent_block(p, x, H, K):
    """x [B, L, D]. Parameters: linear_y, linear_x [D, W], conv [K, 1, W], input_gate and recurrent_gate
    [H, W / H, W / H] (block-diagonal), recurrent_param [W], linear_out [W, D]."""
    B, L, _ = x.shape
    W = p["linear_x"].shape[1]
    with jax.named_scope("qkv_proj"):
        y = jax.nn.gelu(dense(x, p["linear_y"]))
        xb = dense(x, p["linear_x"])
    with jax.named_scope("rglru_conv"):
        xb = causal_conv(xb, p["conv"], K)
    blocks = xb.reshape(B, L, H, W // H)
    with jax.named_scope("rglru_gates"):
        gate_x = jax.nn.sigmoid(jnp.einsum("blhi,hij->blhj", blocks, p["input_gate"]).reshape(B, L, W))
        gate_a = jax.nn.sigmoid(jnp.einsum("blhi,hij->blhj", blocks, p["recurrent_gate"]).reshape(B, L, W))
    log_a = -8.0 * gate_a * jax.nn.softplus(p["recurrent_param"])
    a = jnp.exp(log_a)
    normed = xb * gate_x * jnp.sqrt(1 - jnp.exp(2 * log_a))

    def step(h, inputs):  # the recurrence: elementwise, one state per channel
        a_t, x_t = inputs
        h = a_t * h + x_t
        return h, h

    _, hs = jax.lax.scan(step, jnp.zeros((B, W), x.dtype), (a.transpose(1, 0, 2), normed.transpose(1, 0, 2)))
    with jax.named_scope("out_proj"):
        return dense(hs.transpose(1, 0, 2) * y, p["linear_out"])


KERNELS = (recurrent_block,)


def params(p, D, W, H, K):
    return {"linear_y": p("linear_y", (D, W)), "linear_x": p("linear_x", (D, W)), "conv": p("conv", (K, 1, W)),
            "input_gate": p("input_gate", (H, W // H, W // H)),
            "recurrent_gate": p("recurrent_gate", (H, W // H, W // H)),
            "recurrent_param": p("recurrent_param", (W,)), "linear_out": p("linear_out", (W, D))}


def layer(c, kind, p, h, top_idx, aux):
    D = h.shape[-1]
    H, K = c["rglru_num_heads"], c["rglru_conv_kernel"]
    return recurrent_block(params(p, D, c["rglru_width"] or D, H, K), h, H, K), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's recurrent block: 2 blocks, 24 wide where the model has a width of its own (else the
    reduced emb_dim), the conv <= 3 taps."""
    return dict(rglru_width=24 if c["rglru_width"] else 0, rglru_num_heads=2,
                rglru_conv_kernel=min(c["rglru_conv_kernel"], 3))


MATVEC = ""  # projections, block-diagonal gates and a depthwise conv stay matrix-matrix dots


def bench_cases(ctx) -> list:
    """RecurrentGemma's form: the width D in H blocks (H dividing D), a 4-tap conv."""
    p, arr = ctx.p, ctx.arr
    B, L, D, H = p["B"], p["L"], p["D"], p["H"]
    K = 4
    if D % H:
        return []

    def run(mesh):
        prm = {"linear_y": arr(D, D), "linear_x": arr(D, D), "conv": arr(K, 1, D),
               "input_gate": arr(H, D // H, D // H), "recurrent_gate": arr(H, D // H, D // H),
               "recurrent_param": arr(D), "linear_out": arr(D, D)}
        return jax.jit(lambda prm, x: recurrent_block(prm, x, H, K)), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="R", ffn_layer_pattern="-", emb_dim=D, per_device_batch_size=B,
                   max_target_length=L, rglru_num_heads=H, rglru_conv_kernel=K)
        return components(b, "qkv_proj", "rglru_conv", "rglru_gates", "out_proj")

    return [Case("Griffin recurrent block (RecurrentGemma, reference kernel)", f"B={B} L={L} D={D} blocks {H} "
                 f"conv {K}", run, analytic)]
