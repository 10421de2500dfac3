"""The sequences of one device step: uniform rows (BSHD) or packed documents (THD), and their validation."""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any

from . import masks


class Uniform:
    """``count`` sequences of length ``length`` (``count`` may be fractional: MaxText's per-device batch)."""

    __slots__ = ("length", "count", "tokens")

    def __init__(self, length: int, count):
        self.length, self.count, self.tokens = length, count, length * count

    def sum(self, f):
        return f(self.length) * self.count

    def exact_pairs(self, mixer, span):
        return masks.pairs(mixer, span, self.length) * self.count

    def longer_than(self, threshold):
        return self if self.length > threshold else None

    def sum_scalar(self, f):
        """Like ``sum`` for a function of one Python int length (not vectorized)."""
        return f(self.length) * self.count

    def whole(self, f, *args):
        """A figure of the whole step that is no sum over its rows (a peer's rule from the batch's mean length):
        ``f(self, *args)``. (A step form keeps ``f`` and calls it with each step's sequences.)"""
        return f(self, *args)


class Packed:
    """Documents of given lengths (numpy int64 array)."""

    def __init__(self, lengths):
        self.lengths = lengths
        self.count = len(lengths)
        self._pairs = {}

    @functools.cached_property
    def tokens(self):
        return int(self.lengths.sum())

    @functools.cached_property
    def _histogram(self):
        """(distinct lengths, how many documents have each), or (lengths, None) where that saves nothing: many
        documents share few lengths (a packed batch's are at most max_target_length), so each sum over them
        runs over the distinct lengths once, weighted, instead of over every document (the same integers)."""
        import numpy as np

        L = self.lengths
        if L.dtype == object or len(L) < 1024:
            return L, None
        if int(L.max()) <= 16 * len(L):
            counts = np.bincount(L)
            values = np.flatnonzero(counts)
            return values, counts[values]
        values, counts = np.unique(L, return_counts=True)
        return (values, counts) if len(values) * 2 <= len(L) else (L, None)

    def sum(self, f):
        values, counts = self._histogram
        if counts is None:
            return int(f(values).sum())
        per_length = f(values)
        if getattr(per_length, "dtype", None) is None or per_length.dtype.kind not in "iu":
            return int(f(self.lengths).sum())  # (not integers: summed document by document, as given)
        return int((per_length * counts).sum())

    def exact_pairs(self, mixer, span):
        """Cached: several layer kinds share a mask, and each pass reads every document."""
        key = (mixer, span)
        if key not in self._pairs:
            self._pairs[key] = self.sum(lambda L: masks.pairs(mixer, span, L))
        return self._pairs[key]

    def longer_than(self, threshold):
        sel = self.lengths[self.lengths > threshold]
        return Packed(sel) if len(sel) else None

    def sum_scalar(self, f):
        """Like ``sum`` for a function of one Python int length: called once per distinct length."""
        import numpy as np

        values, counts = self._histogram
        if counts is None:
            values, counts = np.unique(self.lengths, return_counts=True)
        return sum(f(int(L)) * int(n) for L, n in zip(values, counts))

    def whole(self, f, *args):
        """A figure of the whole step that is no sum over its documents: ``f(self, *args)``."""
        return f(self, *args)


def as_lengths(segment_lengths, c) -> Any:
    import numpy as np

    if not hasattr(segment_lengths, "__len__") and hasattr(segment_lengths, "__iter__"):
        segment_lengths = list(segment_lengths)  # a generator or other iterator of lengths
    arr = np.asarray(segment_lengths)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"segment_lengths: expected a non-empty 1-D sequence of ints, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.floor(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"segment_lengths: expected integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and int(arr.max()) ** 2 * arr.size >= 1 << 62:  # a sum of L^2 terms could overflow int64:
        arr = arr.astype(object)                                 # exact Python ints instead
    if c["mode"] == "decode":
        if arr.min() < 0:
            raise ValueError(f"segment_lengths (decode KV lengths): {int(arr.min())} is negative")
        if len(arr) != batch(c):
            raise ValueError(f"segment_lengths (decode KV lengths): {len(arr)} sequences, but "
                             f"per_device_batch_size = {c['per_device_batch_size']:g}")
        return arr
    if arr.min() < 1:
        i = int(np.argmin(arr))
        raise ValueError(f"segment_lengths[{i}] = {int(arr[i])}: document lengths must be >= 1")
    T = c["max_target_length"]
    if arr.max() > T:
        i = int(np.argmax(arr))
        raise ValueError(f"segment_lengths[{i}] = {int(arr[i])} exceeds max_target_length={T}")
    capacity = c["per_device_batch_size"] * T
    total = int(arr.sum())
    if total > capacity:
        raise ValueError(f"segment_lengths sum to {total} tokens, more than per_device_batch_size x "
                         f"max_target_length = {c['per_device_batch_size']} x {T} = {capacity:g}")
    return arr


def batch(c):
    b = c["per_device_batch_size"]
    return int(b) if float(b).is_integer() else Fraction(b).limit_denominator(1 << 20)


def program_batch(c):
    """Sequences per device the partitioned program runs: ``per_device_batch_size``, or with ``num_devices`` and
    ``batch_shards`` the global batch padded to whole sequences per batch shard, each shard's work split over its
    devices (ceil(B x devices / shards) x shards / devices)."""
    b = batch(c)
    shards, devices = c["batch_shards"], c["num_devices"]
    if not shards:
        return b
    whole = int(b * devices)
    padded = -(-whole // shards) * shards
    return b if padded == whole else Fraction(padded, devices) if padded % devices else padded // devices


def segment_lengths_from_ids(segment_ids):
    """Document lengths from MaxText segment ids [batch, length] (0 = padding): the runs of equal non-zero ids
    within each row, in order. Vectorized: about 1 ms for a million tokens."""
    import numpy as np

    ids = np.asarray(segment_ids)
    if ids.ndim == 1:
        ids = ids[None, :]
    if ids.ndim != 2:
        raise ValueError(f"segment_ids: expected [batch, length], got shape {ids.shape}")
    rows, length = ids.shape
    start = np.ones(ids.shape, bool)
    start[:, 1:] = ids[:, 1:] != ids[:, :-1]
    flat_start = np.flatnonzero(start.reshape(-1))
    run_len = np.diff(np.append(flat_start, rows * length))
    keep = ids.reshape(-1)[flat_start] != 0
    return run_len[keep]


def row_length(seqs, c):
    """The length of the step's rows: the rows' own, or a packed batch's max_target_length."""
    return c["max_target_length"] if type(seqs) is Packed else seqs.length


def priced_tokens(seqs, c) -> tuple:
    """(tokens, rows) the token-linear model FLOPs are priced on: full rows as they are; a packed batch's real
    tokens in per_device_batch_size rows, or every row slot with ``packed_tokens='padded'``."""
    if type(seqs) is Packed:
        rows = batch(c)
        return (rows * c["max_target_length"] if c["packed_tokens"] == "padded" else seqs.tokens), rows
    return seqs.tokens, seqs.count


def uses_patches(c) -> bool:
    """The model has a patch stream: layers over it, or the patch family's layers ('Y', 'U') that move to it."""
    return bool(c["patch_layers"]) or any(x in c["attention_layer_pattern"] for x in "YU")


def patches_of(length, c):
    """Patches a sequence (or packed document) of ``length`` tokens makes: ``patches_per_sequence`` for a sequence of
    max_target_length, or with 0 one per token and one more (L + 1)."""
    return c["patches_per_sequence"] or length + 1


def patch_stream(seqs, c) -> tuple:
    """(sequences, config view) of the patch stream (patch_layers): each sequence's patches, causal among
    themselves; the view's max_target_length is a full row's patches. Packed documents make L + 1 patches each (a
    stated patches_per_sequence is a sequence's, not a document's: the check refuses it with documents)."""
    if type(seqs) is Packed:
        out = Packed(seqs.lengths + 1)
    elif type(seqs) is Uniform:
        out = Uniform(patches_of(seqs.length, c), seqs.count)
    else:  # (a traced step form's symbols: the patches are no linear form in them; priced the ordinary way)
        raise TypeError("the patch stream of a traced step is not traced")
    return out, {**c, "max_target_length": patches_of(c["max_target_length"], c)}
