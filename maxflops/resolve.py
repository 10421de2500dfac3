"""Resolution: any input -> (resolved config, plan), cached under a key that is cheap to compute.

    c, plan = resolve_call(config, {"max_target_length": 8192})   # a ConfigDict, a mapping, MaxText's object
    hw = hardware_view(c)                                          # the exact view hardware FLOPs read
    plan_of(hw)

Inputs in another project's vocabulary reach the schema through a source reader: ``register_source(detect,
to_overrides)`` (``maxflops.maxtext`` registers MaxText's config object and MaxText-keyed mappings when the
package is imported); ``from_source`` applies the first reader whose ``detect`` accepts the input. Files are read
by ``maxflops.load_config`` (``maxflops.load``), above this module.

The caches: a config's values (``config_key``) -> its resolved dict and plan; the plan depends only on
``PLAN_KEYS``, so sweeps over anything else (lengths, batch, the conventions' pair rules) reuse it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from .config import Fields, explicit, apply_overrides, as_dict, resolve
from .checks import STEP_KEYS, say_inert
from .conventions import REPORTING_KNOBS, quirks
from .schema import SCHEMA
from .families import FAMILIES
from .plan import build_plan

__all__ = ["resolve_call", "call_key", "resolve_key", "from_source", "register_source", "plan_of", "hardware_view",
           "config_key", "PLAN_KEYS"]

_SOURCES: list[tuple[Callable[[Any], bool], Callable[[Any], dict], Callable[[Any], str | None] | None]] = []


def register_source(detect: Callable[[Any], bool], to_overrides: Callable[[Any], dict],
                    refuse: Callable[[Any], str | None] | None = None) -> None:
    """Read inputs for which ``detect(config)`` holds as ``to_overrides(config)`` (schema keys -> values).
    ``refuse(config)``, asked of an input no reader detected (read in maxflops' own keys), returns the error for
    keys of that source's vocabulary riding along (or None)."""
    if (detect, to_overrides, refuse) not in _SOURCES:
        _SOURCES.append((detect, to_overrides, refuse))


def from_source(config):
    """A maxflops config (``model_config``'s ConfigDict) as it is; any other input through the first source reader
    that detects it (else as it is: a mapping, ConfigDict or attribute object of schema keys)."""
    if type(getattr(config, "_fields", None)) is Fields:
        return config
    for detect, to_overrides, _ in _SOURCES:
        if detect(config):
            return to_overrides(config)
    for _, _, refuse in _SOURCES:
        msg = refuse(config) if refuse is not None else None
        if msg:
            raise ValueError(msg)
    return config


# Keys the plan depends on; sweeps over anything else (lengths, batch, conventions' pair rules) reuse it: the trunk's
# (plan.build_plan's layer shapes, MoE placement, MTP, remat, pipeline) and each family's (Family.plan_keys: what its
# mixer_of reads)
TRUNK_PLAN_KEYS = ("num_decoder_layers", "attention_layer_pattern", "num_experts", "first_num_dense_layers",
                   "interleave_moe_layer_step", "mtp_num_layers", "mode", "ffn_all_moe", "num_kv_shared_layers",
                   "engram_layers", "mtp_layer_numbering", "mtp_layer_pattern", "mtp_ffn_layer_pattern",
                   "remat_skip_layers", "remat_block_layers", "ffn_layer_pattern", "parallel_layer_pattern",
                   "warmup_cse_layers", "warmup_dead_last_layer", "pipeline_stages", "pipeline_layers",
                   "layer_widths", "layer_loops", "attn_res_block_size", "loop_message_rank",
                   "patch_layers", "frozen_layers", "patcher_head_layer")
PLAN_KEYS = tuple(dict.fromkeys(TRUNK_PLAN_KEYS + tuple(k for f in FAMILIES for k in f.plan_keys)))


@functools.lru_cache(maxsize=1024)
def _plan(plan_items: tuple):
    return build_plan(dict(plan_items))


@functools.lru_cache(maxsize=256)
def _resolved(key) -> dict:
    return resolve(explicit(dict(key.items)))


def plan_of(c: dict):
    """The plan of a resolved config (cached on the keys the plan reads)."""
    return _plan(tuple((k, c[k]) for k in PLAN_KEYS))


@functools.lru_cache(maxsize=256)
def _planned(key) -> tuple:
    """(resolved config, its plan) of a config key: the per-step path resolves and plans once."""
    c = _resolved(key)
    return c, plan_of(c)


# overrides after which the convention's knobs are derived again: the convention, the quirks, and the keys that
# decide a peer's branch for the model's kind (config.branch_of)
_REBUNDLE = frozenset({"convention", "convention_quirks", "attention_type", "ffn_layer_pattern"})


@functools.lru_cache(maxsize=1024)
def _with_overrides(key, typed_overrides: tuple) -> tuple:
    """(resolved config, its plan) with ``typed_overrides`` (not the step's keys alone: ``resolve_key``) applied."""
    given = {k: v for k, _, v in typed_overrides}
    if given.keys() & _REBUNDLE:  # the bundle (and its branch for the model's kind) and the quirks are applied again
        before = dict(key.items)
        c = resolve(explicit({**before, **given}, given=given, previous_quirks=before.get("convention_quirks", ())))
    else:
        c = apply_overrides(_planned(key)[0], given)
    say_inert(c, given)  # (once per distinct override set: this is cached)
    return c, plan_of(c)


def hardware_view(c) -> dict:
    """The resolved config with every reporting knob (``config.REPORTING_KNOBS``, set by a convention or by hand)
    at its exact value: hardware FLOPs are what the kernels execute, whatever a peer's reporting convention says.
    The plan of this view is the one kernels (and ``maxflops.xla.model``) run. A model's convention quirks are
    undone too, and its 'exact:' ones applied."""
    entries = c["convention_quirks"]
    reset = REPORTING_KNOBS | (quirks(entries, c["convention"]).keys() if entries else set())
    return {**c, **{k: SCHEMA[k].default for k in reset}, **(quirks(entries, "exact") if entries else {}),
            "convention": "exact", "convention_knobs_from": "exact"}


class _Key:
    """A config's values as a hashable key whose hash is computed once (the caches below look it up per call)."""

    __slots__ = ("items", "_hash")

    def __init__(self, items: tuple):
        self.items = items
        self._hash = hash(items)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (isinstance(other, _Key) and self._hash == other._hash and self.items == other.items)


# The last keys of ConfigDicts by the identity of their storage, with the values they were taken from: a config
# passed again, unchanged, reuses its key (checked value by value: a changed config gets a new one)
_SEEN: dict = {}


def config_key(config) -> _Key:
    """A hashable snapshot of the config's values (cheap for a ConfigDict, and cheaper for one seen unchanged)."""
    fields = getattr(config, "_fields", None)  # ConfigDict's own storage: 30x faster than to_dict()
    if type(fields) is Fields:  # model_config's storage: its key is kept until the config is written
        key = fields.key
        if key is None and set(map(type, fields.values())) <= _PLAIN:
            key = fields.key = _Key(tuple(fields.items()))
        if key is not None:
            return key
    if isinstance(fields, dict):
        seen = _SEEN.get(id(fields))
        values = tuple(fields.values())
        if seen is not None and seen[0] is fields and seen[1] == values and seen[2] == tuple(fields):
            return seen[3]
        if set(map(type, values)) <= _PLAIN:
            key = _Key(tuple(fields.items()))
            if len(_SEEN) >= 64:
                _SEEN.clear()
            _SEEN[id(fields)] = (fields, values, tuple(fields), key)
            return key
    d = as_dict(config)
    return _Key(tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in d.items()))


_PLAIN = {int, float, str, bool, tuple}


def call_key(config, overrides: Mapping[str, Any] | None = None) -> tuple:
    """A hashable key of a call's config and overrides: equal keys resolve to the same config (``resolve_key``)."""
    key = config_key(from_source(config))
    if not overrides:
        return key, ()
    if len(overrides) == 1:  # the per-step path's usual call (one new length or batch)
        (k, v), = overrides.items()
        return key, ((k, type(v).__name__, _frozen(k, v)),)
    # the type is part of the key: True and 1 must not share a cache entry
    return key, tuple(sorted((k, type(v).__name__, _frozen(k, v)) for k, v in overrides.items()))


def resolve_key(key: tuple) -> tuple:
    """(resolved config, plan) of a ``call_key``."""
    base, typed = key
    if not typed:
        return _planned(base)
    if STEP_KEYS.issuperset([k for k, _, _ in typed]):  # a new length or batch: applied, not cached (a
        c, plan = _planned(base)                   # count caches its result; a sweep's points are each new)
        c = apply_overrides(c, {k: v for k, _, v in typed})
        say_inert(c, [k for k, _, _ in typed])  # (a KV length outside decode: a rule, no recount)
        return c, plan
    return _with_overrides(base, typed)


def resolve_call(config, overrides: Mapping[str, Any] | None = None) -> tuple:
    """(resolved config, plan) of a call's config (a ConfigDict, a mapping of schema keys, or any input a source
    reader takes: MaxText's object or a MaxText-keyed mapping) and its overrides, cached per config key."""
    return resolve_key(call_key(config, overrides))


def _frozen(key: str, value):
    """A hashable form of an override's value for the cache (a list becomes a tuple, as the schema stores it)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(key, v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"config key {key!r}: a {type(value).__name__} is not a config value, got {value!r}") from None
    return value
