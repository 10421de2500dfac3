"""MaxText's config keys -> maxflops schema overrides: one mapping for MaxText's config object, a mapping or
attribute object with MaxText's key names, and a MaxText model YAML.

``map_keys(data, label, derive=...)`` reads ``data`` (MaxText key -> value) through a ``Reader``, in named steps:
the model's keys (``model``: the decoder block, widths, MoE, attention, features, the step), then the program's
(``program``: kernels, remat, mesh). Every key is used, reported with a reason (``Loaded.ignored``), or an error
naming it (``classify`` gives the reason for a key no step read). Absent keys take MaxText's ``base.yml`` value
(``keys.BASE``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..reader import NO_EFFECT, NOT_UNDERSTOOD, VISION as VISION_PART, Loaded, Reader, refuse_unknown, validate_overrides
from . import keys as K
from .model import (
    BLOCKS,
    INDEXER,
    SOURCES,
    read_attention,
    read_block,
    read_features,
    read_moe,
    read_step,
    read_widths,
)
from .program import read_program


def classify(key: str) -> str:
    """The reason reported for a key the mapping did not read."""
    if key in K.NO_EFFECT:
        return NO_EFFECT
    if key.endswith("_for_vit") or key.endswith("_for_audio") or key.startswith(("vision_", "image_")):
        return VISION_PART
    if key in K.MODEL_KEYS or key in K.IMPLEMENTATION_KEYS:
        return "unused: not read for this decoder block"
    return NOT_UNDERSTOOD


OLD_NAMES = frozenset(old for _, old, _ in INDEXER)


def is_maxtext_key(key: str) -> bool:
    return (key in K.MODEL_KEYS or key in K.IMPLEMENTATION_KEYS or key in K.NO_EFFECT or key in K.UNPRICED
            or key in OLD_NAMES)


def map_keys(data: Mapping[str, Any], label, *, derive: bool, report: bool = True, name_hint: str = "",
             unknown: str = "error") -> Loaded:
    """MaxText keys -> schema overrides (see the module docstring). ``report=False`` skips classifying the keys
    not read (``Loaded.ignored`` is then partial; ``from_maxtext`` has checked every key already). ``name_hint``:
    the model name when ``data`` has none (a YAML is named by its file). ``unknown``: 'error' (a key MaxText
    does not have is a ValueError naming it) or 'report' (listed in ``Loaded.ignored`` as not understood)."""
    r = Reader(data, label)
    o: dict[str, Any] = {}
    not_priced: list[str] = []
    block = read_block(r, o)
    spec = BLOCKS[block]
    _refuse_unpriced(r)
    read_widths(r, o, spec, derive)
    read_moe(r, o, block, spec, derive)
    read_attention(r, o, block, spec, name_hint)
    read_features(r, o, block, spec, not_priced)
    read_step(r, o, derive)
    read_program(r, o, not_priced, spec)
    if not_priced:
        o["not_priced"] = tuple(not_priced)

    if report:
        r.finish(classify)
        refuse_unknown(label, data, r.ignored, K.MODEL_KEYS | K.IMPLEMENTATION_KEYS | K.NO_EFFECT, unknown)
    validate_overrides(label, o, SOURCES)
    return Loaded(overrides=o, source="maxtext", ignored=r.ignored, defaults=r.defaults)


def _refuse_unpriced(r: Reader) -> None:
    """A feature that changes FLOPs and that maxflops does not price (``keys.UNPRICED``) is an error when on."""
    for key, (is_off, what) in K.UNPRICED.items():
        if r.has(key) and not is_off(r.data[key]):
            raise r.fail(key, f"{what} changes FLOPs and is not priced by maxflops")
        r.ignore(key, NO_EFFECT + " (off)")
