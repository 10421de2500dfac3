"""The MaxText trainer hook: MaxText's FLOPs function replaced by maxflops' count, per run and per step.

    maxflops.maxtext.install()        # MaxText's trainer now logs maxflops' figures; uninstall() restores its own
    maxflops.calculate_tflops_training_per_device(config)   # the drop-in, on a maxflops or a MaxText config
"""

from __future__ import annotations

import importlib
import sys

from ..account import count
from ..sequences import segment_lengths_from_ids
from ..loaders.maxtext import keys
from .objects import from_maxtext, maxtext_keys

__all__ = ["calculate_tflops_training_per_device", "install", "uninstall", "packed_tflops_per_device"]


def calculate_tflops_training_per_device(config, log: bool = True, segment_lengths=None):
    """(total, learnable_weight, attention) TFLOPs per device per train step, as MaxText returns them.

    ``config``: a maxflops config, or MaxText's config object as its trainer passes it. The numbers follow the
    config's ``convention`` (``exact`` unless it says otherwise; MaxText's object counts exactly unless
    ``convention='maxtext'`` is in it); ``segment_lengths`` counts a packed batch per document. With ``log`` it
    prints MaxText's line.
    """
    b = count(config, segment_lengths=segment_lengths)
    if b.mode != "train":
        raise ValueError(f"config key 'mode': calculate_tflops_training_per_device needs 'train', got {b.mode!r}")
    return _triple(b, log, "Per train step")


def _triple(b, log: bool, heading: str) -> tuple:
    """(total, learnable, attention) TFLOPs of a Breakdown; with ``log`` printed as MaxText prints them."""
    total, learnable, attention = b.total / 1e12, b.learnable_weight / 1e12, b.attention / 1e12
    if log:
        print(f"{heading}:\n", f"Total TFLOPs: {total:.2f} \n",
              f"split as {100 * learnable / total:.2f}% learnable weight flops "
              f"and {100 * attention / total:.2f}% attention flops")
        if b.not_priced:
            print(" not counted:", "; ".join(b.not_priced))
    return total, learnable, attention


_SAVED: dict = {}


def install(convention: str = "exact", per_step: bool = True, **overrides) -> None:
    """Make MaxText's trainer report maxflops' figures.

    Replaces ``calculate_tflops_training_per_device`` in ``maxtext.utils.maxtext_utils`` (and in every loaded
    MaxText module that imported it by name) with one that counts MaxText's config object with maxflops
    (``convention`` and ``overrides`` applied); MaxText calls it once per run. With ``per_step`` (and MaxText's
    ``DataLoader`` and ``MetricLogger`` importable) each step's ``perf/per_device_tflops`` and
    ``perf/per_device_tflops_per_sec`` are recounted from that step's batch: the documents its
    ``inputs_segmentation`` holds (0 = padding), every mask restarting at each document, averaged over this
    host's devices. ``uninstall()`` restores MaxText's own code."""
    utils = sys.modules.get("maxtext.utils.maxtext_utils")
    if utils is None:
        try:
            utils = importlib.import_module("maxtext.utils.maxtext_utils")
        except ImportError as e:
            raise ImportError(f"maxflops.maxtext.install(): MaxText is not importable here ({e}); install() patches "
                              f"a running MaxText {keys.MAXTEXT_VERSION} trainer (pip install maxtext=="
                              f"{keys.MAXTEXT_VERSION}). Without MaxText, count its config with "
                              "maxflops.count(maxflops.from_maxtext(config))") from None
    current = utils.calculate_tflops_training_per_device
    original = _SAVED.setdefault("original", current)  # installing twice keeps MaxText's own function

    def maxflops_tflops(config, log=True):
        b = count(from_maxtext(config, convention=convention, **overrides))
        return _triple(b, log, f"Per train step (maxflops, convention {convention})")

    maxflops_tflops.__wrapped__ = original
    _replace(current, maxflops_tflops)
    if per_step:
        _install_per_step(convention, overrides)


def _install_per_step(convention: str, overrides: dict) -> None:
    try:
        loader_mod = importlib.import_module("maxtext.common.data_loader")
        logger_mod = importlib.import_module("maxtext.common.metric_logger")
    except ImportError:
        return
    loader, logger = loader_mod.DataLoader, logger_mod.MetricLogger
    load = _SAVED.setdefault("load", (loader, loader.load_next_batch_pre_sharding))[1]
    record = _SAVED.setdefault("record", (logger, logger.record_train_metrics))[1]
    seen: dict = {}

    def load_next_batch_pre_sharding(self):
        batch = load(self)
        seen["segment_ids"] = batch.get("inputs_segmentation") if hasattr(batch, "get") else None
        return batch

    def record_train_metrics(self, metrics, step, step_time):
        record(self, metrics, step, step_time)
        ids = seen.pop("segment_ids", None)
        scalars = metrics.get("scalar", {})
        if ids is not None and "perf/per_device_tflops" in scalars:
            tflops = packed_tflops_per_device(self.config, ids, convention=convention, **overrides)
            scalars["perf/per_device_tflops"] = tflops
            scalars["perf/per_device_tflops_per_sec"] = tflops / step_time

    loader.load_next_batch_pre_sharding = load_next_batch_pre_sharding
    logger.record_train_metrics = record_train_metrics


def packed_tflops_per_device(config, segment_ids, devices: int | None = None, hosts: int | None = None,
                             **overrides) -> float:
    """TFLOPs per device of one MaxText train step whose host batch has ``segment_ids`` [rows, length] (every
    micro-batch of the step; 0 = padding): the rows the step trains on (MaxText loads more than it trains with a
    per-device batch below 1: ``global_batch_size_to_train_on`` / ``hosts``), their documents counted exactly,
    divided by ``devices`` (this host's). ``devices`` and ``hosts`` default to jax's local device and process
    counts."""
    import numpy as np

    ids = np.asarray(segment_ids)
    if ids.ndim != 2:
        raise ValueError(f"segment_ids: expected [rows, length], got shape {ids.shape}")
    if devices is None or hosts is None:
        import jax

        devices = jax.local_device_count() if devices is None else devices
        hosts = jax.process_count() if hosts is None else hosts
    trained = maxtext_keys(config).get("global_batch_size_to_train_on")
    if isinstance(trained, int) and trained > 0:
        ids = ids[: max(trained // hosts, 1)]
    rows, length = ids.shape
    cfg = from_maxtext(config, **{**overrides, "per_device_batch_size": rows, "max_target_length": length,
                                  "gradient_accumulation_steps": 1})
    return count(cfg, segment_lengths=segment_lengths_from_ids(ids)).total / devices / 1e12


def uninstall() -> None:
    """Restore MaxText's own code after ``install()``."""
    original = _SAVED.pop("original", None)
    if original is not None:
        current = sys.modules["maxtext.utils.maxtext_utils"].calculate_tflops_training_per_device
        _replace(current, original)
    for key, name in (("load", "load_next_batch_pre_sharding"), ("record", "record_train_metrics")):
        cls_method = _SAVED.pop(key, None)
        if cls_method is not None:
            setattr(cls_method[0], name, cls_method[1])


def _replace(old, new) -> None:
    for name, module in list(sys.modules.items()):
        if (name == "maxtext" or name.startswith("maxtext.")) and module is not None:
            if getattr(module, "calculate_tflops_training_per_device", None) is old:
                setattr(module, "calculate_tflops_training_per_device", new)
