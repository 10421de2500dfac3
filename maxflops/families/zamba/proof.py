"""Zamba's shared block on the proof side: its reference kernel (attention over [hidden, embedding] with optional
per-depth q/k/v adapters, the gated MLP with its adapter, the hybrid layer's linear), its Flax layer, its part of the
reduced model and its bench case. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import dense
from ..attention import GLOBAL
from ..attention.proof import attention
from . import head_dim


def zamba_block(p, x, emb, H, Hkv, adapters=False, impl="ideal", block_q=1, block_kv=1):
    """The shared block at one depth: x [B, L, D] the layer's input, emb [B, L, D] the original embedding (its head
    width read off wq)."""
    B, L, D = x.shape
    hd = p["wq"].shape[1] // H
    xe = jnp.concatenate([x, emb], -1)
    with jax.named_scope("qkv_proj"):
        q, k, v = dense(xe, p["wq"]), dense(xe, p["wk"]), dense(xe, p["wv"])
        if adapters:
            q = q + dense(dense(xe, p["aq"][0]), p["aq"][1])
            k = k + dense(dense(xe, p["ak"][0]), p["ak"][1])
            v = v + dense(dense(xe, p["av"][0]), p["av"][1])
    q, k, v = q.reshape(B, L, H, hd), k.reshape(B, L, Hkv, hd), v.reshape(B, L, Hkv, hd)
    with jax.named_scope("core_attention"):
        o = attention(q, k, v, GLOBAL, 0, impl, block_q, block_kv)
    with jax.named_scope("out_proj"):
        h = dense(o.reshape(B, L, H * hd), p["wo"])
    with jax.named_scope("mlp"):
        gu = dense(h, p["gate_up"]) + dense(dense(h, p["adapter"][0]), p["adapter"][1])
        g, u = jnp.split(gu, 2, -1)
        h = dense(jax.nn.gelu(g) * u, p["down"])
    with jax.named_scope("block_linear"):
        return dense(h, p["linear"])


KERNELS = (zamba_block,)


def params(p, D, H, Hkv, I, r, adapters, hd=0):
    """The block's parameters, each made by ``p(name, shape)``; hd 0: 2 D / H."""
    hd = head_dim(D, H, hd)
    out = {"wq": p("wq", (2 * D, H * hd)), "wk": p("wk", (2 * D, Hkv * hd)), "wv": p("wv", (2 * D, Hkv * hd)),
           "wo": p("wo", (H * hd, D)), "gate_up": p("gate_up", (D, 2 * I)),
           "adapter": (p("adapter_a", (D, r)), p("adapter_b", (r, 2 * I))), "down": p("down", (I, D)),
           "linear": p("linear", (D, D))}
    if adapters:
        for n in ("q", "k", "v"):
            out["a" + n] = (p(f"a{n}_a", (2 * D, r)), p(f"a{n}_b", (r, H * hd)))
    return out


def layer(c, kind, p, h, top_idx, aux):
    """The shared block, its embedding input stood in by the layer's input (the same widths: the same matmuls)."""
    D = h.shape[-1]
    prm = params(p, D, c["num_query_heads"], c["num_kv_heads"], c["zamba_mlp_dim"], c["zamba_adapter_rank"],
                 c["zamba_attention_adapters"], c["zamba_head_dim"])
    out = zamba_block(prm, h, h, c["num_query_heads"], c["num_kv_heads"], c["zamba_attention_adapters"],
                      c["attention_impl"], c["attention_block_q"], c["attention_block_kv"])
    return out, top_idx, aux


def reduce(c) -> dict:
    """The reduced model's shared block: MLP 20 wide, adapters of rank 3 (on q/k/v as the model has them), a head
    width of its own 6 wide where the model gives one."""
    return dict(zamba_mlp_dim=20, zamba_adapter_rank=3 if c["zamba_adapter_rank"] else 0,
                zamba_head_dim=6 if c["zamba_head_dim"] else 0)


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


def bench_cases(ctx) -> list:
    """The block at the preset's sizes: H heads (KV heads alike), an MLP of 2 D, adapters of rank 8 on everything; its
    attention blocked in tiles of the preset's ``blk`` (the ideal kernel's per-row dots take too long to compile at
    the GPU preset's lengths)."""
    p, arr = ctx.p, ctx.arr
    B, L, D, H, blk = p["B"], p["L"], p["D"], p["H"], p["blk"]
    I, r = 2 * D, 8
    if (2 * D) % H:
        return []

    def run(mesh):
        prm = params(lambda name, shape: arr(*shape), D, H, H, I, r, True)
        return (jax.jit(lambda prm, x, e: zamba_block(prm, x, e, H, H, True, "blocked", blk, blk)),
                [prm, arr(B, L, D), arr(B, L, D)], 1)

    def analytic():
        b = engine(attention_layer_pattern="Z", ffn_layer_pattern="-", emb_dim=D, per_device_batch_size=B,
                   max_target_length=L, num_query_heads=H, num_kv_heads=H, zamba_mlp_dim=I, zamba_adapter_rank=r,
                   zamba_attention_adapters=True, attention_impl="blocked", attention_block_q=blk,
                   attention_block_kv=blk)
        return components(b, "qkv_proj", "core_attention", "out_proj", "mlp", "block_linear")

    return [Case("Zamba2 shared block (reference kernel)", f"B={B} L={L} heads={H} D={D} MLP {I} adapters {r} "
                 f"tile {blk}", run,
                 analytic, module="lowered")]
