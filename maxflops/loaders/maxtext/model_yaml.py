"""A MaxText model YAML -> schema overrides, through the same key mapping as MaxText's config object
(``mapping.map_keys``): keys the YAML does not set take MaxText's ``base.yml`` values, and the widths
``pyconfig`` derives (``emb_dim`` from ``base_emb_dim`` and ``global_parameter_scale``, ...) are derived the same
way. The step keys (batch, length, accumulation, MTP) are kept only where the file sets them."""

from __future__ import annotations

import dataclasses
import pathlib

from ..reader import Loaded, read_file
from . import keys as _keys
from .mapping import map_keys
from .model import BLOCKS

# MaxText's base.yml values for the keys the mapping reads (MaxText 0.2.5).
MAXTEXT_BASE_DEFAULTS = _keys.BASE
# decoder_block -> its fixed attention pattern, or None where a key derives it (llama4, qwen3-next, qwen3.5).
MAXTEXT_DECODER_BLOCKS = {name: spec.pattern for name, spec in BLOCKS.items()}


def load_maxtext_yaml(path, *, unknown: str = "error") -> Loaded:
    """A MaxText model YAML (``maxtext/configs/models/*.yml`` style) -> schema overrides. Keys the file does not
    set take MaxText 0.2.5's ``base.yml`` values, the step's too (``per_device_batch_size`` 12,
    ``max_target_length`` 2048), as MaxText runs the file; they are listed in ``Loaded.defaults``. A key MaxText
    does not have is a ValueError (``unknown='report'`` lists it in ``Loaded.ignored`` instead)."""
    path = pathlib.Path(path)
    # MaxText names a model by its file (model_name=<stem>); some model code reads the name (gemma4_small).
    loaded = map_keys(read_file(path, "yaml"), path, derive=True, name_hint=path.stem, unknown=unknown)
    return dataclasses.replace(loaded, source="maxtext-yaml")
