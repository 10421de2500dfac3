"""Which keys of a ``config.json`` its transformers code never reads (the rule of ``transformers_reads``, generated
from transformers' own source): such a key cannot change what transformers runs, so a loader that does not take it
accepts it and says it was ignored; a key the code reads and the loader does not understand stays an error."""

from __future__ import annotations

import functools

UNREAD = "ignored: no transformers code of its model type reads it"


@functools.lru_cache(maxsize=None)
def reads(model_type: str) -> frozenset | None:
    """The keys transformers' code of ``model_type`` reads; None for a type transformers has no config class for
    (remote code: nothing to derive the rule from)."""
    from . import transformers_reads as t

    own = t.TYPES.get(model_type)
    return None if own is None else t.SHARED | frozenset(own.split())


def unread(key: str, model_types) -> bool:
    """Whether no code of any of ``model_types`` reads ``key`` (False where a type has no rule)."""
    sets = [reads(name) for name in model_types]
    return all(s is not None for s in sets) and bool(sets) and not any(key in s for s in sets)


@functools.lru_cache(maxsize=1)
def every_read_key() -> frozenset:
    """The keys some type's transformers code reads: real keys, never a typo of one another ('did you mean')."""
    from . import transformers_reads as t

    out = set(t.SHARED)
    for own in t.TYPES.values():
        out.update(own.split())
    return frozenset(out)


def hint(key: str, model_types) -> str:
    """' (did you mean X?)' for an unread key that is no real key of any type and is close to one the type reads
    (a misspelling transformers too would ignore); '' otherwise: one real key is never offered for another."""
    if key in every_read_key():
        return ""
    import difflib

    candidates = set().union(*(reads(name) or () for name in model_types))
    match = difflib.get_close_matches(key, sorted(k for k in candidates if not k.startswith("_")), n=1, cutoff=0.8)
    return f" (did you mean {match[0]!r}?)" if match else ""
