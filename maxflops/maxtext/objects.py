"""MaxText's config object (or a MaxText-keyed mapping or attribute object) -> maxflops schema overrides."""

from __future__ import annotations

import enum
import functools
from typing import Any, Mapping

from ..config import config_from
from ..schema import SCHEMA, closest
from ..loaders.maxtext import keys
from ..loaders.maxtext.mapping import OLD_NAMES, is_maxtext_key, map_keys
from ..loaders.maxtext.model import DERIVED

__all__ = ["from_maxtext", "is_maxtext_config", "maxtext_keys", "overrides_of"]


def maxtext_keys(config: Any) -> dict[str, Any]:
    """The key -> value dict of a MaxText config object, mapping or attribute object (enums as their values)."""
    if hasattr(config, "get_keys") and callable(config.get_keys):  # MaxText's HyperParameters
        data = config.get_keys()
    elif isinstance(config, Mapping):
        data = config
    elif hasattr(config, "to_dict") and callable(config.to_dict):  # ml_collections / OmegaConf-like
        data = config.to_dict()
    elif hasattr(config, "__dict__"):
        data = vars(config)
    else:
        raise ValueError(f"cannot read the keys of a {type(config).__name__}: pass MaxText's config object, a "
                         "mapping, or an object whose attributes are the keys")
    return data


def _closest_known(key: str) -> str:
    return closest(key, [*keys.MODEL_KEYS, *keys.IMPLEMENTATION_KEYS, *keys.UNPRICED, *SCHEMA], cutoff=0.75)


def _plain(v):
    return v.value if isinstance(v, enum.Enum) else v


@functools.lru_cache(maxsize=64)
def _split(names: frozenset) -> tuple:
    """(keys the mapping reads, maxflops-only schema keys, unknown keys) of one key set (cached: a trainer's
    config object has the same 856 keys every time)."""
    read, own, strange = [], [], []
    for k in sorted(names):
        if is_maxtext_key(k):
            if k in keys.MODEL_KEYS or k in keys.IMPLEMENTATION_KEYS or k in keys.UNPRICED or k in OLD_NAMES:
                read.append(k)
        elif k in SCHEMA:
            own.append(k)
        else:
            strange.append(k)
    return tuple(read), tuple(own), tuple(strange)


# The keys that make a mapping MaxText's: every MaxText model file sets them and MaxText's object always has them.
# A mapping's vocabulary is decided by these alone, never by one trainer key riding along (learning_rate, steps,
# run_name, dtype, scan_layers, ...): those are keys of MaxText too, but do not say which model is meant.
SIGNATURE = ("decoder_block",) + tuple(base for _, base, _ in DERIVED)


def _names(config: Any):
    if isinstance(getattr(config, "_fields", None), dict):  # an ml_collections ConfigDict
        return config._fields
    try:
        return config.keys() if isinstance(config, Mapping) else vars(config).keys()
    except TypeError:
        return None


def is_maxtext_config(config: Any) -> bool:
    """True for MaxText's config object, or a mapping / attribute object that names ``decoder_block`` or a
    ``base_*`` width (``SIGNATURE``): the rule that decides a mapping's vocabulary (the docs state it)."""
    if hasattr(config, "get_keys") and callable(config.get_keys):
        return True
    names = _names(config)
    return names is not None and any(k in names for k in SIGNATURE)


def mixed_vocabulary(config: Any) -> str | None:
    """For a mapping read in maxflops' vocabulary (no ``SIGNATURE`` key): the error naming the MaxText keys it
    carries, which maxflops' schema does not have (None if it carries none)."""
    names = _names(config)
    if names is None:
        return None
    theirs = sorted(k for k in names if k not in SCHEMA and is_maxtext_key(k))
    if not theirs:
        return None
    get = (lambda k: config[k]) if isinstance(config, Mapping) else (lambda k: getattr(config, k, None))
    shown = "; ".join(f"{k!r} = {get(k)!r}" for k in theirs[:6]) + ("; ..." if len(theirs) > 6 else "")
    return (f"config key{'s' if len(theirs) > 1 else ''} {shown}: MaxText's, not maxflops'. This mapping is read "
            "in maxflops' keys: a mapping is read as MaxText's only when it names decoder_block or a base_* width "
            f"({', '.join(SIGNATURE[1:4])}, ...), as every MaxText model file does. Drop "
            f"{'these keys' if len(theirs) > 1 else 'the key'}, or pass the whole MaxText config "
            "(maxflops.from_maxtext reads any mapping as MaxText's)")


def from_maxtext(config: Any, *, unknown: str = "error", **overrides):
    """A maxflops config (locked ConfigDict) from MaxText's config object or MaxText-keyed mapping/object.

    ``overrides`` are maxflops schema keys (``convention='maxtext'``, ``mode='decode'``, ...), applied last.
    ``unknown``: 'error' (default) or 'warn' for keys neither MaxText 0.2.5 nor maxflops knows.
    """
    if unknown not in ("error", "warn"):
        raise ValueError(f"from_maxtext: unknown={unknown!r} is not 'error' or 'warn'")
    return config_from({**overrides_of(config, unknown), **overrides}, given=overrides)  # (MaxText's keys: its file's)


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(map(_hashable, v))
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


_CACHE: dict = {}
_SCALARS = {int, float, str, bool, type(None)}  # (an Enum subclassing str or int is not one of these types)
# base.yml's nested values (logical_axis_rules: some 400 entries) as _hashable makes them: a value equal to one is
# that snapshot, without walking it (a config object's tuples, or a mapping's lists, compared in one C-level ==)
_BASE_FROZEN = {k: _hashable(v) for k, v in keys.BASE.items() if isinstance(v, (list, tuple, dict))}


def _snapshot(k: str, v):
    """A hashable stand-in for a key's value, equal for equal values (``_hashable`` of the plain value)."""
    if type(v) in _SCALARS:
        return v
    frozen = _BASE_FROZEN.get(k)
    if frozen is not None and (v == frozen if type(v) is tuple else type(v) is list and v == keys.BASE[k]):
        return frozen  # (equal to base.yml's: tuples to its frozen form, lists to its lists, nesting and all)
    return _hashable(_plain(v))


def overrides_of(config: Any, unknown: str = "error") -> dict:
    """The schema overrides of a MaxText object as a plain dict (fresh; cached on the values of the keys read).
    ``count`` uses it directly: no ConfigDict is built on that path."""
    data = maxtext_keys(config)
    read, own_keys, strange = _split(frozenset(data))
    if strange:
        msg = (f"MaxText config: unknown key{'s' if len(strange) > 1 else ''} "
               f"{'; '.join(f'{k!r} = {data[k]!r}{_closest_known(k)}' for k in strange)} "
               f"(maxflops knows MaxText {keys.MAXTEXT_VERSION}'s keys and its own schema)")
        if unknown == "error":
            raise ValueError(msg + "; pass unknown='warn' to count without them")
        import warnings

        warnings.warn(msg + ": not counted", stacklevel=3)
    snapshot = (read, own_keys, tuple(_snapshot(k, data[k]) for k in read + own_keys))
    out = _CACHE.get(snapshot)
    if out is None:
        loaded = map_keys({k: _plain(data[k]) for k in read}, "MaxText config", derive=False, report=False)
        out = {**loaded.overrides, **{k: _plain(data[k]) for k in own_keys}}
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[snapshot] = out
    return dict(out)
