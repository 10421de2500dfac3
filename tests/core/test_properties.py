"""Property-based tests (hypothesis) over random configs of every mixer, knob and convention.

The configs come from ``tests/strategies.py`` (every key of ``SCHEMA`` is drawn, see ``test_strategy_covers_schema``)
and from the shipped models with random overrides. The invariants:

1. structure: total == sum(components) == sum of layer rows == learnable_weight + attention, for model and
   hardware FLOPs; 'mtp' == the MTP rows; by_kind and to_dict agree;
2. every component and the total non-decreasing in max_target_length (model and hardware, train and prefill, every
   convention), but MaxText's DeepSeek-V4 top-k formula (compressed_pairs='maxtext' on indexed 'S' layers), whose
   core attention (and then the total) can fall as the length grows; in decode_kv_length for decode, but chunked
   layers (a chunk restarts) and, for hardware, a tiled kernel on a window (its key tiles can shrink by one);
3. decode at kv length T == prefill(T+1) - prefill(T), per component, once the pair-rule knobs are exact (other
   reporting knobs free); hardware too with the implementations that price a token the same in both;
4. packed == separate: segment_lengths [a, b, ...] == the sum of counting each document as one sequence, exactly
   for the exact convention (vision is per row and left out), within rounding for a peer convention but Megatron's
   DSA rule (one mean length per batch); hardware too unless moe_impl='capacity' or packed_kernel='row'; decode
   likewise (and decode_traffic's cache reads);
5. hardware >= model for the exact convention unless a documented lowering knob is set (capacity_factor < 1,
   mla_absorbed, outer_product_grads / weighted_sum_impl 'elementwise', indexer_skip_short) or, undocumented,
   packed_kernel='row' on chunked layers; hardware == model with the ideal implementations; each lowering knob
   only lowers; hardware and decode_traffic ignore the convention and its knobs;
6. every figure is a Python int, and non-negative (but core_attention under window_pairs='unclamped' for a
   sequence shorter than half the window);
7. every convention counts every train config (and re-derives its knobs when switched by override); a bad value
   of any key (wrong type, below its minimum, outside its choices, a broken relation between keys, bad
   segment_lengths) is a ValueError naming the key, from model_config, count() overrides and decode_traffic.
Also: gradient accumulation scales a step, train == 3x prefill (the indexer and a frozen vision encoder by their
rules), decode_traffic's figures and its mHC weights.

The bugs this suite found are fixed; each keeps a minimal regression test next to the property it broke (search
"fixed (was a strict xfail)").

Budget: ``max_examples`` per test is ``MAXFLOPS_HYPOTHESIS_EXAMPLES`` (default 80; a few tests use a
fraction), derandomized, no example database: the file runs in well under a minute on one core. Raise it for a
long local run, e.g. ``MAXFLOPS_HYPOTHESIS_EXAMPLES=400 python -m pytest -q tests/core/test_properties.py``.
"""

from __future__ import annotations

import functools
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import maxflops
from maxflops.conventions import convention_defined
from maxflops.breakdown import ATTENTION_COMPONENTS
from maxflops.conventions import CONVENTIONS
from maxflops.fields import Ints
from maxflops.schema import SCHEMA

from strategies import (COVERED, LOWERING, NOT_DRAWN, PAIR_RULE_KNOBS, REPORTING_KNOBS,  # noqa: E402
                        packable, without_patch_stream,
                        config_kwargs, segment_lengths)

# random configs draw every schema key, the inert ones included: each draw's inert keys are its own (the inert
# rule is held by tests/core/test_input_paths.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")

EXAMPLES = int(os.environ.get("MAXFLOPS_HYPOTHESIS_EXAMPLES", "80"))


def budget(share=1.0):
    return settings(max_examples=max(1, int(EXAMPLES * share)), deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=False)


VISION = ("vision_encoder", "vision_attention", "vision_projector")


def build(kw):
    return maxflops.model_config(**kw)


def strip_knobs(kw):
    """The same config with no reporting knob set explicitly and no quirks."""
    return {k: v for k, v in kw.items() if k not in REPORTING_KNOBS and k != "convention_quirks"}


def sub(a, b):
    return {k: a.get(k, 0) - b.get(k, 0) for k in a.keys() | b.keys()}


def nonzero(d, drop=()):
    return {k: v for k, v in d.items() if v and k not in drop}


def add(*ds):
    out = Counter()
    for d in ds:
        out.update(dict(d))
    return dict(out)


@functools.lru_cache(maxsize=None)
def shipped_config(name):
    return maxflops.load_config(name)


@st.composite
def shipped(draw):
    """A shipped model with random overrides (short lengths, any mode, convention and hardware knobs)."""
    name = draw(st.sampled_from(maxflops.available_models()))
    mode = draw(st.sampled_from(SCHEMA["mode"].choices))
    ov = {"mode": mode, "max_target_length": draw(st.integers(1, 64)), "decode_kv_length": draw(st.integers(0, 64)),
          "per_device_batch_size": draw(st.integers(1, 3)),
          "gradient_accumulation_steps": draw(st.integers(1, 3))}
    if mode == "train":
        ov["convention"] = draw(st.sampled_from(tuple(CONVENTIONS)))
        if not convention_defined(dict(shipped_config(name)), ov["convention"]):
            ov["convention"] = "exact"  # refused there (test_megatron_bridge.py, test_kda.py)
    for key in ("attention_impl", "dsa_impl", "moe_impl", "remat_policy", "gdn_impl", "moe_dispatch",
                "gdn_conv_impl", "indexer_impl"):
        if draw(st.booleans()):
            ov[key] = draw(st.sampled_from(SCHEMA[key].choices))
    if draw(st.booleans()):
        ov.update(attention_block_q=draw(st.integers(1, 16)), attention_block_kv=draw(st.integers(1, 16)))
    return name, ov


# --- invariants 1 and 6: structure, ints ----------------------------------------------------------------------

def check_structure(b):
    """Invariants 1 and 6 of one Breakdown."""
    comps, hw = dict(b.components), dict(b.hardware_components)
    rows = b.layers
    figures = [b.total, b.learnable_weight, b.attention, b.tokens, b.hardware_flops, *comps.values(), *hw.values()]
    for r in rows:
        figures += [*r.components.values(), *r.hardware_components.values(), r.total, r.hardware_flops]
    assert all(type(x) is int for x in figures), [(type(x), x) for x in figures if type(x) is not int]
    assert b.total == sum(comps.values()) == b.learnable_weight + b.attention
    mtp = [r for r in rows if r.group == "mtp"]  # 'mtp' lumps their attention and weights
    assert b.attention == sum(v for k, v in comps.items() if k in ATTENTION_COMPONENTS) + sum(r.attention for r in mtp)
    assert b.total == sum(r.total for r in rows)
    assert b.attention == sum(r.attention for r in rows)
    assert b.learnable_weight == sum(r.learnable_weight for r in rows)
    assert b.hardware_flops == sum(hw.values()) == sum(r.hardware_flops for r in rows)
    assert all(r.total == r.learnable_weight + r.attention for r in rows)
    # 'mtp' lumps the MTP rows; every other component is the sum of the decoder and head rows.
    assert comps.get("mtp", 0) == sum(r.total for r in mtp)
    assert hw.get("mtp", 0) == sum(r.hardware_flops for r in mtp)
    rest = add(*(r.components for r in rows if r.group != "mtp"))
    assert nonzero(rest) == nonzero(comps, drop=("mtp",))
    hw_rest = add(*(r.hardware_components for r in rows if r.group != "mtp"))
    assert nonzero(hw_rest) == nonzero(hw, drop=("mtp",))
    assert sum(b.by_kind().values()) == b.total and sum(b.by_kind(hardware=True).values()) == b.hardware_flops
    assert [r.name for r in rows][-1] == "head" and sum(r.group == "head" for r in rows) == 1
    d = b.to_dict()
    assert (d["total"], d["hardware_flops"], len(d["layers"])) == (b.total, b.hardware_flops, len(rows))


def check_signs(b, c, lengths=None):
    """Invariant 6: every component >= 0, except core_attention under MaxText's unclamped window (L*W - W^2/2 for
    a sequence shorter than W/2)."""
    unclamped = c["window_pairs"] == "unclamped" and c["mode"] != "decode"
    if unclamped:
        shortest = min(lengths) if lengths else c["max_target_length"]
        unclamped = 2 * shortest < c["sliding_window_size"]
    for where in (b.components, b.hardware_components, *(r.components for r in b.layers),
                  *(r.hardware_components for r in b.layers)):
        for k, v in where.items():
            if not (unclamped and k in ("core_attention", "mtp")):
                assert v >= 0, (k, v)
    assert b.hardware_flops >= 0


def layer_count(cfg):
    """Decoder layers (a looped block's layers once per pass: rule 'first-last*passes[/g]'), MTP modules' layers (a
    hybrid's module runs len(mtp_layer_pattern) layers; training only), and the head."""
    per_module = len(cfg.mtp_layer_pattern) if cfg.mtp_ffn_layer_pattern else 1
    repeats = 0
    for rule in cfg.layer_loops:
        span, passes = rule.split("*")
        passes = passes.partition("/")[0]  # ('/g': the passes with a gradient, a subset)
        first, _, last = span.partition("-")
        repeats += (int(last or first) - int(first) + 1) * (int(passes) - 1)
    return cfg.num_decoder_layers + repeats + (cfg.mtp_num_layers * per_module if cfg.mode == "train" else 0) + 1


@budget()
@given(kw=config_kwargs())
def test_structure_and_ints_random_configs(kw):
    cfg = build(kw)
    b = maxflops.count(cfg)
    check_structure(b)
    check_signs(b, cfg)
    assert len(b.layers) == layer_count(cfg)
    assert b.convention == cfg.convention and b.mode == cfg.mode and b.model_name == cfg.model_name
    assert b.not_priced == tuple(cfg.not_priced)


@budget(0.5)
@given(kw=config_kwargs(), docs=segment_lengths())
def test_structure_and_ints_packed(kw, docs):
    lengths, T, rows = docs
    if kw["mode"] == "decode":  # segment_lengths are the sequences' cache lengths
        kw = {**kw, "per_device_batch_size": len(lengths)}
    else:
        kw = {**kw, "max_target_length": T, "per_device_batch_size": rows}
    cfg = build(packable(kw))
    b = maxflops.count(cfg, segment_lengths=lengths)
    check_structure(b)
    check_signs(b, cfg, lengths)
    if cfg.mode != "decode":
        assert b.tokens == sum(lengths) * (cfg.gradient_accumulation_steps if cfg.mode == "train" else 1)


@budget()
@given(model=shipped())
def test_structure_and_ints_shipped_models(model):
    name, ov = model
    cfg = shipped_config(name)
    b = maxflops.count(cfg, **ov)
    check_structure(b)
    check_signs(b, maxflops.account.resolve_call(cfg, ov)[0])
    traffic = maxflops.decode_traffic(cfg, **{k: v for k, v in ov.items() if k != "mode"})  # a decode step
    assert all(type(v) is int and v >= 0 for v in traffic.components.values())


def test_strategy_covers_schema():
    """Every key of SCHEMA is drawn by config_kwargs, or listed with the reason it is not."""
    assert COVERED | set(NOT_DRAWN) == set(SCHEMA), sorted(set(SCHEMA) - COVERED - set(NOT_DRAWN))
    assert COVERED <= set(SCHEMA)
    bundle_keys = {k for bundle in CONVENTIONS.values() for k in bundle}
    assert bundle_keys <= set(REPORTING_KNOBS)


# --- invariant 2: monotone in the length ----------------------------------------------------------------------

def _nondecreasing(xs):
    return all(a <= b for a, b in zip(xs, xs[1:]))


def maxtext_topk_blocks(cfg):
    """The one place model FLOPs may fall as the length grows: MaxText's DeepSeek-V4 top-k formula
    (compressed_pairs='maxtext' on an 'S' layer with the indexer), L^2/m * (k/N - (k/N)^2/2) with N = L // m,
    k = min(K, N), drops each time N steps past K (see test_maxtext_compressed_topk_is_not_monotone)."""
    letters = cfg["attention_layer_pattern"] + cfg["mtp_layer_pattern"]
    return cfg["compressed_pairs"] == "maxtext" and cfg["use_sparse_indexer"] and "S" in letters


def check_monotone(bs, cfg):
    """Every component (model and hardware) and both totals are non-decreasing along ``bs`` (sorted lengths), but
    core_attention (and 'mtp', which holds the MTP rows') under MaxText's top-k formula."""
    exempt = ("core_attention", "mtp") if maxtext_topk_blocks(cfg) else ()
    for key in set().union(*(b.components for b in bs)) - set(exempt):
        assert _nondecreasing([b.components.get(key, 0) for b in bs]), key
    for key in set().union(*(b.hardware_components for b in bs)):
        assert _nondecreasing([b.hardware_components.get(key, 0) for b in bs]), ("hardware", key)
    if not exempt:
        assert _nondecreasing([b.total for b in bs])
    assert _nondecreasing([b.hardware_flops for b in bs])


@budget()
@given(kw=config_kwargs(mode="train", integer_batch=True) | config_kwargs(mode="prefill", integer_batch=True),
       lengths=st.lists(st.integers(1, 80), min_size=2, max_size=5, unique=True))
def test_monotone_in_max_target_length(kw, lengths):
    cfg = build(kw)
    bs = [maxflops.count(cfg, max_target_length=T) for T in sorted(lengths)]
    check_monotone(bs, cfg)


@budget()
@given(model=shipped(), lengths=st.lists(st.integers(1, 300), min_size=2, max_size=4, unique=True))
def test_monotone_in_max_target_length_shipped(model, lengths):
    name, ov = model
    assume(ov["mode"] != "decode")
    cfg = shipped_config(name)
    bs = [maxflops.count(cfg, **{**ov, "max_target_length": T}) for T in sorted(lengths)]
    check_monotone(bs, maxflops.account.resolve_call(cfg, ov)[0])


@budget(0.5)
@given(kw=config_kwargs(mode="train", attention_type="compressed", integer_batch=True),
       T=st.integers(1, 120))
def test_monotone_consecutive_lengths_compressed(kw, T):
    """Consecutive lengths, where a compressed block completes (the likeliest place for a step down)."""
    cfg = build(kw)
    check_monotone([maxflops.count(cfg, max_target_length=L) for L in (T, T + 1, T + 2)], cfg)


def test_maxtext_compressed_topk_is_not_monotone():
    """The exception above, pinned: MaxText's formula gives 8 top-k block pairs at L=8 and 7.5 at L=9 (m=3, K=1),
    and with narrow weights the whole count falls (a faithful reproduction of MaxText, not a maxflops bug)."""
    from maxflops.families.compressed import compressed_topk_maxtext
    from maxflops.sequences import Uniform
    assert compressed_topk_maxtext(Uniform(8, 1), 3, 1) == 8
    assert compressed_topk_maxtext(Uniform(9, 1), 3, 1) == 7.5
    cfg = maxflops.model_config(attention_type="compressed", attention_layer_pattern="S", use_sparse_indexer=True,
                                sliding_window_size=1, csa_compress_ratio=8, index_topk=4, emb_dim=2, head_dim=60,
                                num_query_heads=6, num_kv_heads=1, mlp_dim=2, vocab_size=61, index_n_heads=1,
                                index_head_dim=2, num_decoder_layers=1, convention="maxtext")
    assert maxflops.count(cfg, max_target_length=48).total < maxflops.count(cfg, max_target_length=47).total
    exact = maxflops.count(cfg, max_target_length=48, convention="exact").total
    assert exact >= maxflops.count(cfg, max_target_length=47, convention="exact").total


@budget()
@given(kw=config_kwargs(mode="decode"), kvs=st.lists(st.integers(0, 80), min_size=2, max_size=5, unique=True))
def test_decode_monotone_in_kv_length(kw, kvs):
    """Decode grows with the cache, except on chunked layers (a new chunk restarts: kv % C + 1 keys) and MiniMax
    sparse layers (past K blocks a new token attends its own block up to itself and K - 1 whole blocks: a new block
    restarts the count) and QSA layers (past K complete blocks, K whole blocks and the tail, which a completed
    block restarts); hardware
    also except a tiled kernel on a window (attention_impl='blocked' on 'L', 'S', 'H' layers: the window's key
    range, rounded out to key tiles, can shrink by a tile as it slides)."""
    cfg = build(kw)
    bs = [maxflops.count(cfg, decode_kv_length=kv) for kv in sorted(kvs)]
    used = cfg.attention_layer_pattern[:cfg.num_decoder_layers] + cfg.parallel_layer_pattern  # (and beside)
    if "C" in used or "B" in used or "Q" in used:
        return
    assert _nondecreasing([b.total for b in bs])
    if not (cfg.attention_impl == "blocked" and any(ch in used for ch in "LSH")):
        assert _nondecreasing([b.hardware_flops for b in bs])
    kv_read = [maxflops.decode_traffic(cfg, decode_kv_length=kv).components["kv_read"] for kv in sorted(kvs)]
    assert _nondecreasing(kv_read)


# --- invariant 3: decode == the difference of two prefills --------------------------------------------------

def decode_exact_hardware(c):
    """The implementations under which a program prices the new token as the last query of a longer prefill."""
    return (c["attention_impl"] == "ideal" and c["dsa_impl"] == "ideal" and c["moe_impl"] != "capacity"
            and c["gdn_impl"] == "recurrent" and c["gdn_conv_impl"] != "padded" and c["indexer_impl"] == "attention"
            and not c["indexer_skip_short"] and c["mamba_impl"] == "recurrent" and c["mamba_conv_impl"] != "padded"
            and c["kda_impl"] == "recurrent" and c["kda_conv_impl"] != "padded" and c["lightning_impl"] == "recurrent"
            and c["mlstm_impl"] == "recurrent" and c["aux_conv_impl"] != "padded"
            and c["gdp_impl"] == "recurrent" and c["gdp_conv_impl"] != "padded"
            and c["pipeline_stages"] == 1)  # (the bubble, a fraction of each row, is rounded per row)


@budget()
@given(kw=config_kwargs(mode="prefill", causal=True, integer_batch=True), T=st.integers(0, 70), data=st.data())
def test_decode_is_difference_of_prefills(kw, T, data):
    """decode(kv=T) == prefill(T+1) - prefill(T) per component, prefill(0) being nothing, whatever other reporting
    knobs say, once the pair-rule knobs are exact (decode counts the new token's exact keys). Hardware too, with
    the ideal attention kernels, any MoE but 'capacity' (its dispatch group is the batch in decode), the recurrent
    gated delta net and Mamba, convs that read no padding, the indexer over the attended pairs and never skipped."""
    kw = without_patch_stream({k: v for k, v in kw.items() if k not in PAIR_RULE_KNOBS})
    # a compressor that forms no block in a prefill of T + 1 tokens is dead there, and a compiled program drops it
    # ('eliminated'); a decode step still feeds it the new token (later tokens close its block): the whole-program rule
    # is held by tests/families/test_compressed.py, here the compressor runs in both
    kw["dead_compressor"] = "forward"
    if kw.get("zero_experts"):  # an expected routing share rounds per step: only the whole shares add up
        kw["zero_expert_share"] = data.draw(st.sampled_from([0.0, 1.0]), label="whole zero-expert share")
    if data.draw(st.booleans(), label="decode-friendly hardware"):
        kw.update(attention_impl="ideal", dsa_impl="ideal", gdn_impl="recurrent", indexer_impl="attention",
                  indexer_skip_short=False, moe_impl=data.draw(st.sampled_from(["ideal", "dense", "ragged_dense"])),
                  gdn_conv_impl=data.draw(st.sampled_from(["valid", "pre_padded"])), mamba_impl="recurrent",
                  mamba_conv_impl=data.draw(st.sampled_from(["valid", "pre_padded"])), kda_impl="recurrent",
                  kda_conv_impl=data.draw(st.sampled_from(["valid", "pre_padded"])), lightning_impl="recurrent",
                  mlstm_impl="recurrent", aux_conv_impl="valid",
                  gdp_impl="recurrent", gdp_conv_impl=data.draw(st.sampled_from(["valid", "pre_padded"])))
    if any(q.split(":")[1].split("=")[0] in PAIR_RULE_KNOBS for q in kw.get("convention_quirks", ())):
        del kw["convention_quirks"]
    if "E" in kw["attention_layer_pattern"] + kw.get("mtp_layer_pattern", ""):
        # LSH: a prefill of at most one chunk runs unhashed causal attention, a longer one re-attends every token
        # through its hashed chunks, where a decode step attends the new token's alone: the lengths on one side of
        # the chunk (and a hash width that does not follow the length: transformers fixes an unset one once)
        C = kw["lsh_chunk_length"]
        T = min(T, C - 1) if C > 1 else max(T, 2)
        kw["lsh_hash_width"] = kw.get("lsh_hash_width") or 2
    cfg = build(kw)
    if T == 0 and "X" in cfg.attention_layer_pattern[:cfg.num_decoder_layers]:
        T = 1  # cross-attention: a prefill projects the image tokens' keys and values once, before its first token
        # (as the vision encoder runs), and a decode step reads them cached; prefill(1) - prefill(0) is not one step
    d = maxflops.count(cfg, mode="decode", decode_kv_length=T)
    p1 = maxflops.count(cfg, max_target_length=T + 1)
    p0 = maxflops.count(cfg, max_target_length=T) if T else None
    diff = sub(p1.components, p0.components if p0 else {k: p1.components[k] for k in VISION if k in p1.components})
    assert nonzero(dict(d.components)) == nonzero(diff)
    if decode_exact_hardware(cfg):
        hw_diff = sub(p1.hardware_components, p0.hardware_components if p0 else
                      {k: p1.hardware_components[k] for k in VISION if k in p1.hardware_components})
        assert nonzero(dict(d.hardware_components)) == nonzero(hw_diff)


# --- invariant 4: packed documents == separate sequences ------------------------------------------------------

@budget()
@given(kw=config_kwargs(knobs=False, convention="exact") | config_kwargs(mode="train", knobs=False),
       docs=segment_lengths())
def test_packed_equals_separate(kw, docs):
    """Every mask restarts at a document: the packed count is the sum of the documents counted alone (one
    sequence each). Exact per component for the exact convention; a peer convention's approximations (Fractions,
    rounded per layer kind) within rounding, except Megatron's DSA rule, which scales by the batch's mean
    length. Vision is per row, not per document. Hardware too, but with moe_impl='capacity' (dispatch groups are
    rows) and packed_kernel='row' (the program runs whole rows)."""
    lengths, T, rows = docs
    assume(kw["mode"] != "decode")
    if kw.get("zero_experts"):  # an expected routing share rounds per step: only the whole shares add up
        kw = {**kw, "zero_expert_share": 1.0 if kw["zero_expert_share"] == 1.0 else 0.0}
    cfg = build(packable({**kw, "max_target_length": T, "per_device_batch_size": rows}))
    packed = maxflops.count(cfg, segment_lengths=lengths)
    alone = [maxflops.count(cfg, max_target_length=L, per_device_batch_size=1) for L in lengths]
    total = add(*(b.components for b in alone))
    if cfg.convention == "exact":
        assert nonzero(dict(packed.components), VISION) == nonzero(total, VISION)
    elif cfg.packed_tokens == "padded":  # Megatron-Bridge prices every row slot, padding included: no less
        no_vision = lambda d: sum(v for k, v in d.items() if k not in VISION)
        assert no_vision(packed.components) >= no_vision(total) - (len(packed.layers) + 1) * (len(lengths) + 1)
    elif cfg.dsa_pairs not in ("megatron", "megatron_floor") or not cfg.use_sparse_indexer:
        slack = (len(packed.layers) + 1) * (len(lengths) + 1)
        no_vision = lambda d: sum(v for k, v in d.items() if k not in VISION)
        assert abs(no_vision(packed.components) - no_vision(total)) <= slack
    if cfg.moe_impl != "capacity" and cfg.packed_kernel == "varlen":
        hw = add(*(unbubbled(b.hardware_components) for b in alone))
        got = unbubbled(packed.hardware_components)
        revived = any(dead_compressors(cfg, [L]) != dead_compressors(cfg, lengths) for L in lengths)
        if revived:
            # a document shorter than a ratio alone forms no block and its compressor is dead (dead_compressor);
            # packed beside a longer one, the program's compressor runs on its tokens too: only more (and so the
            # pipeline's bubble, a share of each row's work)
            # (an MTP module's compressor is inside its 'mtp' figure); a CSA layer's indexer likewise: nothing reads it
            # where no block forms
            revivable = ("compressor", "mtp", "indexer_proj", "indexer_proj_attn", "indexer_score", "indexer_kl")
            for k in revivable:
                assert got.get(k, 0) >= hw.get(k, 0), k
            got, hw = ({k: v for k, v in d.items() if k not in revivable} for d in (got, hw))
        assert nonzero(got, VISION) == nonzero(hw, VISION)
        bubble = packed.hardware_components.get("pipeline_bubble", 0) - sum(
            b.hardware_components.get("pipeline_bubble", 0) for b in alone)
        bound = len(lengths) * len(packed.layers)  # rounded to the FLOP once per pipelined row
        assert -bound <= bubble and (revived or bubble <= bound)


@budget(0.5)
@given(kw=config_kwargs(mode="decode"), kvs=st.lists(st.integers(0, 60), min_size=1, max_size=4))
def test_decode_packed_equals_separate(kw, kvs):
    """Decode with segment_lengths (one cache length per sequence) == the sequences decoded one by one."""
    cfg = build({**kw, "per_device_batch_size": len(kvs)})
    packed = maxflops.count(cfg, segment_lengths=kvs)
    alone = [maxflops.count(cfg, decode_kv_length=kv, per_device_batch_size=1) for kv in kvs]
    assert nonzero(dict(packed.components)) == nonzero(add(*(b.components for b in alone)))
    if cfg.moe_impl != "capacity":
        assert nonzero(unbubbled(packed.hardware_components)) == \
            nonzero(add(*(unbubbled(b.hardware_components) for b in alone)))
        bubble = packed.hardware_components.get("pipeline_bubble", 0) - sum(
            b.hardware_components.get("pipeline_bubble", 0) for b in alone)
        assert abs(bubble) <= len(kvs) * len(packed.layers)  # rounded to the FLOP once per pipelined row
    uniform = maxflops.count(cfg, decode_kv_length=kvs[0])
    assert maxflops.count(cfg, segment_lengths=[kvs[0]] * len(kvs)).components == uniform.components
    # traffic: the cache reads add up per sequence
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs)
    t_alone = [maxflops.decode_traffic(cfg, decode_kv_length=kv, per_device_batch_size=1) for kv in kvs]
    for key in ("kv_read", "index_read", "state"):
        assert t.components[key] == sum(x.components[key] for x in t_alone)


def unbubbled(components) -> dict:
    """Hardware components but the pipeline's bubble (a fraction of each pipelined row's work, rounded per row)."""
    return {k: v for k, v in components.items() if k != "pipeline_bubble"}


# --- invariant 5: hardware vs model -----------------------------------------------------------------------------

def dead_compressors(c, lengths=None) -> set:
    """The compressed mixers ('csa', 'hca') whose ratio no sequence of the step reaches (``lengths``: its packed
    documents): no block forms, nothing reads their compressor (``dead_compressor``)."""
    if c["attention_type"] != "compressed" or c["mode"] == "decode":
        return set()
    longest = max(lengths) if lengths else c["max_target_length"]
    return {mixer for mixer, key in (("csa", "csa_compress_ratio"), ("hca", "hca_compress_ratio"))
            if c[key] > longest}


def lowering_active(c, lengths=None):
    """The documented lowering knobs that are on in this config (see strategies.LOWERING)."""
    on = ["dead_compressor"] if dead_compressors(c, lengths) else []
    if c["moe_impl"] == "capacity" and c["capacity_factor"] < 1:
        on.append("capacity_factor")
    if c["mla_absorbed"] and c["attention_type"] == "mla":
        on.append("mla_absorbed")
    if c["outer_product_grads"] == "elementwise" and c["mode"] == "train":
        on.append("outer_product_grads")
    if c["weighted_sum_impl"] == "elementwise":
        on.append("weighted_sum_impl")
    if c["indexer_skip_short"] and c["use_sparse_indexer"]:
        on.append("indexer_skip_short")
    if c["dynamic_conv_impl"] == "elementwise" and c["kv_conv_dynamic_layers"] and c["kv_conv_kernel"]:
        on.append("dynamic_conv_impl")  # (Inkling 2's per-token taps: a multiply and a sum, no matmul)
    assert set(on) <= set(LOWERING)
    return on


@budget()
@given(kw=config_kwargs(convention="exact", knobs=False), docs=st.none() | segment_lengths())
def test_hardware_at_least_model(kw, docs):
    """Exact convention: hardware >= model unless a documented lowering knob is on."""
    cfg = build(kw)
    if docs is not None and cfg.mode != "decode":
        lengths, T, rows = docs
        cfg = build(packable({**kw, "max_target_length": T, "per_device_batch_size": rows}))
        b = maxflops.count(cfg, segment_lengths=lengths)
    else:
        b = maxflops.count(cfg)
    lengths = docs[0] if docs is not None and cfg.mode != "decode" else None
    note(lowering_active(cfg, lengths))
    row_chunks = docs is not None and cfg.packed_kernel == "row" and any(r.mixer == "chunk" for r in b.layers)
    if not lowering_active(cfg, lengths) and not row_chunks:  # row_chunks: see test_row_kernel_on_chunks_can_fall_below_model
        assert b.hardware_flops >= b.total


def test_row_kernel_on_chunks_can_fall_below_model():
    """Not in README's list: packed_kernel='row' prices whole rows with the row's own chunks; documents the
    validation accepts (total <= rows x length) but that no packing fits into whole rows ([2, 2, 2] in two rows of
    3) have more in-chunk pairs than the rows, so hardware < model on chunked layers."""
    cfg = maxflops.model_config(attention_layer_pattern="C", chunk_attn_window_size=2, num_decoder_layers=1, emb_dim=2,
                                head_dim=60, num_query_heads=4, num_kv_heads=4, mlp_dim=2, vocab_size=61,
                                max_target_length=3, per_device_batch_size=2, packed_kernel="row", mode="prefill")
    b = maxflops.count(cfg, segment_lengths=[2, 2, 2])
    assert b.hardware_components["core_attention"] < b.components["core_attention"]
    assert b.hardware_flops < b.total


@budget()
@given(kw=config_kwargs(convention="exact", knobs=False, impl="ideal"), docs=st.none() | segment_lengths())
def test_hardware_equals_model_with_ideal_implementations(kw, docs):
    cfg = build(kw)
    if docs is not None and cfg.mode != "decode":
        lengths, T, rows = docs
        cfg = build(packable({**kw, "max_target_length": T, "per_device_batch_size": rows}))
        b = maxflops.count(cfg, segment_lengths=lengths)
    else:
        b = maxflops.count(cfg)
    lengths = docs[0] if docs is not None and cfg.mode != "decode" else None
    dead = dead_compressors(cfg, lengths)
    if not dead:
        assert dict(b.hardware_components) == dict(b.components)
    for row in b.layers:
        model = dict(row.components)
        if row.mixer in dead and cfg.mode == "train":  # the dead compressor's forward alone (ideal: 'forward')
            model["compressor"] //= 3
        assert dict(row.hardware_components) == model


@budget()
@given(kw=config_kwargs(convention="exact", knobs=False, lowering=False))
def test_lowering_knobs_only_lower(kw):
    """Each documented lowering knob, switched on alone, never raises hardware FLOPs (capacity: a smaller factor
    never raises them)."""
    cfg = build(kw)
    base = maxflops.count(cfg).hardware_flops
    for key, value in (("indexer_skip_short", True), ("weighted_sum_impl", "elementwise"),
                       ("outer_product_grads", "elementwise"), ("capacity_factor", 0.5),
                       ("dead_compressor", "eliminated")):
        assert maxflops.count(cfg, **{key: value}).hardware_flops <= base, key
    assert maxflops.count(cfg, capacity_factor=4.0).hardware_flops >= base


# Reporting knobs that hardware FLOPs read when set explicitly: none any more (config.REPORTING_KNOBS).
KNOWN_HARDWARE_LEAKS = ()


@budget()
@given(kw=config_kwargs(mode="train", knobs=True, causal=True, integer_batch=True))
def test_hardware_ignores_convention_and_reporting_knobs(kw):
    """Hardware FLOPs (and decode_traffic) are the exact view's: the same under every convention and every
    reporting knob (a model's convention quirks are undone, its 'exact:' ones kept)."""
    kw = {k: v for k, v in kw.items() if k not in KNOWN_HARDWARE_LEAKS}
    quirks = kw.get("convention_quirks", ())
    if any(q.split(":")[1].split("=")[0] in KNOWN_HARDWARE_LEAKS for q in quirks):
        del kw["convention_quirks"]
    exact_quirks = tuple(q for q in kw.get("convention_quirks", ()) if q.startswith("exact:"))
    ref = build({**strip_knobs(kw), "convention": "exact", "convention_quirks": exact_quirks})
    cfg = build(kw)
    assert dict(maxflops.count(cfg).hardware_components) == dict(maxflops.count(ref).hardware_components)
    try:
        want = maxflops.decode_traffic(ref).components
    except ValueError as e:  # a decode step not modelled (a byte model's patch layers): refused under both
        with pytest.raises(ValueError, match="mode"):
            maxflops.decode_traffic(cfg)
        assert "decode" in str(e)
        return
    assert maxflops.decode_traffic(cfg).components == want


# fixed (was a strict xfail): bug: an explicit mhc_flops=False (a reporting knob) removes mHC from hardware FLOPs and decode_traffic: hardware_view resets only bundle keys and active quirks
def test_hardware_ignores_explicit_mhc_flops():
    base = dict(mhc_expansion_rate=2, emb_dim=8, num_decoder_layers=1, max_target_length=4, vocab_size=64,
                mlp_dim=16)
    assert (maxflops.count(maxflops.model_config(**base, mhc_flops=False)).hardware_flops
            == maxflops.count(maxflops.model_config(**base)).hardware_flops)
    assert (maxflops.decode_traffic(maxflops.model_config(**base, mhc_flops=False)).total  # decode_traffic too
            == maxflops.decode_traffic(maxflops.model_config(**base)).total)


# fixed (was a strict xfail): bug (minor): an explicit indexer_proj_split='attention' renames a hardware component (indexer_proj -> indexer_proj_attn); totals agree
def test_hardware_components_ignore_explicit_indexer_proj_split():
    base = dict(attention_type="compressed", attention_layer_pattern="S", use_sparse_indexer=True,
                sliding_window_size=2, emb_dim=8, num_decoder_layers=1, max_target_length=4, index_topk=1,
                vocab_size=64, mlp_dim=16)
    assert (dict(maxflops.count(maxflops.model_config(**base, indexer_proj_split="attention")).hardware_components)
            == dict(maxflops.count(maxflops.model_config(**base)).hardware_components))


# --- gradient accumulation, train vs prefill -------------------------------------------------------------------

@budget()
@given(kw=config_kwargs(mode="train"), g=st.integers(2, 4))
def test_gradient_accumulation_scales_the_step(kw, g):
    """g micro-batches cost g times one, exactly for the exact convention with a whole batch; within rounding
    (a convention's Fractions are rounded once per layer kind) otherwise."""
    if kw.get("zero_experts"):  # an expected routing share rounds per step (and layer): only whole shares scale
        kw["zero_expert_share"] = float(kw["zero_expert_share"] > 0.5)
    cfg = build({**kw, "gradient_accumulation_steps": 1})
    one, many = maxflops.count(cfg), maxflops.count(cfg, gradient_accumulation_steps=g)
    assert many.tokens == g * one.tokens or cfg.per_device_batch_size != int(cfg.per_device_batch_size)
    whole = cfg.per_device_batch_size == int(cfg.per_device_batch_size)
    if whole and cfg.convention == "exact" and not any(k in kw for k in REPORTING_KNOBS) \
            and "convention_quirks" not in kw:
        assert dict(many.components) == {k: g * v for k, v in one.components.items()}
    else:
        assert abs(many.total - g * one.total) <= g * len(one.layers) * (len(one.components) + 1)
    if whole:
        assert unbubbled(many.hardware_components) == {k: g * v for k, v in unbubbled(one.hardware_components).items()}
        # the pipeline's bubble: a fraction of each pipelined row, rounded to the FLOP once per row
        bubble = many.hardware_components.get("pipeline_bubble", 0) - g * one.hardware_components.get("pipeline_bubble", 0)
        assert abs(bubble) <= g * len(one.layers)
    else:
        assert abs(many.hardware_flops - g * one.hardware_flops) <= g * len(one.layers) * (
            len(one.hardware_components) + 1)


@budget()
@given(kw=config_kwargs(mode="train", convention="exact", knobs=False, integer_batch=True))
def test_train_is_three_forwards(kw):
    """Exact convention, sparse stage: every component of a train step is 3 x g x its prefill, but the indexer
    (2x/3x with a KL loss, 1x without) and a frozen vision encoder (1x); MTP is train only."""
    assume(kw.get("indexer_stage", "sparse") == "sparse")
    # passes without a gradient run forward only (held by tests/core/test_layer_loops.py)
    assume(not any(int(r.split("/")[1]) < int(r.split("*")[1].split("/")[0]) for r in kw.get("layer_loops", ())
                   if "/" in r))
    if kw.get("zero_experts"):  # an expected routing share rounds per step (and layer): only whole shares scale
        kw["zero_expert_share"] = float(kw["zero_expert_share"] > 0.5)
    kw.pop("frozen_layers", None)  # frozen layers run forward only (held by tests/families/test_patch.py)
    cfg = build(kw)
    g = cfg.gradient_accumulation_steps
    train, fwd = maxflops.count(cfg), maxflops.count(cfg, mode="prefill")
    loss = cfg.indexer_loss_scaling_factor > 0
    factor = {"indexer_proj": 2 if loss else 1, "indexer_proj_attn": 2 if loss else 1,
              "indexer_score": 3 if loss else 1, "lsh_hash": 1}  # (LSH's buckets are integers: no gradient)
    if cfg.vision_frozen:
        factor.update(vision_encoder=1, vision_attention=1)
    expect = {k: v * g * factor.get(k, 3) for k, v in fwd.components.items()}
    got = dict(train.components)
    if loss and cfg.indexer_loss_pairs == "selected":  # the KL's backward over the selected pairs only: not a
        # multiple of the forward's scores (held by tests/core/test_account.py's sparse-loss test)
        expect.pop("indexer_score", None), got.pop("indexer_score", None)
    assert nonzero(got, ("mtp",)) == nonzero(expect)


# --- invariant 7: conventions, and bad values -------------------------------------------------------------------

@budget()
@given(kw=config_kwargs(mode="train"))
def test_every_convention_counts_every_train_config(kw):
    cfg = build(kw)
    plain = strip_knobs(kw)
    for conv in CONVENTIONS:
        if not convention_defined(dict(cfg), conv):  # refused (test_megatron_bridge.py, test_kda.py)
            continue
        b = maxflops.count(cfg, convention=conv)
        check_structure(b)
        assert b.convention == conv
        if plain == kw:  # no knob set by hand: switching the convention re-derives the whole bundle
            assert b.components == maxflops.count(build({**kw, "convention": conv})).components
            assert b.components == maxflops.count(maxflops.model_config(**{**kw, "convention": conv})).components


@budget(0.5)
@given(kw=config_kwargs(mode="prefill") | config_kwargs(mode="decode"))
def test_peer_conventions_refuse_prefill_and_decode(kw):
    """The peers' formulas are training FLOPs: outside train every convention but 'exact' is a ValueError naming
    'convention', by override and in the config."""
    cfg = build(kw)
    for conv in CONVENTIONS:
        if conv == "exact":
            check_structure(maxflops.count(cfg, convention=conv))
        else:
            raises_naming(lambda: maxflops.count(cfg, convention=conv), "convention")
            raises_naming(lambda: maxflops.model_config(**{**kw, "convention": conv}), "convention")


@budget(0.5)
@given(model=shipped())
def test_every_convention_counts_every_shipped_model(model):
    name, ov = model
    ov = {**ov, "mode": "train"}
    for conv in CONVENTIONS:
        if not convention_defined(dict(shipped_config(name)), conv):
            continue
        check_structure(maxflops.count(shipped_config(name), **{**ov, "convention": conv}))


def bad_values(key):
    """Values of the wrong type, below the minimum or outside the choices of one schema key."""
    field = SCHEMA[key]
    kind = field.kind
    out = [None, object()]
    if kind is bool:
        out += ["maybe", 2, 1.0, (True,)]
    elif kind is int:
        out += [1.5, "x", True, (1,), float("nan")]
        if field.minimum is not None:
            out.append(int(field.minimum) - 1)
    elif kind is float:
        out += ["x", True, float("nan"), float("inf"), (1.0,)]
        if field.minimum is not None:
            out.append(field.minimum - 0.5)
    elif kind is str:
        out += [3, ("a",), True]
        if field.choices:
            out += ["not-a-choice", field.choices[0].upper() + "!"]
        if key == "attention_layer_pattern":
            out += ["", "GQ", "g"]  # (Q: no family's letter)
    elif kind is Ints:
        out += [(-1,), "a,b", (1.5,), (True,), 3]
    elif kind is tuple:
        out += [(1, 2), ("",), 5, ("a", 3)]
    else:
        raise AssertionError(kind)
    return out


def raises_naming(fn, *keys):
    """fn() raises a ValueError whose message names one of ``keys`` (quoted, leading: 'segment_lengths[0] = ...', or
    with its value: "attention_type='mla'")."""
    import re

    with pytest.raises(ValueError) as e:
        fn()
    msg = str(e.value)
    assert any(f"'{k}'" in msg or msg.startswith(k) or re.search(rf"(?<!\w){k}=", msg) for k in keys), (keys, msg)


FUZZ_KEYS = sorted(k for k in SCHEMA if k not in NOT_DRAWN)


@budget(2)
@given(kw=config_kwargs(), key=st.sampled_from(FUZZ_KEYS), data=st.data())
def test_bad_value_of_any_key_is_a_value_error_naming_it(kw, key, data):
    """A bad value in model_config names the key; so does the same value as a count / decode_traffic override."""
    value = data.draw(st.sampled_from(bad_values(key)), label="value")
    raises_naming(lambda: maxflops.model_config(**{**kw, key: value}), key)
    cfg = build(kw)
    raises_naming(lambda: maxflops.count(cfg, **{key: value}), key)
    raises_naming(lambda: maxflops.decode_traffic(cfg, **{key: value}), key)


# fixed (was a strict xfail): bug: with a convention switch (count(..., convention=...) or decode_traffic of a peer-convention config) a convention_quirks override that is not a sequence raises TypeError: config.explicit iterates it before it is coerced
def test_quirks_of_wrong_type_with_a_convention_switch():
    cfg = maxflops.model_config(convention="maxtext")
    raises_naming(lambda: maxflops.count(cfg, convention="exact", convention_quirks=None), "convention_quirks")


# fixed (was a strict xfail): bug (minor): decode_traffic overwrites its 'mode' and 'convention' overrides, so a bad value of either is accepted silently
def test_decode_traffic_rejects_a_bad_convention_override():
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=8, vocab_size=64, mlp_dim=16)
    raises_naming(lambda: maxflops.decode_traffic(cfg, convention="bogus"), "convention")


# fixed (was a strict xfail): bug: a list value as a count()/sweep()/decode_traffic() override raises TypeError (unhashable type: 'list', the lru_cache key), valid or not
def test_list_override_of_a_tuple_key():
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=8, vocab_size=64, mlp_dim=16, max_target_length=4)
    assert maxflops.count(cfg, engram_layers=[0]).total == maxflops.count(cfg, engram_layers=(0,)).total
    raises_naming(lambda: maxflops.count(cfg, emb_dim=[8]), "emb_dim")


# Mutations that break one relation between keys, with the keys the error may name (the keys they set).
RELATIONS = [
    {"attention_type": "global", "num_query_heads": 4, "num_kv_heads": 3},  # (MLA never reads num_kv_heads)
    {"attention_type": "global", "num_query_heads": 4, "num_kv_heads": 1, "global_num_kv_heads": 3},
    {"num_experts": 2, "num_experts_per_tok": 3, "zero_experts": 0},
    {"mlp_activations": ("a", "b", "c")},
    {"mlp_activations": ()},
    {"attention_layer_pattern": "GJ"},  # (no family takes J)
    {"attention_type": "mla", "attention_layer_pattern": "S"},
    {"attention_type": "global", "attention_layer_pattern": "H"},
    {"mode": "train", "mtp_num_layers": 1, "mtp_layer_pattern": "GJ"},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "causal": False},
    {"attention_type": "compressed", "attention_layer_pattern": "C", "chunk_attn_window_size": 4, "causal": True},
    {"attention_type": "compressed", "attention_layer_pattern": "D", "causal": True},
    {"mhc_expansion_rate": 1, "mhc_hyper_head": True},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "global_head_dim": 8},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "share_kv_projections": True},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "num_decoder_layers": 3,
     "num_kv_shared_layers": 1},
    {"attention_type": "mla", "attention_layer_pattern": "G", "num_decoder_layers": 3, "num_kv_shared_layers": 1},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "o_groups": 2, "o_lora_rank": 0},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "o_groups": 0, "o_lora_rank": 3},
    {"attention_type": "mla", "attention_layer_pattern": "G", "o_groups": 2, "o_lora_rank": 3},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "num_query_heads": 1, "num_kv_heads": 1,
     "head_dim": 5, "o_groups": 2, "o_lora_rank": 3},
    {"num_decoder_layers": 2, "num_kv_shared_layers": 2},
    {"num_decoder_layers": 2, "engram_layers": (2,)},
    {"vision_encoder_stages": ("1:2",)},
    {"vision_projector": ("1:0:3",)},
    {"attention_layer_pattern": "L", "sliding_window_size": 0},
    {"attention_layer_pattern": "CG", "chunk_attn_window_size": 0},
    {"attention_layer_pattern": "D", "attention_output_dim": 8},
    {"attention_type": "global", "attention_layer_pattern": "G", "use_sparse_indexer": True},
    {"num_decoder_layers": 2, "remat_skip_layers": 3},
    {"num_decoder_layers": 3, "remat_skip_layers": 1, "remat_block_layers": 3},
    {"use_sparse_indexer": False, "indexer_stage": "warmup"},
    {"attention_type": "mla", "use_sparse_indexer": True, "causal": False},
    {"attention_type": "compressed", "attention_layer_pattern": "G", "attention_output_gate": True},
    {"attn_res_block_size": 2, "mhc_expansion_rate": 2},
    {"mode": "prefill", "convention": "maxtext"},
    {"mode": "decode", "convention": "megatron"},
    {"mode": "decode", "convention": "exact", "causal": False},
    {"per_device_batch_size": 0},
    {"mode": "decode", "convention": "exact", "causal": True, "per_device_batch_size": 1.5},
    {"mode": "train", "per_device_batch_size": 0.3, "max_target_length": 5},
    {"convention_quirks": ("maxtext:no_such_knob=1",)},
    {"convention_quirks": ("nonsense",)},
    {"convention_quirks": ("maxtext:convention=exact",)},
    {"mode": "train", "convention": "maxtext", "convention_quirks": ("maxtext:window_pairs=bogus",)},
    {"max_target_lenght": 8},
]
# A mutation that sets attention_type (num_decoder_layers) also resets what that type refuses (what depends on the
# layer count), so that it breaks only its own relation.
_COMPRESSED_OK = {"causal": True, "global_head_dim": 0, "global_num_kv_heads": 0, "share_kv_projections": False,
                  "num_kv_shared_layers": 0, "attention_output_gate": False, "mtp_layer_pattern": "",
                  "attention_differential": False, "attention_head_gate": False, "layer_widths": ()}
_MLA_OK = {"o_groups": 0, "o_lora_rank": 0, "attention_layer_pattern": "G", "mtp_layer_pattern": "",
           "attention_output_gate": False, "attention_differential": False, "attention_head_gate": False,
           "layer_widths": ()}
_GLOBAL_OK = {"o_groups": 0, "o_lora_rank": 0, "attention_layer_pattern": "G", "mtp_layer_pattern": "",
              "use_sparse_indexer": False}
_TYPE_OK = {"compressed": _COMPRESSED_OK, "mla": _MLA_OK, "global": _GLOBAL_OK}
_LAYERS_OK = {"num_kv_shared_layers": 0, "engram_layers": (), "remat_skip_layers": 0, "remat_block_layers": 1,
              "warmup_cse_layers": (), "pipeline_layers": (), "layer_widths": (), "layer_loops": ()}


@budget(2)
@given(kw=config_kwargs(), i=st.integers(0, len(RELATIONS) - 1))
def test_broken_relation_is_a_value_error_naming_a_key_it_set(kw, i):
    keys = list(RELATIONS[i])  # the keys it sets, and a quirk's knob ('maxtext:window_pairs=bogus' names window_pairs)
    keys += [q.partition(":")[2].partition("=")[0] for q in RELATIONS[i].get("convention_quirks", ())]
    fix = {**_TYPE_OK.get(RELATIONS[i].get("attention_type"), {}),
           **(_LAYERS_OK if "num_decoder_layers" in RELATIONS[i] else {})}
    if "mtp_layer_pattern" in fix and kw.get("mtp_ffn_layer_pattern"):  # a hybrid's MTP layers go with their mixers
        fix.update(mtp_ffn_layer_pattern="", mtp_num_layers=0)
    mutation = {**fix, **RELATIONS[i]}
    raises_naming(lambda: maxflops.model_config(**{**kw, **mutation}), *keys)
    if "convention_quirks" in mutation:  # not checked as a count() override: see the xfail test below
        return
    cfg = build(kw)
    raises_naming(lambda: maxflops.count(cfg, **mutation), *keys)


# fixed (was a strict xfail): bug (minor): a convention_quirks entry's value is checked only when its convention is active: a bad one is accepted until the convention switches
def test_bad_quirk_value_of_an_inactive_convention():
    raises_naming(lambda: maxflops.model_config(convention_quirks=("maxtext:window_pairs=bogus",)),
                  "convention_quirks")


# fixed (was a strict xfail): bug: convention_quirks given as a count() override is neither validated nor applied (apply_overrides does not re-derive the bundle)
def test_convention_quirks_as_count_override():
    base = dict(attention_layer_pattern="L", sliding_window_size=4, max_target_length=32, emb_dim=8, vocab_size=64,
                mlp_dim=16, num_decoder_layers=1, convention="maxtext")
    quirk = ("maxtext:window_pairs=global",)
    cfg = maxflops.model_config(**base)
    assert (maxflops.count(cfg, convention_quirks=quirk).total
            == maxflops.count(maxflops.model_config(**base, convention_quirks=quirk)).total)
    raises_naming(lambda: maxflops.count(cfg, convention_quirks=("nonsense",)), "convention_quirks")


def bad_lengths(cfg, bad):
    """A bad segment_lengths of kind ``bad`` for this config (None: no such bad value in its mode)."""
    T, b = cfg.max_target_length, int(cfg.per_device_batch_size)
    if cfg.mode == "decode":  # one cache length per sequence, >= 0, any size
        return {"empty": [], "negative": [-1] * b, "float": [1.5] * b, "matrix": [[1] * b],
                "wrong_count": [1] * (b + 1)}.get(bad)
    return {"empty": [], "zero": [0], "negative": [-2], "too_long": [T + 1], "too_many": [T] * (b + 2),
            "float": [1.5], "matrix": [[1, 1]]}.get(bad)


@budget()
@given(kw=config_kwargs(causal=True, integer_batch=True),
       bad=st.sampled_from(["empty", "zero", "negative", "too_long", "too_many", "float", "matrix", "wrong_count"]))
def test_bad_segment_lengths_are_value_errors(kw, bad):
    cfg = build(packable(kw))
    lengths = bad_lengths(cfg, bad)
    if lengths is not None:
        raises_naming(lambda: maxflops.count(cfg, segment_lengths=lengths), "segment_lengths")
    dec = build({**without_patch_stream(kw), "mode": "decode", "convention": "exact"})
    lengths = bad_lengths(dec, bad)
    if lengths is not None:
        raises_naming(lambda: maxflops.count(dec, segment_lengths=lengths), "segment_lengths")
        raises_naming(lambda: maxflops.decode_traffic(dec, segment_lengths=lengths), "segment_lengths")


# --- decode_traffic ---------------------------------------------------------------------------------------------

@budget()
@given(kw=config_kwargs(mode="decode"))
def test_traffic_structure(kw):
    cfg = build(kw)
    t = maxflops.decode_traffic(cfg)
    assert all(type(v) is int and v >= 0 for v in t.components.values())
    assert t.total == sum(t.components.values()) and type(t.total) is int
    assert t.sequences == cfg.per_device_batch_size
    # more bytes per element never moves fewer bytes
    more = maxflops.decode_traffic(cfg, weight_bytes=cfg.weight_bytes + 1, kv_cache_bytes=cfg.kv_cache_bytes + 1)
    assert more.total >= t.total
    # a rule giving every group weight_bytes is no rule
    plain = maxflops.decode_traffic(cfg, weight_bytes_rules=())
    assert maxflops.decode_traffic(cfg, weight_bytes_rules=(f"*={cfg.weight_bytes}",)) == plain


def mhc_weight_bytes(cfg):
    """The mHC weights one decode step reads: per layer one mixing's projection G*D -> 2G + G^2 (2G: the streams
    kept; gated, the low-rank maps and G*D -> G) around each branch
    (the mixer, the FFN: two, or one in a layer that has a mixer or an FFN alone); the hyper head's G*D -> G once per
    output head; Engram's key projection E_in -> G*D grows with G too."""
    G, D = cfg.mhc_expansion_rate, cfg.emb_dim
    if G == 1:
        return 0
    mixers, ffns, n = cfg.attention_layer_pattern, cfg.ffn_layer_pattern, cfg.num_decoder_layers
    branches = sum((mixers[l % len(mixers)] != "-") + (not ffns or ffns[l % len(ffns)] != "-") for l in range(n))
    one = G * D * (2 * G + (0 if cfg.mhc_plain_residual else G * G))  # (HY-V4's: no G x G mixing)
    head = G * D * G if cfg.mhc_hyper_head else 0
    r = cfg.mhc_lowrank
    if r:  # (Qwen4-Exp's gated hyper-connections: G*D -> r -> G*D and G*D -> G; the head's G*D -> r -> G*D)
        one, head = 2 * G * D * r + G * D * G, 2 * G * D * r if cfg.mhc_hyper_head else 0
    e_in = cfg.engram_num_heads * cfg.engram_head_dim * (cfg.engram_max_ngram_size - 1)
    engram = len(cfg.engram_layers) * e_in * (G - 1) * D
    return (branches * one + head + engram) * cfg.weight_bytes


@budget()
@given(kw=config_kwargs(mode="decode", attention_type="mla"))
def test_traffic_mhc_weights(kw):
    """mHC adds exactly its weights to a decode step's weight traffic, on every kind of layer (Engram layers, whose
    projections and conv the streams widen too, have their own test in test_new_user.py)."""
    cfg = build(kw)
    assume(cfg.mhc_expansion_rate > 1 and not cfg.engram_layers)
    cfg = build({**kw, "weight_bytes_rules": ()})  # every weight at weight_bytes (mhc_weight_bytes' rule)
    off = maxflops.decode_traffic(cfg, mhc_expansion_rate=1, mhc_hyper_head=False).components["weights"]
    assert maxflops.decode_traffic(cfg).components["weights"] - off == mhc_weight_bytes(cfg)


# fixed (was a strict xfail): bug: decode_traffic leaves out the mHC weights of gated-delta-net ('D') layers (traffic._layer returns before adding them)
def test_traffic_mhc_weights_on_gated_delta_net_layers():
    base = dict(attention_layer_pattern="D", num_decoder_layers=1, emb_dim=8, vocab_size=64, mlp_dim=16,
                mode="decode", decode_kv_length=3)
    on = maxflops.model_config(**base, mhc_expansion_rate=2)
    off = maxflops.model_config(**base)
    assert (maxflops.decode_traffic(on).components["weights"] - maxflops.decode_traffic(off).components["weights"]
            == mhc_weight_bytes(on))


# fixed (was a strict xfail): bug (error message): a bad letter of mtp_layer_pattern is reported as attention_layer_pattern's
def test_bad_mtp_layer_pattern_letter_names_mtp_layer_pattern():
    raises_naming(lambda: maxflops.model_config(mode="train", mtp_num_layers=1, attention_type="global",
                                                mtp_layer_pattern="S"), "mtp_layer_pattern")
