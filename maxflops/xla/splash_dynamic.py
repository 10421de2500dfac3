"""Splash attention over a mask the step computes (tokamax's dynamic splash): its tables built from a stated mask, so
the kernel prices.

tokamax's ``make_dynamic_splash_mha`` / ``_mqa`` (what MaxText runs on TPU for DeepSeek sparse attention's top-k mask
under ``attention: flash`` with ``use_tokamax_splash``) takes the [q, kv] mask as data. The program turns it into the
kernel's block tables at run time (tokamax's ``_process_dynamic_mask``): the mask cut into tiles of the kernel's
block shape, a tile *active* when it holds any visible pair (partial: 1, full: 2), and the grid is the active tiles,
walked row by row (the forward's and dq's rows are query tiles; the dkv kernel's are key tiles, and a key tile no
query sees is visited once, at query tile 0, to zero its gradient, without a matmul). Six scalar-prefetch tables
say where each grid step is: its row and column, its partial-mask block, whether it opens or closes its row, its
block kind. The kernel's matmuls run where the block kind is not 0.

Which tiles are active is the step's data (which keys the indexer picked). This module rebuilds the tables from a
stated tile occupancy, so :mod:`maxflops.xla.mosaic` runs the kernel's own body over them:

- ``"causal"`` (the default): every tile a causal mask makes visible is active (each query tile's queries together
  pick a key in every key tile they see: an upper bound, exact once the top-k covers the visible keys, and what a
  top-k of a few thousand keys spread over a few dozen tiles gives). It is maxflops' ``dsa_impl='blocked'``, which
  ``from_maxtext`` sets for this path, so the two counts meet.
- a step's own mask: a [q, kv] boolean array (nested lists or a numpy array; True: the query attends the key),
  cut into each call's own tiles (the forward's and the backward's may differ).
- None: such calls are not counted (named in the count's ``not_counted``).

A segmented call (packed rows: segment ids) also drops, at run time, the tiles whose queries' and keys' documents
never meet; the rebuild takes one document per row (every row's ids one range), so with packing it is an upper bound,
said in the note.

A call is recognised by its layout: one grid dimension sized at run time, six scalar-prefetch tables of one length T
(the tiles of the mask), and an int8 operand of T partial-mask blocks (T, rows of a tile, columns of a tile); the
kernel's name says which way it walks (``dkv``: key tiles as rows). The mask is a self-attention one (q and kv of
one length L, so T * block_q * block_kv = L^2), as DSA's is.
"""

from __future__ import annotations

import dataclasses
import math

TABLES = 6  # active_rows, active_cols, mask_next, bounds_start, bounds_end, block_mask (tokamax's order)


@dataclasses.dataclass(frozen=True)
class Layout:
    """What a dynamic splash call's operands say about it."""

    is_dkv: bool   # rows are key tiles (the dkv kernel) rather than query tiles
    length: int    # L: the sequence (queries and keys)
    block_q: int
    block_kv: int

    @property
    def q_tiles(self) -> int:
        return self.length // self.block_q

    @property
    def kv_tiles(self) -> int:
        return self.length // self.block_kv


def layout(name: str, table_shapes, data) -> Layout | None:
    """Recognise a dynamic splash call from its kernel's name, its tables' shapes and its data operands ((dims,
    dtype) each); None when the call is not laid out as one."""
    if not name.startswith("splash_") or len(table_shapes) != TABLES or any(len(s) != 1 for s in table_shapes):
        return None
    tiles = table_shapes[0][0]
    if any(s[0] != tiles for s in table_shapes):
        return None
    blocks = [dims for dims, dtype in data if len(dims) == 3 and dims[0] == tiles and dtype in ("s8", "pred", "u8")]
    if len(blocks) != 1:
        return None
    is_dkv = "_dkv" in name
    rows, cols = blocks[0][1:]
    bq, bkv = (cols, rows) if is_dkv else (rows, cols)     # the dkv kernel's mask blocks are transposed
    length = math.isqrt(tiles * bq * bkv)
    if length * length != tiles * bq * bkv or length % bq or length % bkv:
        return None
    if not any(length in dims for dims, _ in data if len(dims) >= 2 and dims is not blocks[0]):
        return None                                          # no query or key operand of that length
    return Layout(is_dkv, length, bq, bkv)


def causal(lay: Layout) -> list[list[int]]:
    """The tile occupancy of a causal mask (query tile i, key tile j): partial (1) where a causal mask makes any pair
    of the tile visible, i.e. key j * block_kv at or before the tile's last query; a tile of a top-k mask is never
    known to be full, and the kernel's matmuls do not depend on it."""
    return [[1 if j * lay.block_kv <= (i + 1) * lay.block_q - 1 else 0 for j in range(lay.kv_tiles)]
            for i in range(lay.q_tiles)]


def occupancy(mask, lay: Layout) -> list[list[int]]:
    """The tile occupancy of a [L, L] boolean ``mask``: per query tile, per key tile, 0 (no pair visible), 1 (some)
    or 2 (all)."""
    import numpy as np

    m = np.asarray(mask)
    if m.shape != (lay.length, lay.length) or m.dtype.kind not in "biu":
        raise ValueError(f"expected a [{lay.length}, {lay.length}] boolean mask (queries x keys), got shape "
                         f"{m.shape} of {m.dtype}")
    t = (m != 0).reshape(lay.q_tiles, lay.block_q, lay.kv_tiles, lay.block_kv).swapaxes(1, 2)
    return (t.any(axis=(2, 3)).astype(int) + t.all(axis=(2, 3)).astype(int)).tolist()


def tables(occupancy, lay: Layout) -> tuple[int, list[list[int]]]:
    """(grid size, the six tables) for ``occupancy`` (rows of query tiles, 0 empty / 1 partial / 2 full), as
    tokamax's ``_process_dynamic_mask`` and ``find_bounds`` build them (held equal to them in the tests)."""
    q, kv = lay.q_tiles, lay.kv_tiles
    if len(occupancy) != q or any(len(row) != kv or any(x not in (0, 1, 2) for x in row) for row in occupancy):
        raise ValueError(f"expected {q} rows (query tiles of {lay.block_q}) of {kv} entries (key tiles of "
                         f"{lay.block_kv}), each 0 (empty), 1 (partial) or 2 (full)")
    kind = [list(row) for row in occupancy]
    ids = [[i * kv + j for j in range(kv)] for i in range(q)]
    if lay.is_dkv:                                           # walked by key tile
        kind = [list(col) for col in zip(*kind)]
        ids = [list(col) for col in zip(*ids)]
    active = [[k > 0 for k in row] for row in kind]
    if lay.is_dkv:                                           # a key tile no query sees: visited once, to zero it
        for r, row in enumerate(active):
            if not any(row):
                row[0] = True
    steps = [(r, c) for r, row in enumerate(active) for c, on in enumerate(row) if on]
    n, size = len(steps), q * kv
    rows = [r for r, _ in steps] + [-1] * (size - n)
    cols = [c for _, c in steps] + [-1] * (size - n)
    block = [kind[r][c] for r, c in steps] + [0] * (size - n)
    mask_next = [ids[r][c] if kind[r][c] == 1 else 0 for r, c in steps] + [0] * (size - n)
    start = [1 if t == 0 or rows[t] != rows[t - 1] else 0 for t in range(size)]
    end = [1 if t == size - 1 or rows[t] != rows[t + 1] else 0 for t in range(size)]
    return n, [rows, cols, mask_next, start, end, block]
