"""``python -m maxflops.xla --model=NAME [--config.KEY=VALUE ...]``: the analytic count of the reduced model
beside XLA's, forward and train step, per component.

Columns: analytic model FLOPs; analytic hardware FLOPs (the implementation knobs); XLA's loop-aware matmul
FLOPs of the lowered module (every matmul as issued, each scan body times its trip count) and of the
optimized module; XLA's own cost_analysis() figure (a loop body counted once, elementwise ops included).
"""

from __future__ import annotations

import sys



def scopes() -> list:
    """The named scopes the kernels carry: every declared matmul component (the trunk's and each family's), in
    report order. A dot goes to its innermost one."""
    import maxflops.families  # noqa: F401 (registers the families' components)
    from ..components import MIXED, all_components

    return [comp.name for comp in all_components() if comp.kind != MIXED]


def rows_for(config):
    """[(mode, breakdown, lowered count, compiled count, reduced config)] for prefill and train."""
    import jax

    import maxflops

    from . import model as M
    from .hlo import count_lowered, count_matmuls

    out = []
    for mode in ("prefill", "train"):
        c, model, params, tokens = M.build(config, mode=mode)
        b = maxflops.count(c)
        fn, args = M.step_program(model, params, tokens, mode)
        out.append((mode, b, count_lowered(fn, *args), count_matmuls(jax.jit(fn), *args), c))
    return out


def format_rows(name, rows) -> str:
    lines = []
    c = rows[0][4]
    lines.append(f"maxflops.xla: {name}, reduced to {c['num_decoder_layers']} layers "
                 f"(pattern {c['attention_layer_pattern']}), emb {c['emb_dim']}, batch "
                 f"{c['per_device_batch_size']:g} x {c['max_target_length']} tokens")
    for mode, b, low, comp, _ in rows:
        ok = b.hardware_flops == low.matmul_flops
        raw = low.raw_cost_analysis_flops
        lines += ["", f"[{mode}]",
                  f"  analytic model FLOPs          {b.total:>14,}",
                  f"  analytic hardware FLOPs       {b.hardware_flops:>14,}",
                  f"  XLA matmul FLOPs, lowered     {low.matmul_flops:>14,}   (loop-aware)",
                  f"  XLA matmul FLOPs, optimized   {comp.matmul_flops:>14,}   (loop-aware; rewrites degenerate dots)",
                  f"  XLA cost_analysis() flops     {comp.raw_cost_analysis_flops or 0:>14,.0f}   "
                  f"(loops once; lowered: {raw or 0:,.0f})",
                  f"  analytic hardware == XLA      {'yes' if ok else 'NO'}",
                  f"  {'component':<16} {'analytic hw':>12} {'XLA':>12}"]
        names = scopes()
        xla = low.by_scope(names, innermost=True)
        ana = b.by_kind(hardware=True)
        for k in [s for s in names if ana.get(s) or xla.get(s)] + (["other"] if xla.get("other") else []):
            mark = "" if ana.get(k, 0) == xla.get(k, 0) else "  <-- differs"
            lines.append(f"  {k:<16} {ana.get(k, 0):>12,} {xla.get(k, 0):>12,}{mark}")
    return "\n".join(lines)


def main(argv=None) -> int:
    from ..cli import UsageError, _parse, _rewrite_model, given_keys, one_line
    from ..config import validate

    argv = list(sys.argv if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__)
        return 0
    try:
        argv = _rewrite_model(argv)
        fv = _parse(argv)
        cfg = validate(fv.config, given=given_keys(argv))
        rows = rows_for(cfg)
    except (UsageError, ValueError, TypeError, OSError) as e:
        print(f"maxflops.xla: error: {one_line(e)}", file=sys.stderr)
        return 2
    print(format_rows(cfg["model_name"], rows))
    return 0 if all(b.hardware_flops == low.matmul_flops for _, b, low, _, _ in rows) else 1


def run() -> None:
    from ..cli import quiet_broken_pipe

    quiet_broken_pipe()
    sys.exit(main())
