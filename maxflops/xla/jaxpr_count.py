"""Matmul FLOPs of a function from its jaxpr: an independent second route to cross-check the HLO counter.

:func:`count_jaxpr` walks the closed jaxpr of ``fn`` (``jax.make_jaxpr``), which is global (not per device) and is
what JAX traced, before XLA: ``jax.checkpoint`` recompute is visible, nothing is CSE'd or rewritten.

- ``dot_general``: ``2 * prod(output dims) * prod(lhs contracting dims)``.
- ``conv_general_dilated``: ``2 * batch / batch_group_count * out_features * (in_features / feature_group_count)
  * prod over spatial dims of the (output position, kernel tap) pairs that read a real (non-padding) input element``,
  the convention of XLA's ``HloCostAnalysis``.
- ``scan``: the body times ``length``.
- ``while``: the body times the trip count when it is the plain counted pattern (``i < n`` on a carried counter that
  the body increments by a constant, with literal init and bound); otherwise ``ValueError``.
- ``cond``: the branches must cost the same (which one runs is data-dependent); otherwise ``ValueError``.
- ``shard_map``: the body (per-device shapes) times the number of devices along its manual mesh axes.
- Any other primitive with exactly one sub-jaxpr (``pjit``, ``closed_call``, ``remat``/``checkpoint``,
  ``custom_jvp_call``, ``custom_vjp_call``...) is recursed into once; a primitive with several sub-jaxprs that is not
  listed above raises ``ValueError`` rather than guess which of them run.
"""

from __future__ import annotations

import math

import jax

try:  # jax >= 0.4.30
    from jax.extend.core import ClosedJaxpr, Jaxpr, Literal
except ImportError:  # pragma: no cover - older jax
    from jax.core import ClosedJaxpr, Jaxpr, Literal

from .hlo import conv_valid_positions

__all__ = ["count_jaxpr", "count_jaxpr_object"]


def count_jaxpr(fn, *args, **kwargs) -> int:
    """Loop-aware matmul FLOPs of ``fn(*args, **kwargs)`` from its jaxpr (global, no CSE).

    ``fn`` may also be a ``ClosedJaxpr`` or ``Jaxpr`` (then no arguments are given).
    """
    if isinstance(fn, (ClosedJaxpr, Jaxpr)):
        if args or kwargs:
            raise TypeError("arguments given with a jaxpr")
        return count_jaxpr_object(fn)
    return count_jaxpr_object(jax.make_jaxpr(fn)(*args, **kwargs))


def count_jaxpr_object(jaxpr) -> int:
    """Loop-aware matmul FLOPs of a ``ClosedJaxpr`` or ``Jaxpr``."""
    return _count(_open(jaxpr))


def _open(j) -> Jaxpr:
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def _is_jaxpr(v) -> bool:
    return isinstance(v, (ClosedJaxpr, Jaxpr))


def _sub_jaxprs(params) -> list:
    out = []
    for v in params.values():
        if _is_jaxpr(v):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out.extend(x for x in v if _is_jaxpr(x))
    return out


def _count(jaxpr: Jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        total += _eqn_flops(eqn)
    return total


def _eqn_flops(eqn) -> int:
    name = eqn.primitive.name
    p = eqn.params
    if name == "dot_general":
        (lhs_contract, _), _ = p["dimension_numbers"]
        lhs_shape = eqn.invars[0].aval.shape
        out_shape = eqn.outvars[0].aval.shape
        return 2 * math.prod(out_shape) * math.prod(lhs_shape[d] for d in lhs_contract)
    if name == "conv_general_dilated":
        return _conv_flops(eqn)
    if name == "scan":
        return p["length"] * _count(_open(p["jaxpr"]))
    if name == "while":
        body = _count(_open(p["body_jaxpr"]))
        if body == 0:
            return 0
        return _while_trip_count(eqn) * body
    if name == "cond":
        costs = [_count(_open(b)) for b in p["branches"]]
        if len(set(costs)) > 1:
            raise ValueError(f"cond with branches of different matmul FLOPs {costs}: which branch runs is "
                             "data-dependent, so the count would be ambiguous (branches costing the same are accepted)")
        return costs[0] if costs else 0
    if name == "shard_map":
        return _shard_map_devices(eqn) * _count(_open(p["jaxpr"]))
    subs = _sub_jaxprs(p)
    if not subs:
        return 0
    if len(subs) > 1:
        raise ValueError(f"primitive {name!r} has {len(subs)} sub-jaxprs; do not know which of them run")
    return _count(_open(subs[0]))


def _conv_flops(eqn) -> int:
    p = eqn.params
    lhs_shape = eqn.invars[0].aval.shape
    rhs_shape = eqn.invars[1].aval.shape
    out_shape = eqn.outvars[0].aval.shape
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    batch = lhs_shape[lhs_spec[0]]
    in_features = lhs_shape[lhs_spec[1]]
    out_features = out_shape[out_spec[1]]
    n_spatial = len(lhs_spec) - 2
    strides = p["window_strides"]
    padding = p["padding"]
    lhs_dil = p.get("lhs_dilation") or (1,) * n_spatial
    rhs_dil = p.get("rhs_dilation") or (1,) * n_spatial
    taps = 1
    for i in range(n_spatial):
        taps *= conv_valid_positions(lhs_shape[lhs_spec[2 + i]], out_shape[out_spec[2 + i]],
                                     rhs_shape[rhs_spec[2 + i]], strides[i], padding[i][0], lhs_dil[i], rhs_dil[i])
    fgc = p.get("feature_group_count", 1)
    bgc = p.get("batch_group_count", 1)
    return 2 * (batch // bgc) * out_features * (in_features // fgc) * taps


def _literal_int(v):
    if isinstance(v, Literal):
        try:
            return int(v.val)
        except (TypeError, ValueError):
            return None
    return None


def _while_trip_count(eqn) -> int:
    """Trip count of a ``while`` whose condition is ``carry[i] < bound`` with a literal init and a constant step.

    ``bound`` is a literal, a cond const given as a literal, or a carry element the body passes through unchanged
    with a literal init (the shape of ``fori_loop`` with traced bounds). Anything else raises ``ValueError``.
    """
    p = eqn.params
    cond = _open(p["cond_jaxpr"])
    body = _open(p["body_jaxpr"])
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_consts = eqn.invars[:cn]
    init = eqn.invars[cn + bn:]
    fail = ValueError("while loop has no known trip count: only `carry[i] < n` with a literal init, a literal or "
                      "loop-invariant bound and a constant positive step is understood "
                      f"(cond: {cond.eqns[-1].primitive.name if cond.eqns else 'empty'}); use lax.scan or "
                      "fori_loop with static bounds")
    if len(cond.eqns) != 1 or cond.eqns[0].primitive.name != "lt" or cond.outvars[0] is not cond.eqns[0].outvars[0]:
        raise fail
    a, b = cond.eqns[0].invars
    cond_carry = cond.invars[cn:]
    cond_const_vars = cond.invars[:cn]
    if a not in cond_carry:
        raise fail
    i = cond_carry.index(a)

    def value_of(v):
        lit = _literal_int(v)
        if lit is not None:
            return lit
        if v in cond_const_vars:
            return _literal_int(cond_consts[cond_const_vars.index(v)])
        if v in cond_carry:
            j = cond_carry.index(v)
            if body.outvars[j] is not body.invars[bn + j]:       # bound must be loop-invariant
                return None
            return _literal_int(init[j])
        return None

    bound, start = value_of(b), _literal_int(init[i])
    if bound is None or start is None:
        raise fail
    # body: carry[i]_out = add(carry[i]_in, step)
    iv_in, iv_out = body.invars[bn + i], body.outvars[i]
    step = None
    for e in body.eqns:
        if iv_out in e.outvars and e.primitive.name == "add":
            x, y = e.invars
            if x is iv_in:
                step = _literal_int(y)
            elif y is iv_in:
                step = _literal_int(x)
    if step is None or step <= 0:
        raise fail
    return max(0, -(-(bound - start) // step))


def _shard_map_devices(eqn) -> int:
    """Number of devices the body of a shard_map runs on: the product of its manual mesh axes' sizes."""
    p = eqn.params
    mesh = p.get("mesh")
    axes = None
    for key in ("newly_manual_axes", "manual_axes", "axis_names"):     # the name moved between jax versions
        if p.get(key) is not None:
            axes = p[key]
            break
    if axes is None and mesh is not None and "auto" in p:               # older jax: manual = all but `auto`
        axes = set(mesh.axis_names) - set(p["auto"])
    if mesh is None or axes is None:
        raise ValueError("shard_map without mesh/manual axes in its params: cannot scale its per-device body")
    shape = dict(mesh.shape)
    return math.prod(shape[a] for a in axes)
