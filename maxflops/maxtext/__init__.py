"""MaxText as its users run it: its config object in, its FLOPs function replaced.

    cfg = pyconfig.initialize([...])                      # MaxText's HyperParameters, as its trainer has it
    maxflops.from_maxtext(cfg)                           # a maxflops config (ConfigDict), exact convention
    maxflops.count(cfg)                                  # the same, counted (any MaxText-keyed object works)
    maxflops.from_maxtext(cfg, convention="maxtext")     # reproduces MaxText's own figures
    maxflops.maxtext.install()                           # MaxText's trainer now logs maxflops' numbers

``from_maxtext`` accepts MaxText's ``HyperParameters``, a mapping, or an attribute object (``vars()``-able)
with MaxText's key names; keys it does not set take MaxText 0.2.5's ``base.yml`` values. Every key is read,
known to have no FLOPs effect, or an error: a key that changes FLOPs in a way maxflops does not price names
itself, and so does a key maxflops does not know (``unknown="warn"`` counts without it and warns). Keys of
maxflops' own schema that MaxText does not have (``convention``, ``mode``, ``decode_kv_length``, the hardware
knobs, ...) may be given in the object or as ``overrides``; overrides win.
"""

from __future__ import annotations

from .. import resolve
from ..loaders.maxtext.model import SUPPORTED
from .objects import from_maxtext, is_maxtext_config, maxtext_keys, mixed_vocabulary, overrides_of
from .estimates import splash_cost_estimates
from .trainer import calculate_tflops_training_per_device, install, packed_tflops_per_device, uninstall

__all__ = ["from_maxtext", "is_maxtext_config", "maxtext_keys", "calculate_tflops_training_per_device", "install",
           "uninstall", "packed_tflops_per_device", "splash_cost_estimates", "SUPPORTED"]

# count(), sweep(), StepReporter and decode_traffic take MaxText's object (or a MaxText-keyed mapping) as it is
resolve.register_source(is_maxtext_config, overrides_of, mixed_vocabulary)
