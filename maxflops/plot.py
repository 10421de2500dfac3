"""GFLOPs per token against context length, stacked by component, one panel per setting (matplotlib)."""

from __future__ import annotations


def plot_sweep(values, runs, labels, path: str, key: str = "max_target_length") -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install matplotlib (or the 'plot' extra)") from None
    names = list(dict.fromkeys(n for run in runs for b in run for n in b.components))
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.5), sharey=True, squeeze=False)
    colors = plt.get_cmap("tab20").colors
    for ax, run, label in zip(axes[0], runs, labels):
        stacks = [[b.components.get(n, 0) / b.tokens / 1e9 for b in run] for n in names]
        ax.stackplot(values, stacks, labels=names, colors=colors[: len(names)])
        ax.set_xscale("log", base=2)
        ax.set_xlabel(key)
        name = run[0].model_name
        ax.set_title(name if label == name else f"{name}: {label}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("GFLOPs per token")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
