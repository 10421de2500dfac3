"""maxflops.xla.fold: the values a program computes, run by jaxlib's StableHLO interpreter over the ops they depend
on, held to the same programs run by XLA on this CPU (jax.jit), over what a kernel's tables pass through: integer
arithmetic, sorts and reductions with their regions, functions called from several places, loop state the loop keeps
or changes, a branch that reads values from outside it; and what it must refuse, by name."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from maxflops.xla import fold, stablehlo  # noqa: E402


def _module(f, *args):
    return stablehlo.read_text(jax.jit(f).lower(*args).as_text()).mlir


def _return_of(module, name="main"):
    return list(fold._function(module, name).regions[0].blocks[0].operations)[-1]


def _run(f, *args, stated=None):
    """fold's value of f's outputs with every input stated, against jax's own run of f."""
    module = _module(f, *args)
    op = _return_of(module)
    given = stated or (lambda i, shape: np.asarray(args[i]))
    got = fold.evaluate(module, op, list(range(len(op.operands))), given)
    want = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, np.asarray(w))
    return got


SEG = np.array([3, 3, 1, 1, 1, 0, 2, 2], np.int32)


def test_tables_built_as_a_kernel_builds_them():
    """Sort (stable, several operands, a comparator region), arg max, reductions, one-hot selects, cumulative sums."""
    def tables(seg, rows):
        lo, hi = seg.reshape(4, 2).min(axis=1), seg.reshape(4, 2).max(axis=1)
        keep = (hi[rows] >= lo[::-1][rows]) & (rows % 2 == 0)
        _, order, r = jax.lax.sort(((~keep).astype(jnp.int32), jnp.arange(8), rows), num_keys=1, is_stable=True)
        onehot = rows[:, None] == jnp.arange(4)[None, :]
        return order, r, jnp.sum(keep), jnp.argmax(onehot, axis=0), jnp.cumsum(keep.astype(jnp.int32))

    _run(tables, SEG, np.array([0, 1, 2, 3, 0, 1, 2, 3], np.int32))


def test_loop_state_kept_or_changed():
    def kept(seg):
        def body(i, c):
            s, acc = c
            return s, acc + s * i
        s, acc = jax.lax.fori_loop(0, 3, body, (seg * 2, seg))
        return s
    _run(kept, SEG)

    def changed(seg):
        return jax.lax.fori_loop(0, 3, lambda i, s: s + i, seg)
    module = _module(changed, SEG)
    with pytest.raises(fold.NotFixed, match="which the loop changes"):
        fold.evaluate(module, _return_of(module), [0], lambda i, shape: SEG)


def test_a_branch_reading_values_from_outside():
    def branch(seg, flag):
        t = seg * 3
        return jax.lax.cond(flag > 0, lambda: t + 1, lambda: t - 1)
    _run(branch, SEG, np.int32(1))
    _run(branch, SEG, np.int32(0))


def test_a_function_called_from_two_places():
    """A value inside a function is evaluated on each chain of calls that reaches it: the same on every chain, or
    refused."""
    @jax.jit
    def inner(x):
        return jnp.sort(x) * 2

    def same(seg):
        return inner(seg) + inner(seg)

    def differ(seg):
        return inner(seg) + inner(seg + 1)

    for f, agree in ((same, True), (differ, False)):
        module = _module(f, SEG)
        assert len(fold._call_sites(module)["inner"]) == 2
        op = _return_of(module, "inner")
        if agree:
            got = fold.evaluate(module, op, [0], lambda i, shape: SEG)
            assert np.array_equal(got[0], np.sort(SEG) * 2)
        else:
            with pytest.raises(fold.NotFixed, match="different tables"):
                fold.evaluate(module, op, [0], lambda i, shape: SEG)


def test_what_is_not_stated_or_not_fixed_is_named():
    def two(seg, other):
        return seg + other
    module = _module(two, SEG, SEG)
    with pytest.raises(fold.NotFixed, match=r"input 1 \(s32\[8\]\), not stated"):
        fold.evaluate(module, _return_of(module), [0], lambda i, shape: SEG if i == 0 else None)
    assert fold.sources(module, _return_of(module), [0]) == {0, 1}

    def noisy(seg):
        return seg + jax.lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (8,), jnp.uint32)[1].astype(jnp.int32)
    module = _module(noisy, SEG)
    with pytest.raises(fold.NotFixed, match="random numbers"):
        fold.evaluate(module, _return_of(module), [0], lambda i, shape: SEG)
