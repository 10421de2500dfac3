"""The gated short conv's proof side: its reference kernel (in_proj to B, C, x; B x; the causal depthwise conv; C
times it; out_proj), its Flax layer, its part of the reduced model and its bench case. Imports jax; the family's
analytic module does not."""

from __future__ import annotations

import jax

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def short_conv(p, x, K):
    """LFM2's short conv over x [B, L, D]. Parameters: in_proj [D, 3 D], conv [K, 1, D], out_proj [D, D]."""
    D = x.shape[-1]
    with jax.named_scope("qkv_proj"):
        bcx = dense(x, p["in_proj"])
    b, c, xs = bcx[..., :D], bcx[..., D:2 * D], bcx[..., 2 * D:]
    with jax.named_scope("short_conv"):
        y = causal_conv(b * xs, p["conv"], K)
    with jax.named_scope("out_proj"):
        return dense(c * y, p["out_proj"])


KERNELS = (short_conv,)


def params(p, D, K):
    return {"in_proj": p("in_proj", (D, 3 * D)), "conv": p("conv", (K, 1, D)), "out_proj": p("out_proj", (D, D))}


def layer(c, kind, p, h, top_idx, aux):
    K = c["short_conv_kernel"]
    return short_conv(params(p, h.shape[-1], K), h, K), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's short conv: its width is the reduced emb_dim; the conv <= 3 taps."""
    return dict(short_conv_kernel=min(c["short_conv_kernel"], 3))


MATVEC = ""  # projections and a depthwise conv: no matrix-vector dots to rewrite


def bench_cases(ctx) -> list:
    """LFM2's form: a 3-tap conv over the D channels."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    K = 3

    def run(mesh):
        prm = {"in_proj": arr(D, 3 * D), "conv": arr(K, 1, D), "out_proj": arr(D, D)}
        return jax.jit(lambda prm, x: short_conv(prm, x, K)), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="V", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                   short_conv_kernel=K)
        return components(b, "qkv_proj", "short_conv", "out_proj")

    return [Case("gated short conv (LFM2, reference kernel)", f"B={B} L={L} D={D} conv {K}", run, analytic)]
