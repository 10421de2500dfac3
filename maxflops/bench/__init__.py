"""``python -m maxflops.bench``: time jitted kernels on TPU, GPU or CPU; analytic vs XLA vs measured.

For each kernel: its shapes, the analytic model and hardware FLOPs (the engine's count, with the implementation
knobs that match the kernel), XLA's loop-aware matmul FLOPs and whether they equal the hardware figure, the
median time over repeats after warm-up, model and hardware TFLOP/s and the % of the chip's dense peak.

    python -m maxflops.bench                    # preset picked from the backend
    python -m maxflops.bench --quick --json out.json --csv out.csv
    python -m maxflops.bench --model=glm5 --mesh data=4,model=2 --peak-tflops 989
"""


from .cases import PRESETS, QUICK, Case, build_cases  # noqa: F401 (the package face)
from .cli import main  # noqa: F401
from .output import table, write_csv  # noqa: F401
from .runner import measured_matmul_rate, run_bench  # noqa: F401

__all__ = ["PRESETS", "QUICK", "Case", "build_cases", "make_splash", "main", "table", "write_csv",
           "measured_matmul_rate", "run_bench"]


def __getattr__(name):
    if name == "make_splash":  # the attention family's (its proof module imports jax)
        from ..families.attention.proof import make_splash

        return make_splash
    raise AttributeError(f"module 'maxflops.bench' has no attribute {name!r}")
