"""The benchmark's kernels: presets of sizes per backend, and one ``Case`` per kernel with its runner and the
engine's analytic figures for exactly that kernel."""

from __future__ import annotations

import dataclasses
from typing import Callable


PRESETS = {
    # batch, length, heads, kv heads, head dim, window, chunk, tile, top-k, emb, ffn, experts, top-k experts,
    # MLA (q_lora, kv_lora, nope, rope, v), indexer (heads, dim), train-step reduction
    "cpu": dict(B=2, L=1024, H=8, Hkv=2, d=64, W=256, C=256, blk=256, K=128, D=512, F=1024, E=8, k=2,
                mla=(256, 128, 32, 16, 32), idx=(4, 32), train=dict(emb_dim=64, mlp_dim=128, moe_mlp_dim=32,
                                                                   max_target_length=64, per_device_batch_size=2)),
    # dsa: (batch, length, top-k) of the gathered sparse-attention row, which materializes K keys per query.
    "gpu": dict(B=4, L=8192, H=32, Hkv=8, d=128, W=1024, C=2048, blk=512, K=2048, D=4096, F=2048, E=64, k=8,
                dsa=(1, 4096, 512),
                mla=(1536, 512, 128, 64, 128), idx=(64, 128), train=dict(emb_dim=1024, mlp_dim=4096,
                                                                      moe_mlp_dim=512, max_target_length=2048,
                                                                      per_device_batch_size=4)),
}
PRESETS["tpu"] = PRESETS["gpu"]
QUICK = {
    "cpu": dict(B=2, L=256, H=4, Hkv=2, d=32, W=64, C=64, blk=64, K=32, D=128, F=256, E=8, k=2,
                mla=(64, 32, 16, 8, 16), idx=(2, 16), train=dict(max_target_length=32, per_device_batch_size=2)),
    "gpu": dict(B=2, L=2048, H=16, Hkv=4, d=128, W=512, C=512, blk=256, K=512, D=2048, F=1024, E=16, k=4,
                mla=(512, 256, 64, 32, 64), idx=(16, 64), train=dict(emb_dim=256, mlp_dim=1024, moe_mlp_dim=128,
                                                                    max_target_length=256, per_device_batch_size=2)),
}
QUICK["tpu"] = QUICK["gpu"]


@dataclasses.dataclass
class Case:
    name: str
    shapes: str
    run: Callable  # (mesh) -> (jitted fn, args, shard divisor)
    analytic: Callable  # () -> (model FLOPs, hardware FLOPs), global
    module: str = "optimized"  # which XLA module the equality is checked on
    why: str = ""
    only: tuple = ()  # backends this kernel needs ('tpu',): skipped elsewhere
    # (the engine's HBM bytes for what this kernel streams, the bytes of the arrays it streams), from the run's
    # arguments: the engine's bytes view checked against the kernel's own arrays
    engine_bytes: Callable | None = None


_ENGINE_BASE = dict(num_decoder_layers=1, emb_dim=16, vocab_size=32, mlp_dim=24)


def _engine(mode="prefill", **kw):
    import maxflops

    return maxflops.count(maxflops.model_config(**{**_ENGINE_BASE, "mode": mode, **kw}))


def _component(b, name):
    return b.components.get(name, 0), b.hardware_components.get(name, 0)


def build_cases(p: dict, backend: str, dtype, model_name: str) -> list[Case]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from ..xla import kernels as K

    B, L, H, Hkv, d = p["B"], p["L"], p["H"], p["Hkv"], p["d"]
    rng = np.random.default_rng(0)

    def arr(*shape, dt=None):
        return jnp.asarray(rng.normal(size=shape), dt or dtype)

    def attn_specs(mesh):
        """Batch over 'data' and heads over 'model' where they divide evenly; the divisor is the number of
        devices the work is split over (the rest replicate it)."""
        from jax.sharding import NamedSharding, PartitionSpec as P

        if mesh is None:
            return None, 1
        data = "data" if "data" in mesh.shape and B % mesh.shape["data"] == 0 else None
        model = "model" if "model" in mesh.shape and Hkv % mesh.shape["model"] == 0 else None
        div = (mesh.shape[data] if data else 1) * (mesh.shape[model] if model else 1)
        return NamedSharding(mesh, P(data, None, model, None)), div

    def sharded(mesh, args, spec_fn=attn_specs):
        sh, div = spec_fn(mesh)
        if sh is None:
            return args, 1
        return [jax.device_put(a, sh) if a.ndim == 4 else a for a in args], div

    cases = []
    letters = {"global": "G", "window": "L", "chunk": "C"}
    attn_cfg = dict(max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=Hkv, head_dim=d)

    def attention_case(mixer, span, impl):
        label = {"global": "causal", "window": f"sliding window {span}", "chunk": f"chunked {span}"}[mixer]

        def run(mesh):
            args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
            fn = jax.jit(lambda q, k, v: K.attention(q, k, v, mixer, span, impl, p["blk"], p["blk"]))
            return fn, args, div

        def analytic():
            b = _engine(attention_layer_pattern=letters[mixer], sliding_window_size=span if mixer == "window" else 0,
                        chunk_attn_window_size=span if mixer == "chunk" else 0, attention_impl=impl,
                        attention_block_q=p["blk"], attention_block_kv=p["blk"], **attn_cfg)
            return _component(b, "core_attention")

        shapes = f"B={B} L={L} H={H}/{Hkv} d={d}" + (f" tile {p['blk']}" if impl == "blocked" else "")
        return Case(f"attention {label} ({impl}, reference kernel)", shapes, run, analytic)

    # 1. jax.nn.dot_product_attention: the XLA form computes the full square, masked; cuDNN on GPU.
    def dpa_case(implementation):
        def run(mesh):
            args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
            fn = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                                     implementation=implementation))
            return fn, args, div

        def analytic():
            impl = "dense" if implementation == "xla" else "blocked"
            b = _engine(attention_impl=impl, attention_block_q=128, attention_block_kv=128, **attn_cfg)
            return _component(b, "core_attention")

        why = "" if implementation == "xla" else "cuDNN flash attention: a custom call XLA cannot count; " \
                                                   "hardware assumes 128 x 128 tiles"
        return Case(f"attention causal (jax.nn.dot_product_attention, {implementation})",
                    f"B={B} L={L} H={H}/{Hkv} d={d}", run, analytic, module="none" if implementation != "xla"
                    else "optimized", why=why, only=("gpu",) if implementation == "cudnn" else ())

    # Decode: one new token per sequence against a KV cache (memory-bound: the cache is read once).
    S = p.get("decode_kv", 4 * L)

    def decode_run(mesh):
        args, div = sharded(mesh, [arr(B, 1, H, d), arr(B, S, Hkv, d), arr(B, S, Hkv, d)])
        return jax.jit(lambda q, k, v: K.attention_decode(q, k, v)), args, div

    def decode_cfg():
        return dict(mode="decode", decode_kv_length=S - 1, per_device_batch_size=B, num_query_heads=H,
                    num_kv_heads=Hkv, head_dim=d, kv_cache_bytes=jnp.dtype(dtype).itemsize)

    def decode_analytic():
        return _component(_engine(**decode_cfg()), "core_attention")

    def decode_bytes(args):
        import maxflops

        t = maxflops.decode_traffic(maxflops.model_config(**_ENGINE_BASE, **decode_cfg()))
        return t.components["kv_read"], args[1].nbytes + args[2].nbytes

    cases.append(Case(f"decode attention, GQA, KV cache {S} (reference kernel)", f"B={B} S={S} H={H}/{Hkv} d={d}",
                      decode_run, decode_analytic, engine_bytes=decode_bytes))
    cases.append(dpa_case("xla"))
    cases.append(dpa_case("cudnn"))
    cases.append(attention_case("global", 0, "blocked"))
    cases.append(attention_case("window", p["W"], "blocked"))
    cases.append(attention_case("chunk", p["C"], "blocked"))

    # 2. Splash attention (Pallas, TPU only) with causal, local-window and chunked masks.
    for mask_name in ("causal", "local", "chunked"):
        cases.append(_splash_case(mask_name, p, arr, dtype))

    # 3. The DSA indexer's scoring pass, top-k, and gathered sparse attention in the absorbed (MQA) form.
    n, hd = p["idx"]
    ql, kl, nope, rope, v = p["mla"]
    D = p["D"]
    mla_cfg = dict(attention_type="mla", num_query_heads=H, num_kv_heads=H, q_lora_rank=ql, kv_lora_rank=kl,
                   qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=v, emb_dim=D, max_target_length=L,
                   per_device_batch_size=B)

    def indexer_run(mesh):
        prm = {"idx_wq": arr(ql, n * hd), "idx_wk": arr(D, hd), "idx_w": arr(D, n)}
        fn = jax.jit(lambda prm, x, q: K.indexer_scores(prm, x, q, n, hd, "blocked", p["blk"], p["blk"]))
        return fn, [prm, arr(B, L, D), arr(B, L, ql)], 1

    def indexer_analytic():
        b = _engine(use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"],
                    attention_impl="blocked", attention_block_q=p["blk"], attention_block_kv=p["blk"], **mla_cfg)
        m1, h1 = _component(b, "indexer_proj")
        m2, h2 = _component(b, "indexer_score")
        return m1 + m2, h1 + h2

    cases.append(Case("DSA indexer: projections + scoring (blocked)", f"B={B} L={L} heads={n}x{hd} D={D}",
                      indexer_run, indexer_analytic, module="lowered",
                      why="the optimizer rewrites the head reduction (a matrix-vector product) as multiply+reduce"))

    def topk_run(mesh):
        scores = jnp.where(jnp.tril(jnp.ones((L, L), bool)), arr(B, L, L, dt=jnp.float32), -1e30)
        return jax.jit(lambda s: K.topk_indices(s, p["K"])), [scores], 1

    cases.append(Case(f"top-k selection (K={p['K']} of L)", f"B={B} L={L}", topk_run, lambda: (0, 0),
                      module="none", why="no matmul: a sort, timed only"))

    dB, dL, dK = p.get("dsa", (B, L, p["K"]))

    def dsa_run(mesh):
        q = arr(dB, dL, H, kl + rope)
        k = arr(dB, dL, 1, kl + rope)
        vv = arr(dB, dL, 1, kl)
        scores = jnp.where(jnp.tril(jnp.ones((dL, dL), bool)), arr(dB, dL, dL, dt=jnp.float32), -1e30)
        top = K.topk_indices(scores, dK)
        return jax.jit(lambda q, k, vv, top: K.dsa_attention(q, k, vv, top, dK, "gather_k")), [q, k, vv, top], 1

    def dsa_analytic():
        b = _engine(use_sparse_indexer=True, index_topk=dK, dsa_impl="gather_k", mla_absorbed=True,
                    **{**mla_cfg, "max_target_length": dL, "per_device_batch_size": dB})
        return _component(b, "core_attention")

    cases.append(Case(f"DSA sparse attention, {dK} gathered keys (absorbed MLA)",
                      f"B={dB} L={dL} H={H} latent {kl}+{rope}", dsa_run, dsa_analytic))

    # DeepSeek-V4: a CSA layer's attention (its compressor, the block indexer, the window and the top-k blocks).
    m4, W4 = 4, p["W"]
    v4_cfg = dict(attention_type="compressed", attention_layer_pattern="S", num_query_heads=H, num_kv_heads=1,
                  head_dim=d, q_lora_rank=ql, emb_dim=D, sliding_window_size=W4, csa_compress_ratio=m4,
                  use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"] // m4,
                  max_target_length=L, per_device_batch_size=B, attention_impl="blocked", attention_block_q=p["blk"],
                  attention_block_kv=p["blk"], dsa_impl="dense")

    def v4_run(mesh):
        prm = {"c": {"wkv": arr(D, 2 * d), "wgate": arr(D, 2 * d)},
               "i": {"idx_wq": arr(ql, n * hd), "idx_w": arr(D, n), "idx_wkv": arr(D, 2 * hd),
                     "idx_wgate": arr(D, 2 * hd)}}

        def layer(prm, x, q_lat, q, kv):
            comp, _ = K.compress(prm["c"], x, m4, True, "compressor")
            scores, _ = K.compressed_indexer(prm["i"], x, q_lat, m4, n, hd, "blocked", p["blk"], p["blk"])
            top = K.compressed_topk(scores, p["K"] // m4)
            return K.compressed_attention(q, kv, comp, m4, W4, top, p["K"] // m4, "blocked", p["blk"], p["blk"],
                                          "dense")

        return jax.jit(layer), [prm, arr(B, L, D), arr(B, L, ql), arr(B, L, H, d), arr(B, L, 1, d)], 1

    def v4_analytic():
        b = _engine(**v4_cfg)
        parts = [_component(b, c) for c in ("compressor", "indexer_proj", "indexer_score", "core_attention")]
        return sum(m for m, _ in parts), sum(h for _, h in parts)

    cases.append(Case(f"DeepSeek-V4 CSA attention: compressor, block indexer, window {W4} + top-{p['K'] // m4} blocks "
                      f"of {m4}", f"B={B} L={L} H={H}/1 d={d} D={D} tile {p['blk']}", v4_run, v4_analytic,
                      module="lowered", why="the optimizer rewrites the indexer's head weighting (a matrix-vector "
                                            "product) as multiply+reduce"))

    # 4. MLA: projections + causal attention, non-absorbed and absorbed.
    def mla_case(absorbed):
        def run(mesh):
            prm = {"wkv_a": arr(D, kl + rope), "wkv_b": arr(kl, H * (nope + v)), "wo": arr(H * v, D),
                   "wq_a": arr(D, ql), "wq_b": arr(ql, H * (nope + rope))}

            def layer(prm, x):
                if absorbed:
                    q, k, vv, _ = K.mla_absorbed_qkv(prm, x, H, ql, kl, nope, rope)
                    o = K.attention(q, k, vv, "global", 0, "blocked", p["blk"], p["blk"])
                    return K.mla_absorbed_out(prm, o, H, kl, nope)
                q, k, vv, _ = K.mla_qkv(prm, x, H, ql, kl, nope, rope, v)
                o = K.attention(q, k, vv, "global", 0, "blocked", p["blk"], p["blk"])
                return K.dense(o.reshape(B, L, -1), prm["wo"])

            return jax.jit(layer), [prm, arr(B, L, D)], 1

        def analytic():
            b = _engine(mla_absorbed=absorbed, attention_impl="blocked", attention_block_q=p["blk"],
                        attention_block_kv=p["blk"], **mla_cfg)
            parts = [_component(b, c) for c in ("qkv_proj", "core_attention", "out_proj")]
            return sum(m for m, _ in parts), sum(h for _, h in parts)

        return Case(f"MLA {'absorbed' if absorbed else 'non-absorbed'} (projections + causal attention)",
                    f"B={B} L={L} H={H} D={D} q/kv lora {ql}/{kl}", run, analytic)

    cases.append(mla_case(False))
    cases.append(mla_case(True))

    # 5. MoE: lax.ragged_dot (grouped on GPU/TPU; dense masked on CPU), and the capacity form.
    E, k_, F = p["E"], p["k"], p["F"]
    moe_cfg = dict(emb_dim=D, num_experts=E, num_experts_per_tok=k_, moe_mlp_dim=F, max_target_length=L,
                   per_device_batch_size=B)

    def ragged_run(mesh):
        prm = {"router": arr(D, E), "up": arr(E, D, F), "gate": arr(E, D, F), "down": arr(E, F, D)}
        return jax.jit(lambda prm, x: _ragged_moe(prm, x, E, k_)), [prm, arr(B * L, D)], 1

    def ragged_analytic():
        # Grouped (GPU/TPU): the k*T routed rows once; XLA-CPU lowers ragged_dot to every routed row against
        # every expert (moe_impl='ragged_dense').
        b = _engine(**moe_cfg, moe_impl="ragged_dense" if backend == "cpu" else "ideal")
        m1, h1 = _component(b, "moe_router")
        m2, h2 = _component(b, "moe_routed")
        return m1 + m2, h1 + h2

    cases.append(Case("MoE layer, lax.ragged_dot" + (" (CPU: dense masked)" if backend == "cpu" else ""),
                      f"T={B * L} D={D} E={E} top-{k_} F={F}", ragged_run, ragged_analytic,
                      module="optimized" if backend == "cpu" else "none",
                      why="" if backend == "cpu" else "grouped ragged_dot: a kernel XLA's text does not count"))

    def capacity_run(mesh):
        prm = {"router": arr(D, E), "experts_up": arr(E, D, F), "experts_gate": arr(E, D, F),
               "experts_down": arr(E, F, D)}
        return jax.jit(lambda prm, x: K.moe(prm, x, E, k_, True, "capacity", 1.25)), [prm, arr(B, L, D)], 1

    def capacity_analytic():
        b = _engine(moe_impl="capacity", capacity_factor=1.25, **moe_cfg)
        m1, h1 = _component(b, "moe_router")
        m2, h2 = _component(b, "moe_routed")
        return m1 + m2, h1 + h2

    cases.append(Case("MoE layer, capacity 1.25 (reference kernel)", f"T={B * L} D={D} E={E} top-{k_} F={F}",
                      capacity_run, capacity_analytic))

    # 5b. The gated delta net (Qwen3-Next's linear attention), recurrent: projections, the causal depthwise conv, the
    # per-token state recurrence (two state matmuls per token and value head), the output projection. Head widths
    # from the attention heads (key heads Hkv, value heads H, key width d, value width d / 2).
    nk, nv, dk, dv, ker = Hkv, H, d, d // 2, 4
    D = p["D"]

    def gdn_run(mesh):
        conv_ch = 2 * nk * dk + nv * dv
        prm = {"in_qkvz": arr(D, 2 * nk * dk + 2 * nv * dv), "in_ba": arr(D, 2 * nv), "conv": arr(ker, 1, conv_ch),
               "out": arr(nv * dv, D)}
        return jax.jit(lambda prm, x: K.gdn(prm, x, nk, nv, dk, dv, ker)), [prm, arr(B, L, D)], 1

    def gdn_analytic():
        b = _engine(attention_layer_pattern="D", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                    gdn_num_key_heads=nk, gdn_num_value_heads=nv, gdn_key_head_dim=dk, gdn_value_head_dim=dv,
                    gdn_conv_kernel_dim=ker)
        parts = [_component(b, n) for n in ("qkv_proj", "gdn_conv", "core_attention", "out_proj")]
        return sum(m for m, _ in parts), sum(h for _, h in parts)

    cases.append(Case("gated delta net, recurrent (reference kernel)", f"B={B} L={L} heads={nk}/{nv} dk={dk} dv={dv} "
                      f"conv {ker} D={D}", gdn_run, gdn_analytic, module="lowered",
                      why="the optimizer rewrites the state reads (matrix-vector dots)"))

    # 6. tokamax: its attention and ragged-dot ops, each implementation it offers on this backend.
    for impl in TOKAMAX_ATTENTION.get(backend, ()):
        for window in (0, p["W"]):
            cases.append(_tokamax_attention_case(impl, window, p, arr, attn_cfg, sharded))
    for impl in TOKAMAX_RAGGED.get(backend, ()):
        cases.append(_tokamax_moe_case(impl, p, arr, moe_cfg, backend))

    # 7. MaxText's DSA composition (attention_mla.py with attention='dot_product', rebuilt here with the same ops):
    # the indexer over the full square, top-k, its mask, and MLA attention over the full masked square.
    def maxtext_dsa_run(mesh):
        prm = {"idx_wq": arr(ql, n * hd), "idx_wk": arr(D, hd), "idx_w": arr(D, n)}

        def composition(prm, x, q_lat, q, k, vv):
            scores = K.indexer_scores(prm, x, q_lat, n, hd, "dense")
            kth = jax.lax.top_k(scores, p["K"])[0][..., -1:]
            keep = (scores >= kth) & jnp.tril(jnp.ones((L, L), bool))  # MaxText re-applies the causal mask
            logits = jnp.einsum("bqhd,bkhd->bhqk", q, k)
            probs = jax.nn.softmax(jnp.where(keep[:, None], logits, -1e30), -1)
            return jnp.einsum("bhqk,bkhd->bqhd", probs, vv)

        return jax.jit(composition), [prm, arr(B, L, D), arr(B, L, ql), arr(B, L, H, nope + rope),
                                      arr(B, L, H, nope + rope), arr(B, L, H, v)], 1

    def maxtext_dsa_analytic():
        b = _engine(use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"], dsa_impl="dense",
                    attention_impl="dense", indexer_skip_short=True, **mla_cfg)
        parts = [_component(b, c) for c in ("indexer_proj", "indexer_score", "core_attention")]
        return sum(m for m, _ in parts), sum(h for _, h in parts)

    cases.append(Case(f"MaxText DSA (dot_product): indexer, top-{p['K']}, masked MLA attention (rebuilt)",
                      f"B={B} L={L} H={H} d={nope + rope}/{v} idx {n}x{hd}", maxtext_dsa_run, maxtext_dsa_analytic,
                      module="lowered", why="the optimizer rewrites the indexer's head weighting (a matrix-vector "
                                            "product) as multiply+reduce"))

    # 8. A full train step of a named config, shrunk to fit.
    cases.append(_train_case(model_name, p, backend))
    return cases


def _ragged_moe(prm, x, E, k, ragged=None):
    """Top-k MoE with tokens sorted by expert and three grouped matmuls (``ragged``: lax.ragged_dot, or another
    implementation with its signature)."""
    import jax
    import jax.numpy as jnp

    ragged = ragged or jax.lax.ragged_dot
    T, D = x.shape
    logits = x @ prm["router"]
    w, idx = jax.lax.top_k(logits, k)
    w = jax.nn.softmax(w, -1)
    flat = idx.reshape(-1)
    order = jnp.argsort(flat)
    tok = jnp.repeat(jnp.arange(T), k)[order]
    xs = x[tok]
    sizes = jnp.bincount(flat, length=E).astype(jnp.int32)
    h = jax.nn.silu(ragged(xs, prm["gate"], sizes)) * ragged(xs, prm["up"], sizes)
    y = ragged(h, prm["down"], sizes)
    out = jnp.zeros_like(x).at[tok].add(y * w.reshape(-1)[order][:, None])
    return out


# tokamax's implementations per backend: XLA's own everywhere; its kernels where the hardware has them.
TOKAMAX_ATTENTION = {"cpu": ("xla", "xla_chunked"), "gpu": ("xla", "cudnn", "triton", "mosaic_gpu"),
                     "tpu": ("xla", "mosaic_tpu")}
TOKAMAX_RAGGED = {"cpu": ("xla",), "gpu": ("xla", "mosaic_gpu"), "tpu": ("xla", "mosaic_tpu")}
# Tiles assumed for tokamax's attention kernels (their defaults; unverified until an accelerator run).
TOKAMAX_TILE = {"cudnn": 128, "triton": 128, "mosaic_gpu": 128, "mosaic_tpu": 512}


def _tokamax():
    try:
        import tokamax
    except ImportError as e:
        raise Skip("needs tokamax (pip install tokamax; Python >= 3.12)") from e
    return tokamax


class Skip(Exception):
    """This environment cannot run this kernel: the row is skipped with the reason."""


def _tokamax_attention_case(impl, window, p, arr, attn_cfg, sharded):
    B, L, H, Hkv, d = p["B"], p["L"], p["H"], p["Hkv"], p["d"]
    kernel = impl not in ("xla", "xla_chunked")

    def run(mesh):
        import jax

        tokamax = _tokamax()
        args, div = sharded(mesh, [arr(B, L, H, d), arr(B, L, Hkv, d), arr(B, L, Hkv, d)])
        local = (window - 1, 0) if window else None
        fn = jax.jit(lambda q, k, v: tokamax.dot_product_attention(q, k, v, is_causal=True, local_window_size=local,
                                                                   implementation=impl))
        return fn, args, div

    def analytic():
        tile = TOKAMAX_TILE.get(impl, 1)
        b = _engine(attention_layer_pattern="L" if window else "G", sliding_window_size=window,
                    attention_impl="blocked" if kernel else "dense", attention_block_q=tile, attention_block_kv=tile,
                    **attn_cfg)
        return _component(b, "core_attention")

    label = f"sliding window {window}" if window else "causal"
    why = (f"a {impl} kernel XLA cannot count; hardware assumes {TOKAMAX_TILE[impl]} x {TOKAMAX_TILE[impl]} tiles "
           "(XLA's cost analysis, which holds the kernel's own estimate, is recorded)") if kernel else ""
    return Case(f"tokamax attention {label} ({impl})", f"B={B} L={L} H={H}/{Hkv} d={d}", run, analytic,
                module="none" if kernel else "optimized", why=why)


def _tokamax_moe_case(impl, p, arr, moe_cfg, backend):
    B, L, D, E, k, F = p["B"], p["L"], p["D"], p["E"], p["k"], p["F"]
    expands = backend == "cpu"  # XLA-CPU lowers a ragged dot to every row against every group

    def run(mesh):
        import jax

        tokamax = _tokamax()
        prm = {"router": arr(D, E), "up": arr(E, D, F), "gate": arr(E, D, F), "down": arr(E, F, D)}

        def ragged(x, w, sizes):
            return tokamax.ragged_dot(x, w, sizes, implementation=impl)

        return jax.jit(lambda prm, x: _ragged_moe(prm, x, E, k, ragged)), [prm, arr(B * L, D)], 1

    def analytic():
        b = _engine(**moe_cfg, moe_impl="ragged_dense" if expands else "ideal")
        m1, h1 = _component(b, "moe_router")
        m2, h2 = _component(b, "moe_routed")
        return m1 + m2, h1 + h2

    return Case(f"MoE layer, tokamax ragged_dot ({impl})", f"T={B * L} D={D} E={E} top-{k} F={F}", run, analytic,
                module="optimized" if expands else "none",
                why="" if expands else "a grouped matmul XLA's text does not count (cost analysis recorded)")


def make_splash(mask_name: str, L: int, H: int, span: int, block: int, interpret: bool = False):
    """The Pallas splash attention kernel (MHA, [B, H, L, d] via vmap) for a causal, local-window or chunked
    mask with the maxflops semantics: window W = the query and W-1 keys before it; chunks restart every C."""
    import jax
    import numpy as np
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    if mask_name == "causal":
        m = sm.CausalMask((L, L))
    elif mask_name == "local":
        m = sm.LocalMask((L, L), window_size=(span - 1, 0), offset=0)
    else:
        rows, cols = np.arange(L)[:, None], np.arange(L)[None, :]
        m = sm.NumpyMask((cols <= rows) & (cols // span == rows // span))
    sizes = sk.BlockSizes(block_q=block, block_kv=block, block_kv_compute=block)
    kernel = sk.make_splash_mha(sm.MultiHeadMask([m] * H), head_shards=1, q_seq_shards=1, block_sizes=sizes,
                                interpret=interpret)
    return jax.vmap(kernel)


def _splash_case(mask_name, p, arr, dtype):
    B, L, H, d = p["B"], p["L"], p["H"], p["d"]
    span = {"causal": 0, "local": p["W"], "chunked": p["C"]}[mask_name]
    block = min(512, L)

    def run(mesh):
        import jax

        fn = jax.jit(make_splash(mask_name, L, H, span, block))
        return fn, [arr(B, H, L, d), arr(B, H, L, d), arr(B, H, L, d)], 1

    def analytic():
        letter = {"causal": "G", "local": "L", "chunked": "C"}[mask_name]
        b = _engine(max_target_length=L, per_device_batch_size=B, num_query_heads=H, num_kv_heads=H, head_dim=d,
                    attention_layer_pattern=letter, sliding_window_size=span if letter == "L" else 0,
                    chunk_attn_window_size=span if letter == "C" else 0, attention_impl="blocked",
                    attention_block_q=block, attention_block_kv=block)
        return _component(b, "core_attention")

    return Case(f"splash attention, {mask_name} mask (Pallas)", f"B={B} L={L} H={H} d={d} span={span}", run,
                analytic, module="none", why=f"a Pallas kernel XLA cannot count; hardware: the {block} x {block} "
                f"tiles splash visits (it skips fully masked ones)", only=("tpu",))


def _train_case(model_name, p, backend):
    def run(mesh):
        import jax
        import maxflops

        from ..xla import model as M

        c, model, params, tokens = M.build(maxflops.load_config(model_name), **_train_knobs(p))
        step, opt = M.train_step_fn(model)
        state = opt.init(params)
        div = 1
        if mesh is not None and "data" in mesh.axis_names:
            from jax.sharding import NamedSharding, PartitionSpec as P

            tokens = jax.device_put(tokens, NamedSharding(mesh, P("data")))
            params, state = jax.device_put((params, state), NamedSharding(mesh, P()))
            div = mesh.shape["data"]
            if tokens.shape[0] % div:
                raise ValueError(f"batch {tokens.shape[0]} does not split over data={div}")
        return jax.jit(step), [params, state, tokens], div

    def analytic():
        import maxflops

        from ..xla import model as M

        b = maxflops.count(M.reduce_config(maxflops.load_config(model_name), **_train_knobs(p)))
        return b.total, b.hardware_flops

    import maxflops

    t = p["train"]
    cfg = maxflops.load_config(model_name)
    matvec = cfg.use_sparse_indexer or "D" in cfg.attention_layer_pattern
    return Case(f"train step: {model_name} (reduced)", f"batch {t['per_device_batch_size']} x "
                f"{t['max_target_length']}", run, analytic, module="lowered" if matvec else "optimized",
                why="the optimizer rewrites matrix-vector dots (DSA per query, gated-delta-net state reads)"
                if matvec else "")


def _train_knobs(p):
    return dict(p["train"], attention_impl="dense", moe_impl="capacity", capacity_factor=1.25, dsa_impl="gather_k")


# --- running -----------------------------------------------------------------------------------------------

