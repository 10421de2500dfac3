"""Why two configs differ: the config keys behind each component's gap (``python -m maxflops compare``)."""

from __future__ import annotations

from .account import count
from .schema import SCHEMA

__all__ = ["keys_behind"]

_NOT_CAUSES = frozenset({"model_name", "convention", "convention_knobs_from"})


def keys_behind(ca: dict, cb: dict) -> dict[str, list[str]]:
    """Which differing config keys move each component: config A recounted with one key set to B's value at a
    time (the conventions' knobs are compared one by one, so 'convention' itself is not a cause). A key that cannot
    change alone from A (the result would be an invalid config: K and V heads that do not divide A's query heads) is
    tried the other way, B with A's value, against B's count. A key invalid both ways is listed, as '<key> (with
    others)', for every component that moves between A and B."""
    base = dict(count(ca).components)
    other = None
    out: dict[str, list[str]] = {}
    joint = []
    for k in sorted(SCHEMA):
        if k in _NOT_CAUSES or ca.get(k) == cb.get(k):
            continue
        try:
            moved, ref = count({**ca, k: cb[k]}).components, base
        except ValueError:
            try:
                moved = count({**cb, k: ca[k]}).components
            except ValueError:
                joint.append(k)
                continue
            other = other if other is not None else dict(count(cb).components)
            ref = other
        for comp in ref.keys() | moved.keys():
            if ref.get(comp, 0) != moved.get(comp, 0):
                out.setdefault(comp, []).append(k)
    if joint:
        b_kinds = count(cb).components
        for comp in base.keys() | b_kinds.keys():
            if base.get(comp, 0) != b_kinds.get(comp, 0):
                out.setdefault(comp, []).extend(f"{k} (with others)" for k in joint)
    return out
