"""A drop-in for MaxText's ``calculate_tflops_training_per_device``."""

from __future__ import annotations

from .account import count


def calculate_tflops_training_per_device(config, log: bool = True, segment_lengths=None):
    """(total, learnable_weight, attention) TFLOPs per device per train step, as MaxText returns them.

    The numbers follow the config's ``convention`` (``exact`` unless it says otherwise); set
    ``convention='maxtext'`` to reproduce MaxText's own figures. With ``log`` it prints MaxText's line.
    """
    b = count(config, segment_lengths=segment_lengths)
    if b.mode != "train":
        raise ValueError(f"config key 'mode': calculate_tflops_training_per_device needs 'train', got {b.mode!r}")
    total, learnable, attention = b.total / 1e12, b.learnable_weight / 1e12, b.attention / 1e12
    if log:
        print("Per train step:\n", f"Total TFLOPs: {total:.2f} \n",
              f"split as {100 * learnable / total:.2f}% learnable weight flops "
              f"and {100 * attention / total:.2f}% attention flops")
    return total, learnable, attention
