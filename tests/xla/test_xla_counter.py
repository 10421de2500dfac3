"""The loop-aware matmul counter (maxflops.xla.hlo) and the jaxpr counter (maxflops.xla.jaxpr_count) against
hand-derived numbers and XLA itself.

Every expected number is derived by hand in a comment (2*M*N*K per dot), never by running the code under test twice.
Shapes are tiny, f32, every dim >= 2 (XLA rewrites degenerate dots). The 8-device SPMD case runs in a subprocess.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from repo import ROOT

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from maxflops.xla import hlo  # noqa: E402
from maxflops.xla.jaxpr_count import count_jaxpr  # noqa: E402

REPO = str(ROOT)


def all_three(fn, *args):
    """(optimized-module count, pre-optimization count, jaxpr count) of fn(*args)."""
    return hlo.count_matmuls(fn, *args), hlo.count_lowered(fn, *args), count_jaxpr(fn, *args)


# ----------------------------------------------------------------------------------------------------------------------
# Through jax / XLA
# ----------------------------------------------------------------------------------------------------------------------

def test_plain_matmul():
    x, w = jnp.ones((4, 8)), jnp.ones((8, 6))
    c, low, jx = all_three(lambda x, w: x @ w, x, w)
    # [4,8] @ [8,6]: 2*M*N*K = 2*4*6*8 = 384
    assert c.matmul_flops == c.naive_matmul_flops == low.matmul_flops == jx == 384
    assert c.raw_cost_analysis_flops == 384.0
    assert [(d.kind, d.flops, d.multiplier) for d in c.dots] == [("dot", 384, 1)]


def test_scan_of_7_is_7x_naive_and_cost_analysis_undercounts():
    def f(x, ws):
        return lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0]

    x, ws = jnp.ones((4, 8)), jnp.ones((7, 8, 8))
    c, low, jx = all_three(f, x, ws)
    # one step: [4,8] @ [8,8] = 2*4*8*8 = 512; 7 steps: 3584
    assert c.matmul_flops == low.matmul_flops == jx == 3584
    assert c.naive_matmul_flops == low.naive_matmul_flops == 512
    assert [d.multiplier for d in c.dots] == [7]
    # XLA counts the body once: one dot (512) plus a little elementwise work, far below 3584
    assert 512 <= c.raw_cost_analysis_flops < 3584


def test_nested_scans_multiply():
    def f(x, ws):                                         # ws: [3, 5, 8, 8]
        def outer(h, w5):
            return lax.scan(lambda g, w: (jnp.tanh(g @ w), None), h, w5)[0], None
        return lax.scan(outer, x, ws)[0]

    x, ws = jnp.ones((4, 8)), jnp.ones((3, 5, 8, 8))
    c, low, jx = all_three(f, x, ws)
    # 3 * 5 = 15 executions of [4,8] @ [8,8] (2*4*8*8 = 512): 7680
    assert c.matmul_flops == low.matmul_flops == jx == 7680
    assert [d.multiplier for d in c.dots] == [15]
    assert c.naive_matmul_flops == 512


def _mlp_train_step(remat):
    def layer(h, w):
        w1, w2 = w
        return jnp.tanh(jnp.tanh(h @ w1) @ w2), None

    if remat:
        layer = jax.checkpoint(layer)

    def loss(params, x):
        return jnp.sum(lax.scan(layer, x, params)[0])

    return jax.value_and_grad(loss)


MLP_ARGS = ((jnp.ones((3, 8, 16)), jnp.ones((3, 16, 8))), jnp.ones((4, 8)))
# forward, per layer: [4,8] @ [8,16] = 2*4*16*8 = 1024 and [4,16] @ [16,8] = 2*4*8*16 = 1024 -> 2048;
# 3 layers: 6144
MLP_FORWARD = 6144


def test_train_step_of_scanned_mlp_is_3x_forward():
    c, low, jx = all_three(_mlp_train_step(False), *MLP_ARGS)
    # forward + input grads + weight grads (kept for the first layer's input too: inside a scan) = 3 * 6144
    assert c.matmul_flops == low.matmul_flops == jx == 3 * MLP_FORWARD == 18432
    # each of the two loops (forward, backward) counted once: 2048 + 2 * 2048
    assert c.naive_matmul_flops == 6144


def test_remat_recompute_visible_in_lowered_module_and_jaxpr():
    low = hlo.count_lowered(_mlp_train_step(True), *MLP_ARGS)
    jx = count_jaxpr(_mlp_train_step(True), *MLP_ARGS)
    # both matmuls of each layer feed a tanh whose output the backward needs, so the whole layer is recomputed:
    # forward + recompute + backward = 4 * 6144
    assert low.matmul_flops == jx == 4 * MLP_FORWARD == 24576
    # the optimized module runs at least the un-rematted work and at most the rematted work (CSE may remove it)
    c = hlo.count_matmuls(_mlp_train_step(True), *MLP_ARGS)
    assert 3 * MLP_FORWARD <= c.matmul_flops <= 4 * MLP_FORWARD


def test_remat_recomputes_only_what_the_backward_needs():
    def layer(h, w):
        w1, w2 = w
        return jnp.tanh(h @ w1) @ w2, None                # the second matmul's output is not needed by the backward

    def loss(params, x):
        return jnp.sum(lax.scan(jax.checkpoint(layer), x, params)[0])

    step = jax.value_and_grad(loss)
    # 3 * 6144 without remat, plus the recomputed first matmul of each layer: 3 * 1024 = 3072 -> 21504
    assert hlo.count_lowered(step, *MLP_ARGS).matmul_flops == count_jaxpr(step, *MLP_ARGS) == 21504


def test_dot_inside_fusion_is_found():
    def f(x, w, b):
        return jnp.tanh(x @ w + b)

    args = jnp.ones((4, 8)), jnp.ones((8, 6)), jnp.ones((6,))
    compiled = jax.jit(f).lower(*args).compile()
    module = hlo.parse_hlo_module(compiled.as_text())
    homes = [comp for comp in module.computations.values() if any(i.opcode == "dot" for i in comp.instructions)]
    fused_into = {ins.attrs.get("calls", "").lstrip("%") for comp in module.computations.values()
                  for ins in comp.instructions if ins.opcode == "fusion"}
    assert homes and all(c.name in fused_into for c in homes), "expected the dot inside a fused computation"
    # 2*4*6*8 = 384
    assert hlo.count_matmuls(compiled).matmul_flops == count_jaxpr(f, *args) == 384


def test_depthwise_causal_conv_counts_non_padding_taps():
    B, L, C, K = 2, 10, 6, 4

    def f(x, w):                                          # causal: left padding K-1, one filter per channel
        return lax.conv_general_dilated(x, w, window_strides=(1,), padding=[(K - 1, 0)],
                                        dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=C)

    x, w = jnp.ones((B, L, C)), jnp.ones((K, 1, C))
    # brute force: output position o, tap k read input o - (K-1) + k; count those inside [0, L)
    o, k = np.meshgrid(np.arange(L), np.arange(K), indexing="ij")
    taps = int(np.sum((o - (K - 1) + k >= 0) & (o - (K - 1) + k < L)))
    assert taps == 4 * 10 - (3 + 2 + 1)                   # 40 pairs, 6 of them read left padding
    expected = 2 * B * C * 1 * taps                       # 2 * batch * out_features * (C / groups = 1) * 34 = 816
    c, low, jx = all_three(f, x, w)
    assert c.matmul_flops == low.matmul_flops == jx == expected == 816
    assert c.raw_cost_analysis_flops == 816.0             # XLA's own count agrees
    assert [d.kind for d in c.dots] == ["convolution"]


@pytest.mark.parametrize("case", [
    # (spatial, C_in, C_out, groups, kernel, strides, padding, lhs_dilation, rhs_dilation)
    ((10,), 6, 12, 3, (3,), (2,), ((1, 2),), (1,), (2,)),
    ((7, 5), 4, 8, 1, (3, 2), (1, 2), ((1, 1), (0, 1)), (1, 1), (1, 1)),
    ((6,), 4, 4, 1, (3,), (1,), ((2, 2),), (2,), (1,)),
])
def test_general_conv_matches_brute_force_and_xla(case):
    spatial, cin, cout, groups, kernel, strides, padding, lhs_d, rhs_d = case
    n = len(spatial)
    sp = "HW"[:n] if n == 2 else "W"
    dn = ("N" + sp + "C", sp + "IO", "N" + sp + "C")

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=lhs_d, rhs_dilation=rhs_d,
                                        dimension_numbers=dn, feature_group_count=groups)

    x, w = jnp.ones((2,) + spatial + (cin,)), jnp.ones(kernel + (cin // groups, cout))
    out_spatial = jax.eval_shape(f, x, w).shape[1:-1]
    taps = 1
    for i in range(n):                                    # brute force over the dilated, padded input
        valid = 0
        for o in range(out_spatial[i]):
            for k in range(kernel[i]):
                u = o * strides[i] - padding[i][0] + k * rhs_d[i]
                valid += u % lhs_d[i] == 0 and 0 <= u // lhs_d[i] < spatial[i]
        taps *= valid
    expected = 2 * 2 * cout * (cin // groups) * taps
    c, low, jx = all_three(f, x, w)
    assert c.matmul_flops == low.matmul_flops == jx == expected == c.raw_cost_analysis_flops


def test_unknown_trip_count_raises():
    def f(x, w, n):                                       # the bound is data: no static trip count
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.tanh(c[1] @ w)), (0, x))[1]

    args = jnp.ones((4, 8)), jnp.ones((8, 8)), 3
    with pytest.raises(ValueError, match="no known trip count"):
        hlo.count_matmuls(f, *args)
    with pytest.raises(ValueError, match="no known trip count"):
        hlo.count_lowered(f, *args)
    with pytest.raises(ValueError, match="no known trip count"):
        count_jaxpr(f, *args)


def test_while_loop_with_static_bound_is_derived():
    def f(x, w):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, jnp.tanh(c[1] @ w)), (0, x))[1]

    c, low, jx = all_three(f, jnp.ones((4, 8)), jnp.ones((8, 8)))
    # 5 iterations of [4,8] @ [8,8] = 2*4*8*8 = 512: 2560
    assert c.matmul_flops == low.matmul_flops == jx == 2560


def test_cond_counts_equal_branches_once_and_rejects_unequal_ones():
    x, w = jnp.ones((4, 8)), jnp.ones((8, 8))

    def equal(p, x, w):
        return lax.cond(p > 0, lambda a: a @ w, lambda a: (2 * a) @ w, x)

    def unequal(p, x, w):
        return lax.cond(p > 0, lambda a: a @ w, lambda a: 2 * a, x)

    c, low, jx = all_three(equal, 1.0, x, w)
    # either branch: [4,8] @ [8,8] = 2*4*8*8 = 512
    assert c.matmul_flops == low.matmul_flops == jx == 512
    for counter in (hlo.count_matmuls, hlo.count_lowered):
        with pytest.raises(ValueError, match="conditional .* different matmul FLOPs"):
            counter(unequal, 1.0, x, w)
    with pytest.raises(ValueError, match="different matmul FLOPs"):
        count_jaxpr(unequal, 1.0, x, w)


def test_by_scope_sees_through_transformations():
    def f(x, w1, w2):
        with jax.named_scope("qkv_proj"):
            h = jnp.tanh(x @ w1)
        with jax.named_scope("mlp"):
            return jnp.sum(jnp.tanh(h @ w2))

    step = jax.grad(f, argnums=(1, 2))
    args = jnp.ones((4, 8)), jnp.ones((8, 6)), jnp.ones((6, 6))
    # qkv_proj: forward 2*4*6*8 = 384 and the weight gradient 384 (x is raw data: no input gradient) -> 768
    # mlp: forward 2*4*6*6 = 288, input gradient 288, weight gradient 288 -> 864
    for count in (hlo.count_matmuls(step, *args), hlo.count_lowered(step, *args)):
        assert count.by_scope(["qkv_proj", "mlp"]) == {"qkv_proj": 768, "mlp": 864, "other": 0}


def test_by_scope_inside_scan_of_lowered_module():
    def f(x, ws):
        def body(h, w):
            with jax.named_scope("layer"):
                return jnp.tanh(h @ w), None
        return lax.scan(body, x, ws)[0]

    # the lowered module names ops inside the scan body relative to it ("layer/dot_general"); 3 * 512 = 1536
    low = hlo.count_lowered(f, jnp.ones((4, 8)), jnp.ones((3, 8, 8)))
    assert low.by_scope(["layer"]) == {"layer": 1536, "other": 0}
    assert all(d.op_name.startswith("jit(f)/") for d in low.dots)


def test_accepts_lowered_and_compiled_stages():
    lowered = jax.jit(lambda x, w: x @ w).lower(jnp.ones((4, 8)), jnp.ones((8, 6)))
    # 2*4*6*8 = 384 each way
    assert hlo.count_matmuls(lowered).matmul_flops == hlo.count_matmuls(lowered.compile()).matmul_flops == 384
    assert hlo.count_lowered(lowered).matmul_flops == 384
    with pytest.raises(TypeError):
        hlo.count_lowered(lowered.compile())


SPMD_SCRIPT = textwrap.dedent("""
    import os, json
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax, jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from maxflops.xla import hlo
    from maxflops.xla.jaxpr_count import count_jaxpr
    mesh = Mesh(jax.devices(), ("data",))
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", None)))
    w = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P()))
    ws = jax.device_put(jnp.ones((3, 8, 8)), NamedSharding(mesh, P()))
    mm = jax.jit(lambda x, w: x @ w)
    sc = jax.jit(lambda x, ws: lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0])
    sm = jax.jit(jax.shard_map(lambda x, w: x @ w, mesh=mesh, in_specs=(P("data"), P()), out_specs=P("data")))
    out = dict(devices=len(jax.devices()),
               shard_map=[hlo.count_matmuls(sm, x, w).matmul_flops, hlo.count_lowered(sm, x, w).matmul_flops,
                          count_jaxpr(sm, x, w)],
               mm=[hlo.count_matmuls(mm, x, w).matmul_flops, hlo.count_lowered(mm, x, w).matmul_flops,
                   count_jaxpr(mm, x, w)],
               scan=[hlo.count_matmuls(sc, x, ws).matmul_flops, hlo.count_lowered(sc, x, ws).matmul_flops,
                     count_jaxpr(sc, x, ws)])
    print("RESULT", json.dumps(out))
""")


def test_spmd_compiled_count_is_per_device():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", SPMD_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.split("RESULT", 1)[1])
    assert out["devices"] == 8
    # global [16,8] @ [8,4] = 2*16*4*8 = 1024; per device [2,8] @ [8,4] = 2*2*4*8 = 128 = 1024 / 8
    assert out["mm"] == [128, 1024, 1024]
    # global 3 * (2*16*8*8 = 2048) = 6144; per device 3 * (2*2*8*8 = 256) = 768 = 6144 / 8
    assert out["scan"] == [768, 6144, 6144]
    # shard_map: the body is written per device ([2,8] @ [8,4] = 128) in both HLO modules; the jaxpr count scales it
    # by the 8 devices of its manual axis back to the global 1024
    assert out["shard_map"] == [128, 128, 1024]


# ----------------------------------------------------------------------------------------------------------------------
# Hand-written HLO text: the parser and call-graph rules, independent of the installed XLA
# ----------------------------------------------------------------------------------------------------------------------

LOOP_HLO = """\
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0}, f32[12,8,8]{2,1,0})->f32[4,8]{1,0}}

FileNames
1 "/tmp/x.py"

%fused_computation (param_0: f32[4,8], param_1.2: f32[8,8]) -> f32[4,8] {
  %param_0 = f32[4,8]{1,0} parameter(0)
  %param_1.2 = f32[8,8]{1,0} parameter(1)
  ROOT %dot.1 = f32[4,8]{1,0} dot(%param_0, %param_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/while/body/layer/dot_general" stack_frame_id=1}
}

%slice_computation (p0: f32[12,8,8], p1: s32[]) -> f32[8,8] {
  %p0 = f32[12,8,8]{2,1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %c0 = s32[] constant(0)
  %ds = f32[1,8,8]{2,1,0} dynamic-slice(%p0, %p1, %c0, %c0), dynamic_slice_sizes={1,8,8}
  ROOT %bc = f32[8,8]{1,0} bitcast(%ds)
}

%add_computation (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %add = s32[] add(%a, %b)
}

%body (arg: (s32[], f32[4,8], f32[12,8,8])) -> (s32[], f32[4,8], f32[12,8,8]) {
  %arg = (s32[], f32[4,8]{1,0}, /*index=2*/f32[12,8,8]{2,1,0}) parameter(0)
  %i = s32[] get-tuple-element(%arg), index=0
  %h = f32[4,8]{1,0} get-tuple-element(%arg), index=1
  %ws = f32[12,8,8]{2,1,0} get-tuple-element(%arg), index=2
  %one = s32[] constant(1)
  %next = s32[] fusion(%i, %one), kind=kLoop, calls=%add_computation
  %w = f32[8,8]{1,0} fusion(%ws, %i), kind=kLoop, calls=%slice_computation
  %mm = f32[4,8]{1,0} fusion(%h, %w), kind=kOutput, calls=%fused_computation, metadata={op_name="jit(f)/while/body/layer/dot_general"}
  ROOT %t = (s32[], f32[4,8]{1,0}, /*index=2*/f32[12,8,8]{2,1,0}) tuple(%next, %mm, /*index=2*/%ws)
}

%compare_computation (x: s32[], y: s32[]) -> pred[] {
  %x = s32[] parameter(0)
  %y = s32[] parameter(1)
  ROOT %lt = pred[] compare(%x, %y), direction=LT
}

%cond (carg: (s32[], f32[4,8], f32[12,8,8])) -> pred[] {
  %carg = (s32[], f32[4,8]{1,0}, f32[12,8,8]{2,1,0}) parameter(0)
  %n = s32[] constant(12)
  %ci = s32[] get-tuple-element(%carg), index=0
  ROOT %c = pred[] fusion(%ci, %n), kind=kLoop, calls=%compare_computation
}

ENTRY %main (x.1: f32[4,8], ws.1: f32[12,8,8]) -> f32[4,8] {
  %x.1 = f32[4,8]{1,0} parameter(0)
  %ws.1 = f32[12,8,8]{2,1,0} parameter(1)
  %zero = s32[] constant(0)
  %z = s32[] copy(%zero)
  %init = (s32[], f32[4,8]{1,0}, f32[12,8,8]{2,1,0}) tuple(%z, %x.1, %ws.1)
  %loop = (s32[], f32[4,8]{1,0}, f32[12,8,8]{2,1,0}) while(%init), condition=%cond, body=%body, metadata={op_name="jit(f)/while"}BACKEND
  ROOT %out = f32[4,8]{1,0} get-tuple-element(%loop), index=1
}
"""
ANNOTATED = ', backend_config={"known_induction_variable":{"tuple_index":"0"},"known_trip_count":{"n":"12"}}'


def test_hlo_text_known_trip_count_and_fusion_parameters():
    r = hlo.count_hlo_text(LOOP_HLO.replace("BACKEND", ANNOTATED))
    # 12 trips of [4,8] @ [8,8]: 12 * 2*4*8*8 = 12 * 512 = 6144
    assert r.matmul_flops == 6144 and r.naive_matmul_flops == 512
    assert r.dots == (hlo.Dot("dot.1", "dot", "jit(f)/while/body/layer/dot_general", 512, 12),)
    assert r.raw_cost_analysis_flops is None
    assert r.by_scope(["layer"]) == {"layer": 6144, "other": 0}


def test_hlo_text_trip_count_derived_from_condition():
    # no backend_config: 0 < 12 step 1 -> 12 trips, 6144 as above
    assert hlo.count_hlo_text(LOOP_HLO.replace("BACKEND", "")).matmul_flops == 6144
    # start at 2, step 3: i = 2, 5, 8, 11 -> 4 trips: 4 * 512 = 2048
    text = (LOOP_HLO.replace("BACKEND", "").replace("%zero = s32[] constant(0)", "%zero = s32[] constant(2)")
            .replace("%one = s32[] constant(1)", "%one = s32[] constant(3)"))
    assert hlo.count_hlo_text(text).matmul_flops == 2048


def test_hlo_text_unknown_trip_count_raises():
    text = LOOP_HLO.replace("BACKEND", "").replace("ROOT %lt = pred[] compare(%x, %y), direction=LT",
                                                    "ROOT %lt = pred[] compare(%x, %y), direction=NE")
    with pytest.raises(ValueError, match="while loop %loop .* no known trip count"):
        hlo.count_hlo_text(text)


NESTED_HLO = """\
HloModule m

%inner_body (a: (s32[], f32[2,3])) -> (s32[], f32[2,3]) {
  %a = (s32[], f32[2,3]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%a), index=0
  %v = f32[2,3]{1,0} get-tuple-element(%a), index=1
  %w = f32[3,3]{1,0} constant({...})
  %d = f32[2,3]{1,0} dot(f32[2,3]{1,0} %v, f32[3,3]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (s32[], f32[2,3]{1,0}) tuple(%i, %d)
}

%inner_cond (a: (s32[], f32[2,3])) -> pred[] {
  %a = (s32[], f32[2,3]{1,0}) parameter(0)
  ROOT %p = pred[] constant(true)
}

%outer_body (b: (s32[], f32[2,3])) -> (s32[], f32[2,3]) {
  %b = (s32[], f32[2,3]{1,0}) parameter(0)
  %w2 = (s32[], f32[2,3]{1,0}) while(%b), condition=%inner_cond, body=%inner_body, backend_config={"known_trip_count":{"n":"5"}}
  %c = (s32[], f32[2,3]{1,0}) call(%w2), to_apply=%helper
  ROOT %c2 = (s32[], f32[2,3]{1,0}) call(%c), to_apply=%helper
}

%helper (h: (s32[], f32[2,3])) -> (s32[], f32[2,3]) {
  %h = (s32[], f32[2,3]{1,0}) parameter(0)
  %hv = f32[2,3]{1,0} get-tuple-element(%h), index=1
  %hw = f32[3,3]{1,0} constant({...})
  %hd = f32[2,3]{1,0} dot(%hv, %hw), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %hi = s32[] get-tuple-element(%h), index=0
  ROOT %ht = (s32[], f32[2,3]{1,0}) tuple(%hi, %hd)
}

ENTRY %main (p: (s32[], f32[2,3])) -> (s32[], f32[2,3]) {
  %p = (s32[], f32[2,3]{1,0}) parameter(0)
  ROOT %w1 = (s32[], f32[2,3]{1,0}) while(%p), condition=%inner_cond, body=%outer_body, backend_config={"known_trip_count":{"n":"3"}}
}
"""


def test_hlo_text_nested_loops_calls_and_old_style_operands():
    r = hlo.count_hlo_text(NESTED_HLO)
    # a dot [2,3] @ [3,3] is 2*2*3*3 = 36 FLOPs.
    # inner dot: 3 outer * 5 inner = 15 runs -> 540; helper dot: called twice per outer trip -> 6 runs -> 216
    assert {d.name: d.multiplier for d in r.dots} == {"d": 15, "hd": 6}
    assert r.matmul_flops == 540 + 216 == 756
    # naive: trips as 1, call multiplicity kept (as cost_analysis): 36 + 2 * 36 = 108
    assert r.naive_matmul_flops == 108


COND_HLO = """\
HloModule m

%br0 (a: f32[2,4]) -> f32[2,4] {
  %a = f32[2,4]{1,0} parameter(0)
  %w = f32[4,4]{1,0} constant({...})
  ROOT %d0 = f32[2,4]{1,0} dot(%a, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%br1 (b: f32[2,4]) -> f32[2,4] {
  %b = f32[2,4]{1,0} parameter(0)
  %w = f32[4,4]{1,0} constant({...})
  ROOT %d1 = f32[2,4]{1,0} dot(%b, %w), lhs_contracting_dims={1}, rhs_contracting_dims={BR1_CONTRACT}
}

ENTRY %main (i: s32[], x: f32[2,4]) -> f32[2,4] {
  %i = s32[] parameter(0)
  %x = f32[2,4]{1,0} parameter(1)
  ROOT %c = f32[2,4]{1,0} conditional(%i, %x, %x), branch_computations={%br0, %br1}
}
"""


def test_hlo_text_conditionals():
    # both branches: [2,4] @ [4,4] = 2*2*4*4 = 64; counted once
    r = hlo.count_hlo_text(COND_HLO.replace("BR1_CONTRACT", "0"))
    assert r.matmul_flops == 64 and len(r.dots) == 1
    # a branch with a different cost: ambiguous
    text = COND_HLO.replace("BR1_CONTRACT", "0").replace(
        "ROOT %d1 = f32[2,4]{1,0} dot(%b, %w)", "%e = f32[2,4]{1,0} dot(%b, %w)").replace(
        "rhs_contracting_dims={0}\n}\n\nENTRY", "rhs_contracting_dims={0}\n  ROOT %d1 = f32[2,4]{1,0} dot(%e, %w), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n\nENTRY")
    with pytest.raises(ValueError, match="conditional %c .*different"):
        hlo.count_hlo_text(text)


def test_conv_valid_positions_small_cases():
    # 1-D, L=10, K=4, pad 3 left: 40 pairs minus 6 reading padding
    assert hlo.conv_valid_positions(10, 10, 4, pad_low=3) == 34
    # no padding, 'valid' conv: every pair is real: out 7 * K 4 = 28
    assert hlo.conv_valid_positions(10, 7, 4) == 28
    # input dilation 2 (transposed conv), in 3 -> dilated 5 positions (x . x . x), K=2, pad 1_1, out 6:
    # per output o, taps k in {0,1} read dilated index o-1+k; real elements sit at 0, 2, 4 -> each is read by 2
    # (o,k) pairs -> 6
    assert hlo.conv_valid_positions(3, 6, 2, pad_low=1, lhs_dilation=2) == 6


def test_hlo_text_library_gemm_custom_call():
    # the shape of a cuBLAS gemm in an optimized GPU module: a tuple result (output, workspace), operand types inline
    text = """\
HloModule m

ENTRY %main (p0: f32[4,8], p1: f32[8,6]) -> f32[4,6] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %p1 = f32[8,6]{1,0} parameter(1)
  %cc = (f32[4,6]{1,0}, s8[4194304]{0}) custom-call(f32[4,8]{1,0} %p0, f32[8,6]{1,0} %p1), custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0","gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
  ROOT %r = f32[4,6]{1,0} get-tuple-element(%cc), index=0
}
"""
    # 2*4*6*8 = 384
    assert hlo.count_hlo_text(text).matmul_flops == 384
    with pytest.raises(ValueError, match="looks like a matmul"):
        hlo.count_hlo_text(text.replace('"lhs_contracting_dimensions":["1"],', ""))


def test_import_maxflops_does_not_import_jax():
    code = "import sys, maxflops; assert 'jax' not in sys.modules, 'import maxflops pulled in jax'"
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
