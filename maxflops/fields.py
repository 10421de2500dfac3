"""A schema entry: one config key's default, type, documentation, choices and lower bound. The trunk's entries are
``maxflops.schema.SCHEMA``'s; each mixer family and each trunk feature declares its own in its module (``SCHEMA``),
and the config assembles them."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Field", "Ints", "field_of"]


class Ints(tuple):
    """Schema kind: a tuple of non-negative integers (given as a list, a tuple or '1,4')."""


@dataclasses.dataclass(frozen=True)
class Field:
    default: Any
    kind: type  # int, float, bool, str, tuple (of str)
    doc: str
    choices: tuple = ()  # the allowed values (of each item, for a tuple)
    minimum: float | None = None  # inclusive lower bound for numbers


def field_of(default, kind, doc, choices=(), minimum=None):
    return Field(default, kind, doc, tuple(choices), minimum)
