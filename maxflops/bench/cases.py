"""The benchmark's kernels: presets of sizes per backend, and one ``Case`` per kernel with its runner and the
engine's analytic figures for exactly that kernel. Each mixer family's cases come from its proof module
(``maxflops.xla.registry``); the trunk's (MoE, a full train step) are here."""

from __future__ import annotations

from ..proofkit.case import Case, Ctx, Skip, components, engine, tokamax  # noqa: F401 (Skip: the runner's)


PRESETS = {
    # batch, length, heads, kv heads, head dim, window, chunk, tile, top-k, emb, ffn, experts, top-k experts,
    # MLA (q_lora, kv_lora, nope, rope, v), indexer (heads, dim), train-step reduction
    "cpu": dict(B=2, L=1024, H=8, Hkv=2, d=64, W=256, C=256, blk=256, splash_blk=128, K=128, D=512, F=1024, E=8, k=2,
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
    "cpu": dict(B=2, L=256, H=4, Hkv=2, d=32, W=64, C=64, blk=64, splash_blk=128, K=32, D=128, F=256, E=8, k=2,
                mla=(64, 32, 16, 8, 16), idx=(2, 16), train=dict(max_target_length=32, per_device_batch_size=2)),
    "gpu": dict(B=2, L=2048, H=16, Hkv=4, d=128, W=512, C=512, blk=256, K=512, D=2048, F=1024, E=16, k=4,
                mla=(512, 256, 64, 32, 64), idx=(16, 64), train=dict(emb_dim=256, mlp_dim=1024, moe_mlp_dim=128,
                                                                    max_target_length=256, per_device_batch_size=2)),
}
QUICK["tpu"] = QUICK["gpu"]


def build_cases(p: dict, backend: str, dtype, model_name: str) -> list[Case]:
    """Every family's cases (its proof module's ``bench_cases``, general families first), then the trunk's: the MoE
    layer (lax.ragged_dot, the capacity form, tokamax's ragged dots) and a full train step of a named config."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from ..families import FAMILIES
    from ..proofkit import kernels as K
    from ..xla.registry import proof_of

    B, Hkv = p["B"], p["Hkv"]
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

    def sharded(mesh, args):
        sh, div = attn_specs(mesh)
        if sh is None:
            return args, 1
        return [jax.device_put(a, sh) if a.ndim == 4 else a for a in args], div

    ctx = Ctx(p, backend, dtype, arr, sharded)
    cases = []
    for fam in reversed(FAMILIES):
        cases += proof_of(fam).bench_cases(ctx)

    # MoE: lax.ragged_dot (grouped on GPU/TPU; dense masked on CPU), and the capacity form.
    L, D = p["L"], p["D"]
    E, k_, F = p["E"], p["k"], p["F"]
    moe_cfg = dict(emb_dim=D, num_experts=E, num_experts_per_tok=k_, moe_mlp_dim=F, max_target_length=L,
                   per_device_batch_size=B)

    def ragged_run(mesh):
        prm = {"router": arr(D, E), "up": arr(E, D, F), "gate": arr(E, D, F), "down": arr(E, F, D)}
        return jax.jit(lambda prm, x: _ragged_moe(prm, x, E, k_)), [prm, arr(B * L, D)], 1

    def ragged_analytic():
        # Grouped (GPU/TPU): the k*T routed rows once; XLA-CPU lowers ragged_dot to every routed row against
        # every expert (moe_impl='ragged_dense').
        b = engine(**moe_cfg, moe_impl="ragged_dense" if backend == "cpu" else "ideal")
        return components(b, "moe_router", "moe_routed")

    cases.append(Case("MoE layer, lax.ragged_dot" + (" (CPU: dense masked)" if backend == "cpu" else ""),
                      f"T={B * L} D={D} E={E} top-{k_} F={F}", ragged_run, ragged_analytic,
                      module="optimized" if backend == "cpu" else "none",
                      why="" if backend == "cpu" else "grouped ragged_dot: a kernel XLA's text does not count"))

    def capacity_run(mesh):
        prm = {"router": arr(D, E), "experts_up": arr(E, D, F), "experts_gate": arr(E, D, F),
               "experts_down": arr(E, F, D)}
        return jax.jit(lambda prm, x: K.moe(prm, x, E, k_, True, "capacity", 1.25)), [prm, arr(B, L, D)], 1

    def capacity_analytic():
        b = engine(moe_impl="capacity", capacity_factor=1.25, **moe_cfg)
        return components(b, "moe_router", "moe_routed")

    cases.append(Case("MoE layer, capacity 1.25 (reference kernel)", f"T={B * L} D={D} E={E} top-{k_} F={F}",
                      capacity_run, capacity_analytic))

    # tokamax's ragged-dot ops, each implementation it offers on this backend.
    for impl in TOKAMAX_RAGGED.get(backend, ()):
        cases.append(_tokamax_moe_case(impl, p, arr, moe_cfg, backend))

    # A full train step of a named config, shrunk to fit.
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


# tokamax's ragged-dot implementations per backend: XLA's own everywhere; its kernels where the hardware has them.
TOKAMAX_RAGGED = {"cpu": ("xla",), "gpu": ("xla", "mosaic_gpu"), "tpu": ("xla", "mosaic_tpu")}


def _tokamax_moe_case(impl, p, arr, moe_cfg, backend):
    B, L, D, E, k, F = p["B"], p["L"], p["D"], p["E"], p["k"], p["F"]
    expands = backend == "cpu"  # XLA-CPU lowers a ragged dot to every row against every group

    def run(mesh):
        import jax

        tk = tokamax()
        prm = {"router": arr(D, E), "up": arr(E, D, F), "gate": arr(E, D, F), "down": arr(E, F, D)}

        def ragged(x, w, sizes):
            return tk.ragged_dot(x, w, sizes, implementation=impl)

        return jax.jit(lambda prm, x: _ragged_moe(prm, x, E, k, ragged)), [prm, arr(B * L, D)], 1

    def analytic():
        b = engine(**moe_cfg, moe_impl="ragged_dense" if expands else "ideal")
        return components(b, "moe_router", "moe_routed")

    return Case(f"MoE layer, tokamax ragged_dot ({impl})", f"T={B * L} D={D} E={E} top-{k} F={F}", run, analytic,
                module="optimized" if expands else "none",
                why="" if expands else "a grouped matmul XLA's text does not count (cost analysis recorded)")


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

    from ..plan import build_plan
    from ..xla import model as M
    from ..xla.registry import proof_of_kind

    t = p["train"]
    reduced = M.reduce_config(maxflops.load_config(model_name), **_train_knobs(p))
    matvec = sorted({proof_of_kind(kind).MATVEC for kind in build_plan(reduced).kinds} - {""})
    return Case(f"train step: {model_name} (reduced)", f"batch {t['per_device_batch_size']} x "
                f"{t['max_target_length']}", run, analytic, module="lowered" if matvec else "optimized",
                why=f"the optimizer rewrites matrix-vector dots ({', '.join(matvec)})" if matvec else "")


def _train_knobs(p):
    return dict(p["train"], attention_impl="dense", moe_impl="capacity", capacity_factor=1.25, dsa_impl="gather_k")


# --- running -----------------------------------------------------------------------------------------------

