"""megablox's grouped matmuls (``gmm``, ``tgmm``): their tables built from the group sizes, so the kernel prices.

A MoE's grouped matmul runs over the rows of the tokens sorted by expert: group ``i`` is the ``group_sizes[i]`` rows
that go to expert ``i``. megablox (jax's ``pallas.ops.tpu.megablox``, MaxText's ``kernels/megablox`` copy) walks the
rows in tiles of ``tm``: a tile that two groups share is visited once per group, so one call runs between
``m / tm`` tiles (every group boundary on a tile edge) and ``m / tm + groups - 1`` (every boundary inside a tile), and
``tgmm`` (the weight gradient) also visits one tile for an empty group (to zero its output) without its matmul. Which
it is depends on the routing, which the step computes at run time: the kernel's grid size and its four scalar-prefetch
tables (the groups' row offsets, the group and the row tile of each grid step, the first local group) are data.

This module rebuilds those tables from group sizes, the rule of megablox's ``make_group_metadata`` (checked equal to
it in the tests over random sizes, empty groups and expert shards), so :mod:`maxflops.xla.mosaic` runs the kernel's
own body over them. The sizes are either the step's own (``group_sizes=[...]`` to the program counter) or a stated
assumption, ``"balanced"`` (the rows split as evenly as integers allow over the local groups: what a perfectly
balanced router gives), always said in the kernel's note with the range any routing could give.

A call is recognised by its layout, not by name (Pallas names both kernels ``kernel``): one grid dimension sized at
run time and four scalar-prefetch tables of lengths ``G + 1``, ``T``, ``T``, 1 with ``T - G + 1`` row tiles.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Layout:
    """What a megablox call's operands say about it."""

    kind: str               # "gmm" (out = lhs @ rhs[group]) or "tgmm" (out[group] = lhs^T @ rhs, the weight gradient)
    groups: int             # G: entries of group_sizes
    tiles_m: int            # row tiles
    m: int                  # rows (the sorted tokens)
    local_groups: int       # groups this call computes (fewer than G when the experts are sharded)

    @property
    def tm(self) -> int:
        return self.m // self.tiles_m

    @property
    def visit_empty_groups(self) -> bool:
        return self.kind == "tgmm"


def layout(table_shapes, out_dims, data_dims) -> Layout | None:
    """Recognise a megablox call from its tables' shapes (after the one run-time grid size), its result's dims and
    its data operands' dims; None when the call is not laid out as one."""
    if len(table_shapes) != 4 or any(len(s) != 1 for s in table_shapes):
        return None
    (g1,), (t,), (t2,), (one,) = table_shapes
    groups = g1 - 1
    tiles_m = t - groups + 1
    if groups < 1 or t != t2 or one != 1 or tiles_m < 1 or len(data_dims) < 2:
        return None
    if len(out_dims) == 2:                               # gmm: lhs [m, k] @ rhs [G_local, k, n] -> [m, n]
        kind, m, rhs = "gmm", out_dims[0], data_dims[1]
        local = rhs[0] if len(rhs) == 3 else None
    elif len(out_dims) == 3:                             # tgmm: lhs^T [k, m] x rhs [m, n] -> [G_local, k, n]
        kind, m, local = "tgmm", data_dims[1][0] if len(data_dims[1]) == 2 else None, out_dims[0]
    else:
        return None
    if m is None or local is None or m % tiles_m or not 1 <= local <= groups:
        return None
    return Layout(kind, groups, tiles_m, m, local)


def balanced(m: int, groups: int) -> list[int]:
    """``m`` rows over ``groups`` groups as evenly as integers allow (the first ``m % groups`` one row more)."""
    q, r = divmod(m, groups)
    return [q + (i < r) for i in range(groups)]


def group_metadata(group_sizes, m: int, tm: int, start_group: int = 0, local_groups: int | None = None,
                   visit_empty_groups: bool = False):
    """The tables a megablox call reads: ``(group_offsets, group_ids, m_tile_ids, num_tiles)``.

    group_offsets: the row each group starts at, and ``m`` last (G + 1 entries). Each group covers the row tiles from
    the one holding its first row to the one holding its last; an empty group none, or one (the tile where it would
    start) when empty groups are visited. group_ids lists, tile by tile in group order, the group of each visit;
    m_tile_ids lists the row tiles in order, a tile once per group that has rows in it. Both are padded to
    ``m / tm + G - 1`` entries and rotated so the first local group's visits come first; num_tiles counts the local
    groups' visits (the grid steps the kernel runs).
    """
    sizes = [int(s) for s in group_sizes]
    groups = len(sizes)
    local_groups = groups if local_groups is None else local_groups
    if any(s < 0 for s in sizes):
        raise ValueError(f"group_sizes: a negative size in {sizes}")
    if m % tm:
        raise ValueError(f"megablox: {m} rows do not split into tiles of {tm}")
    tiles_m = m // tm
    length = tiles_m + groups - 1
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    if offsets[-1] > m:
        raise ValueError(f"group_sizes: {offsets[-1]} rows in all, more than the call's {m}")

    tiles_of = []                                        # row tiles each group visits
    for start, size in zip(offsets, sizes):
        if size:
            tiles_of.append(list(range(start // tm, (start + size - 1) // tm + 1)))
        else:
            tiles_of.append([start // tm] if visit_empty_groups else [])
    group_ids = [g for g, ts in enumerate(tiles_of) for _ in ts]
    group_ids += [groups - 1] * (length - len(group_ids))

    # a tile is visited by the group owning its first row, and once more by each group starting inside it
    visits = [1] * tiles_m
    for start, size in zip(offsets, sizes):
        inside = start % tm != 0 and size > 0 or visit_empty_groups and size == 0
        if inside and start // tm < tiles_m:
            visits[start // tm] += 1
    m_tile_ids = [t for t, n in enumerate(visits) for _ in range(n)][:length]
    m_tile_ids += [tiles_m - 1] * (length - len(m_tile_ids))

    shift = sum(g < start_group for g in group_ids[:length])
    group_ids = group_ids[shift:] + group_ids[:shift]
    m_tile_ids = m_tile_ids[shift:] + m_tile_ids[:shift]
    last = start_group + local_groups - 1
    num_tiles = sum(len(ts) for g, ts in enumerate(tiles_of) if start_group <= g <= last)
    return offsets, group_ids, m_tile_ids, num_tiles


def tile_range(lay: Layout) -> tuple[int, int]:
    """The fewest and the most grid steps any routing of all ``m`` rows over the local groups can give: every
    boundary on a tile edge, or every boundary inside a tile (each extra group adds one shared tile)."""
    extra = min(lay.local_groups - 1, lay.tiles_m * lay.tm - lay.tiles_m) if lay.local_groups > 1 else 0
    return lay.tiles_m, lay.tiles_m + extra
