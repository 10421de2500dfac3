"""The config: resolving overrides into a complete, checked config (``resolve``, ``apply_overrides``, ``validate``)
and building one (``model_config``, ``config_from``). Finding the shipped configs (``available_models``,
``model_path``) is ``maxflops.loaders.discovery``'s. What a key is lives in ``schema``; how peers count, in
``peers`` and ``conventions``; the whole-config checks, in ``checks``: each name is imported from its own module,
none through this one.

``ml_collections`` is imported only when a ConfigDict is built, so ``import maxflops`` stays cheap; the
accounting itself reads any mapping or attribute-style object with these keys.
"""

from __future__ import annotations

from typing import Any, Mapping

from .checks import STEP_KEYS, check_relations, check_step, say_inert
from .conventions import CONVENTIONS, branch_of, bundle, quirks
from .schema import SCHEMA, _DEFAULTS, check_value, closest, coerce



def resolve(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults + convention bundle + overrides -> validated plain dict. Raises ValueError on bad input."""
    values = dict(_DEFAULTS)
    given = {}
    for key, value in overrides.items():
        if key not in SCHEMA:
            raise ValueError(f"unknown config key {key!r}{closest(key)}")
        given[key] = coerce(key, value)
    convention = given.get("convention", values["convention"])
    check_value("convention", convention)
    branch = branch_of(convention, {**values, **given})
    values.update(bundle(convention, branch))
    values.update(quirks(given.get("convention_quirks", ()), convention))
    values.update(given)
    values["convention_knobs_from"] = f"{convention}:{branch}" if branch else convention
    for key, value in values.items():
        if value is not _DEFAULTS[key]:  # (every default passes check_value: tests/core/test_config.py)
            check_value(key, value)
    check_relations(values)
    return values


def apply_overrides(resolved: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config with some keys replaced (not 'convention'), validated. Overrides of the step's keys alone
    (STEP_KEYS) re-check only their relations (``check_step``): the rest of a resolved config is unchanged."""
    values = dict(resolved)
    for key, value in overrides.items():
        if key not in SCHEMA:
            raise ValueError(f"unknown config key {key!r}{closest(key)}")
        values[key] = coerce(key, value)
        check_value(key, values[key])
    if STEP_KEYS.issuperset(overrides):
        check_step(values)
    else:
        check_relations(values)
    return values


def model_config(**overrides):
    """A locked ConfigDict: schema defaults, then the convention bundle, then ``overrides``; validated. A key given
    that the model does not read is said (``InertKeyWarning``)."""
    return config_from(overrides, given=overrides)


def config_from(values: Mapping[str, Any], given=()):
    """``model_config`` of ``values`` that says only the inert keys among ``given``: for loaders, whose other keys
    are a file's, not a user's choice."""
    from ml_collections import config_dict

    resolved = resolve(values)
    say_inert(resolved, given)
    cfg = config_dict.ConfigDict()
    # Every resolved value is plain (int, float, str, bool, tuple; no dict, no FieldReference): what ConfigDict's
    # own filling stores, key by key, without its per-key dir() call (most of a ConfigDict's construction time).
    # The storage is a Fields: it keeps the config's cache key until its next write (maxflops.resolve.config_key)
    super(config_dict.ConfigDict, cfg).__setattr__("_fields", Fields(resolved))
    super(config_dict.ConfigDict, cfg).__setattr__("_locked", True)  # lock(): no value is a ConfigDict to lock
    return cfg


class Fields(dict):
    """The storage of a ConfigDict that ``model_config`` builds: a dict that remembers the config's cache key
    (``maxflops.resolve.config_key``) until its next write, so that a config counted again, unchanged, is not read
    key by key. ConfigDict writes its storage through ``__setitem__`` and ``__delitem__``; every other mutating
    method forgets the key too."""

    __slots__ = ("key",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key = None

    def __setitem__(self, k, v):
        self.key = None
        super().__setitem__(k, v)

    def __delitem__(self, k):
        self.key = None
        super().__delitem__(k)

    def _forget(method):  # noqa: N805 - wraps the other mutating dict methods
        def forgetting(self, *args, **kwargs):
            self.key = None
            return method(self, *args, **kwargs)
        forgetting.__name__ = method.__name__
        return forgetting

    update = _forget(dict.update)
    pop = _forget(dict.pop)
    popitem = _forget(dict.popitem)
    clear = _forget(dict.clear)
    setdefault = _forget(dict.setdefault)
    __ior__ = _forget(dict.__ior__)
    del _forget

    def __reduce__(self):  # a copy or unpickled config is a plain dict's worth of values; the key is recomputed
        return (Fields, (dict(self),))


def as_dict(config: Any) -> dict[str, Any]:
    """Any ConfigDict, mapping or attribute object with schema keys -> plain dict (no validation)."""
    if hasattr(config, "to_dict"):
        return config.to_dict()
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "__dict__"):  # an attribute object: every attribute is a key (unknown ones are errors)
        return {k: v for k, v in vars(config).items() if not k.startswith("_")}
    raise ValueError(f"cannot read a config from a {type(config).__name__}: pass a ConfigDict, a mapping, or an "
                     "object whose attributes are the keys")


def explicit(values: Mapping[str, Any], given=(), previous_quirks=None) -> dict[str, Any]:
    """The keys to resolve again: a built config carries every key, its convention knobs filled from the bundle
    of ``convention_knobs_from`` and its quirks (``previous_quirks``, when an override replaces them). When
    ``convention`` or the quirks have changed since (a ``--config.convention=...`` flag, an override), knobs still
    at the old bundle's value are dropped, so that the new bundle fills them; knobs set to anything else, and the
    keys in ``given``, stay."""
    out = dict(values)
    new = out.get("convention", "exact")
    old, _, old_branch = out.pop("convention_knobs_from", new).partition(":")
    entries = coerce("convention_quirks", out.get("convention_quirks", ()))
    old_entries = entries if previous_quirks is None else coerce("convention_quirks", previous_quirks)
    if (old != new or old_entries != entries or branch_of(old, out) != old_branch) and old in CONVENTIONS:
        before = {**bundle(old, old_branch), **quirks(old_entries, old)}
        after = {**(bundle(new, branch_of(new, out)) if new in CONVENTIONS else {}),
                 **(quirks(entries, new) if new in CONVENTIONS else {})}
        for key in before.keys() | after.keys():
            if key in out and key not in given and out[key] == before.get(key, SCHEMA[key].default):
                del out[key]
    return out


def validate(config: Any, given=()) -> dict[str, Any]:
    """Validate any config-like object and return the resolved plain dict (convention knobs applied).
    ``given``: keys set explicitly (e.g. command-line flags), kept even when the convention changed."""
    c = resolve(explicit(as_dict(config), given=given))
    if given:
        say_inert(c, given)
    return c
