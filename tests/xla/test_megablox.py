"""megablox's grouped matmuls priced from the group sizes, held against jax's own megablox code:

- the tables :mod:`maxflops.xla.megablox` builds equal jax's ``make_group_metadata`` (run here on CPU) entry for entry,
  over random group sizes with empty groups, both kernels' rules (tgmm visits empty groups) and expert shards;
- the price of ``gmm`` and ``tgmm`` exported for TPU equals a brute-force count from the rows alone (one tile matmul
  ``tm x tk x tn`` per (group, row tile) pair with rows in it, per column tile and contraction tile), and equals jax's
  own metadata's tile count times the kernel's tile matmul;
- the kernel run by the Pallas interpreter on those sizes computes the grouped matmul (the tables are the kernel's).
"""

import importlib
import math
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from maxflops.xla import count_program, megablox

gmm_module = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")
# jitted once per shape (the local group count traced: jax's rule only adds and compares it)
metadata = jax.jit(gmm_module.make_group_metadata, static_argnames=("m", "tm", "visit_empty_groups"))


def random_sizes(rng: random.Random, m: int, groups: int, empty: float = 0.3) -> list[int]:
    """``groups`` sizes summing to at most ``m``, some empty, cut at random rows."""
    cuts = sorted(rng.randrange(0, m + 1) for _ in range(groups - 1))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [m])]
    sizes = [0 if rng.random() < empty else s for s in sizes]
    return sizes


CASES = [(m, tm, g) for m, tm in ((512, 128), (384, 128), (256, 64), (128, 128)) for g in (1, 2, 3, 5, 8)]


@pytest.mark.parametrize("m,tm,groups", CASES)
@pytest.mark.parametrize("visit_empty", [False, True])
def test_tables_equal_jax_make_group_metadata(m, tm, groups, visit_empty):
    rng = random.Random(m * 31 + tm * 7 + groups + visit_empty)
    shards = [(0, groups)] + [(s, n) for s in range(groups) for n in range(1, groups - s + 1)][:4]
    for trial in range(6):
        sizes = random_sizes(rng, m, groups, empty=0.0 if trial == 0 else 0.3)
        for start, local in shards:
            (offsets, ids, tiles), n = metadata(
                group_sizes=jnp.array(sizes, jnp.int32), m=m, tm=tm, start_group=jnp.int32(start),
                num_nonzero_groups=jnp.int32(local), visit_empty_groups=visit_empty)
            got = megablox.group_metadata(sizes, m, tm, start, local, visit_empty)
            want = ([int(x) for x in offsets], [int(x) for x in ids], [int(x) for x in tiles], int(n))
            assert got == want, (sizes, start, local)


def brute_pairs(sizes: list[int], tm: int) -> int:
    """(group, row tile) pairs with at least one of the group's rows in the tile, from the rows themselves."""
    pairs = set()
    row = 0
    for g, s in enumerate(sizes):
        for r in range(row, row + s):
            pairs.add((g, r // tm))
        row += s
    return len(pairs)


def _gmm_specs(m, k, n, groups):
    return (jax.ShapeDtypeStruct((m, k), jnp.bfloat16), jax.ShapeDtypeStruct((groups, k, n), jnp.bfloat16),
            jax.ShapeDtypeStruct((groups,), jnp.int32))


@pytest.mark.slow
@pytest.mark.parametrize("m,k,n,groups,tiling", [(512, 256, 384, 4, (128, 128, 128)),
                                                (384, 200, 256, 3, (128, 128, 128)),
                                                (512, 256, 256, 6, (64, 128, 256))])
def test_gmm_and_tgmm_priced_as_the_tiles_the_rows_visit(m, k, n, groups, tiling):
    tm, tk, tn = tiling
    rng = random.Random(m + k + n + groups)
    gmm = lambda x, w, gs: gmm_module.gmm(x, w, gs, tiling=tiling)           # noqa: E731
    tgmm = lambda x, dy, gs: gmm_module.tgmm(x.T, dy, gs, tiling=tiling)     # noqa: E731
    tgmm_specs = (jax.ShapeDtypeStruct((m, k), jnp.bfloat16), jax.ShapeDtypeStruct((m, n), jnp.bfloat16),
                  jax.ShapeDtypeStruct((groups,), jnp.int32))
    tile = 2 * tm * tk * tn
    for sizes in [megablox.balanced(m, groups)] + [random_sizes(rng, m, groups) for _ in range(4)]:
        pairs = brute_pairs(sizes, tm)
        (_, _, _), n_jax = metadata(
            group_sizes=jnp.array(sizes, jnp.int32), m=m, tm=tm, start_group=jnp.int32(0),
            num_nonzero_groups=jnp.int32(groups), visit_empty_groups=False)
        want = math.ceil(n / tn) * math.ceil(k / tk) * pairs * tile
        assert int(n_jax) * math.ceil(n / tn) * math.ceil(k / tk) * tile == want
        for fn, specs in ((gmm, _gmm_specs(m, k, n, groups)), (tgmm, tgmm_specs)):
            c = count_program(fn, *specs, platform="tpu", megablox_group_sizes=sizes)
            assert not c.not_counted, c.summary()
            assert c.kernel_flops == want, (sizes, c.summary())


def test_balanced_is_the_default_and_said():
    m, k, n, groups = 512, 256, 384, 4
    f = lambda x, w, gs: gmm_module.gmm(x, w, gs, tiling=(128, 128, 128))   # noqa: E731
    c = count_program(f, *_gmm_specs(m, k, n, groups), platform="tpu")
    assert c.kernel_flops == 2 * m * k * n                  # 128 rows a group: every boundary on a tile edge
    assert "assumed balanced (512 rows over 4 groups)" in c.kernels[0].note
    assert "gives 4 to 7" in c.kernels[0].note
    # 3 groups of 171/171/170 rows: two boundaries inside tiles, so two more row-tile steps than the 4 tiles
    c3 = count_program(f, *_gmm_specs(m, k, n, 3), platform="tpu")
    assert c3.kernel_flops == 6 * 3 * 2 * 2 * 128 ** 3
    none = count_program(f, *_gmm_specs(m, k, n, groups), platform="tpu", megablox_group_sizes=None)
    assert none.kernel_flops == 0 and "group sizes" in none.not_counted[0].note
    wrong = count_program(f, *_gmm_specs(m, k, n, groups), platform="tpu", megablox_group_sizes=[1, 2])
    assert "4 groups; the group_sizes given have 2" in wrong.not_counted[0].note
    too_many = count_program(f, *_gmm_specs(m, k, n, groups), platform="tpu", megablox_group_sizes=[200] * 4)
    assert "more than the call's 512" in too_many.not_counted[0].note
    with pytest.raises(ValueError, match="group_sizes: expected"):
        count_program(f, *_gmm_specs(m, k, n, groups), platform="tpu", megablox_group_sizes="even")


def test_the_interpreted_kernel_computes_the_grouped_matmul():
    """gmm run by the Pallas interpreter on CPU with uneven sizes (an empty group, boundaries inside tiles) equals
    the grouped matmul: the rows the tables send to each group are that group's."""
    m, k, n, sizes = 256, 128, 128, [70, 0, 150, 36]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((m, k)), jnp.float32)
    w = jnp.asarray(rng.standard_normal((len(sizes), k, n)), jnp.float32)
    out = gmm_module.gmm(x, w, jnp.array(sizes, jnp.int32), tiling=(128, 128, 128), interpret=True)
    row = 0
    for g, s in enumerate(sizes):
        # float32 sums in another order (per k tile, then across): equal to float32 rounding
        np.testing.assert_allclose(out[row:row + s], x[row:row + s] @ w[g], rtol=1e-4, atol=1e-4)
        row += s
