"""Why two configs differ: the config keys behind each component's gap (``python -m maxflops compare``)."""

from __future__ import annotations

from .account import count
from .config import SCHEMA

__all__ = ["keys_behind"]

_NOT_CAUSES = frozenset({"model_name", "convention", "convention_knobs_from"})


def keys_behind(ca: dict, cb: dict) -> dict[str, list[str]]:
    """Which differing config keys move each component: config A recounted with one key set to B's value at a
    time (the conventions' knobs are compared one by one, so 'convention' itself is not a cause). A key that
    cannot change alone (the result would be an invalid config) is listed, as '<key> (with others)', for every
    component that no single key explains."""
    base = dict(count(ca).components)
    out: dict[str, list[str]] = {}
    joint = []
    for k in sorted(SCHEMA):
        if k in _NOT_CAUSES or ca.get(k) == cb.get(k):
            continue
        try:
            moved = count({**ca, k: cb[k]}).components
        except ValueError:
            joint.append(k)
            continue
        for comp in base.keys() | moved.keys():
            if base.get(comp, 0) != moved.get(comp, 0):
                out.setdefault(comp, []).append(k)
    if joint:
        b_kinds = count(cb).components
        for comp in base.keys() | b_kinds.keys():
            if base.get(comp, 0) != b_kinds.get(comp, 0) and comp not in out:
                out[comp] = [f"{k} (with others)" for k in joint]
    return out
