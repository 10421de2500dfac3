"""GFLOPs per token against context length: stacked by component, one panel per setting, or each convention's total
side by side (matplotlib)."""

from __future__ import annotations


def axis(values) -> tuple[list, bool]:
    """(x positions, log scale) of a sweep's values: positive numbers spanning a wide range (lengths, batches) on
    a log axis; anything else (booleans, names, lists, zeros, a narrow range) as evenly spaced categories labelled
    with the values, so that no point is dropped."""
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    log = numeric and min(values) > 0 and max(values) >= 4 * min(values)
    return (list(values) if log else list(range(len(values)))), log


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install matplotlib (or the 'plot' extra)") from None
    return plt


def plot_sweep(values, runs, labels, path: str, key: str = "max_target_length") -> None:
    plt = _pyplot()
    x, log = axis(values)
    names = list(dict.fromkeys(n for run in runs for b in run for n in b.components))
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.5), sharey=True, squeeze=False)
    colors = plt.get_cmap("tab20").colors
    for ax, run, label in zip(axes[0], runs, labels):
        stacks = [[b.components.get(n, 0) / b.tokens / 1e9 for b in run] for n in names]
        ax.stackplot(x, stacks, labels=names, colors=colors[: len(names)])
        if log:
            ax.set_xscale("log", base=2)
        else:
            ax.set_xticks(x, [str(v) for v in values])
        ax.set_xlabel(key)
        name = run[0].model_name
        ax.set_title(name if label == name else f"{name}: {label}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("GFLOPs per token")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_totals(values, runs, labels, path: str, key: str = "max_target_length") -> None:
    """One line per run on one panel, GFLOPs per token against ``key``: the same config counted by each convention
    (the peers side by side), the first run (the exact count) drawn heavier. Model FLOPs, and the ratio of each run
    to the first on a second panel."""
    plt = _pyplot()
    x, log = axis(values)
    fig, (ax, rax) = plt.subplots(1, 2, figsize=(13, 4.5))
    base = [b.total / b.tokens / 1e9 for b in runs[0]]
    for i, (run, label) in enumerate(zip(runs, labels)):
        y = [b.total / b.tokens / 1e9 for b in run]
        style = dict(linewidth=3.0, color="black", zorder=3) if i == 0 else dict(linewidth=1.6, marker="o", ms=3)
        ax.plot(x, y, label=label, **style)
        rax.plot(x, [v / w for v, w in zip(y, base)], label=label, **style)
    for a, ylabel in ((ax, "model GFLOPs per token"), (rax, f"ratio to {labels[0]}")):
        if log:
            a.set_xscale("log", base=2)
        else:
            a.set_xticks(x, [str(v) for v in values])
        a.set_xlabel(key)
        a.set_ylabel(ylabel)
        a.grid(alpha=0.3)
    rax.set_yscale("log", base=2)
    rax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}x"))
    rax.yaxis.set_minor_formatter(plt.FuncFormatter(lambda v, _: ""))
    ax.set_title(f"{runs[0][0].model_name}, {runs[0][0].mode}: each convention's count")
    rax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_grid(grid, path: str) -> None:
    """Model TFLOPs per step against length, one line per batch (at most eight, spread over the batches given)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install matplotlib (or the 'plot' extra)") from None
    x, log = axis(list(grid.lengths))
    n = len(grid.batches)
    picks = sorted({round(k * (n - 1) / 7) for k in range(8)}) if n > 8 else range(n)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for j in picks:
        ax.plot(x, [grid.total[i][j] / 1e12 for i in range(len(grid.lengths))],
                label=f"batch {grid.batches[j]:g}")
    if log:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(grid.length_key)
    ax.set_ylabel("model TFLOPs per device per step")
    ax.set_title(f"{grid.model_name} ({grid.mode}, {grid.convention})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
