"""maxflops: exact per-device, per-step FLOPs of MaxText-style LLM configs, split into learnable-weight and
attention FLOPs, per component and per layer, for training, prefill and decode.

    import maxflops
    cfg = maxflops.load_config("deepseek3.2-671b", per_device_batch_size=4, max_target_length=4096)
    b = maxflops.count(cfg)                        # or count(cfg, segment_lengths=[...]) for packed batches
    b.total, b.learnable_weight, b.attention, b.components, b.layers
    maxflops.decode_traffic(cfg, decode_kv_length=8192).total   # HBM bytes of one decode step

This package imports neither jax nor numpy nor ml_collections at import time; ``maxflops.xla`` and
``maxflops.bench`` use jax.
"""

from .account import count, sweep
from .grid import Grid, sweep_grid
from .breakdown import Breakdown, LayerRow
from .config import model_config
from .loaders.discovery import available_models
from .checks import InertKeyWarning
from .conventions import CONVENTIONS
from .schema import SCHEMA
from .load import load_config
from .maxtext import calculate_tflops_training_per_device, from_maxtext
from .reporter import StepReporter, StepStats, segment_lengths_from_ids
from .traffic import Traffic, decode_traffic
from .parameters import Parameters, parameters
from .explain import Explanation, explain

__all__ = ["count", "sweep", "sweep_grid", "Grid", "Breakdown", "LayerRow", "SCHEMA", "CONVENTIONS", "available_models", "load_config",
           "model_config", "calculate_tflops_training_per_device", "from_maxtext", "StepReporter", "StepStats",
           "segment_lengths_from_ids", "Traffic", "decode_traffic", "InertKeyWarning", "explain", "Explanation",
           "parameters", "Parameters"]
__version__ = "0.1.0"
