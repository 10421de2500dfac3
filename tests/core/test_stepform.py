"""maxflops.stepform: a count at a new length or batch from the config's traced step form equals the ordinary
pricing, to the integer, for every shipped config in every mode, convention and kernel knob of the behaviour
cases; what cannot be traced is priced the ordinary way; a symbol refuses every non-linear use."""

from __future__ import annotations

import importlib.util
from fractions import Fraction

import pytest
from hypothesis import given, settings

import maxflops
from maxflops import account, masks, stepform
from maxflops.resolve import call_key
from maxflops.stepform import Sym, _Seqs
from strategies import config_kwargs
from repo import FIXTURES

# random configs draw every schema key, the inert ones included (the inert rule is held by
# tests/core/test_input_paths.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")

HERE = FIXTURES / "behaviour"
_spec = importlib.util.spec_from_file_location("behaviour_generate", HERE / "generate.py")
behaviour = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(behaviour)

STEP = ("max_target_length", "per_device_batch_size", "decode_kv_length")
CASES = [(name, variant, {k: v for k, v in ov.items() if k not in STEP})
         for name, variant, ov, docs in behaviour.cases() if docs is None]
# Lengths on both sides of the shipped windows (128 .. 4096), chunks (8192) and top-k (2048): the forms' guards
LENGTHS = (1, 129, 2049, 20480)
SLOW_LENGTHS = (2, 127, 128, 1023, 1024, 1025, 2047, 2048, 4095, 4096, 4097, 8191, 8193, 131072)
BATCHES = (1, 3, 0.5)


def snapshot(b) -> tuple:
    plan, rows, head, *_ = b._source
    return (b.total, b.learnable_weight, b.attention, b.tokens, list(b.components.items()),
            [list(r.items()) for r in rows], list(head.items()), b.not_priced)


def both(cfg, monkeypatch, **step):
    """(the count through the step form, the ordinary count) of one step, or the error each raises."""
    out = []
    for ordinary in (False, True):
        account._COUNTS.clear()
        with monkeypatch.context() as m:
            if ordinary:
                m.setattr(stepform, "step_count", lambda *a: None)
            try:
                out.append(snapshot(maxflops.count(cfg, **step)))
            except ValueError as e:
                out.append(str(e))
    return out


def forms_of(cfg):
    state = stepform._FORMS.get(call_key(cfg)[0])
    return None if state is None else state.forms


def check_case(name, knobs, lengths, monkeypatch, hardware_at=None):
    try:
        cfg = maxflops.load_config(name, **knobs)
    except ValueError:  # a variant the model refuses (the behaviour figures hold the refusal)
        return None
    key = "decode_kv_length" if cfg.mode == "decode" else "max_target_length"
    maxflops.count(cfg, **{key: 77})  # the first count at a new step: the config is remembered, not traced
    for L in lengths:
        for B in BATCHES:
            fast, ordinary = both(cfg, monkeypatch, **{key: L, "per_device_batch_size": B})
            assert fast == ordinary, (name, knobs, L, B)
    if hardware_at is not None:  # the hardware side: the ordinary pricing of the same step, built on first use
        got = maxflops.count(cfg, **{key: hardware_at, "per_device_batch_size": 2})
        account._COUNTS.clear()
        with monkeypatch.context() as m:
            m.setattr(stepform, "step_count", lambda *a: None)
            want = maxflops.count(cfg, **{key: hardware_at, "per_device_batch_size": 2})
        assert got.hardware_components == want.hardware_components
        assert [r.to_dict() for r in got.layers] == [r.to_dict() for r in want.layers]
    return forms_of(cfg)


@pytest.mark.parametrize("name, variant, knobs", CASES, ids=[f"{n} {v}" for n, v, _ in CASES])
def test_form_equals_the_ordinary_count(name, variant, knobs, monkeypatch):
    forms = check_case(name, knobs, LENGTHS, monkeypatch, hardware_at=2049)
    if forms is not None:  # every shipped config, in every mode and convention, is a form in the step
        assert forms, (name, variant)


@pytest.mark.slow
@pytest.mark.parametrize("name, variant, knobs", CASES, ids=[f"{n} {v}" for n, v, _ in CASES])
def test_form_equals_the_ordinary_count_at_every_threshold(name, variant, knobs, monkeypatch):
    check_case(name, knobs, SLOW_LENGTHS, monkeypatch)


@settings(max_examples=40, deadline=None)
@given(kw=config_kwargs())
def test_random_configs(kw):
    cfg = maxflops.model_config(**kw)
    key = "decode_kv_length" if cfg.mode == "decode" else "max_target_length"
    with pytest.MonkeyPatch.context() as mp:
        both(cfg, mp, **{key: 5})  # (the config is remembered even where this step is refused)
        for L in (1, 33, 1000, 5000):
            for B in (1, 2):
                fast, ordinary = both(cfg, mp, **{key: L, "per_device_batch_size": B})
                assert fast == ordinary, (kw, L, B)


def test_bad_steps_raise_what_the_ordinary_path_raises(monkeypatch):
    cfg = maxflops.load_config("llama3.1-8b")
    maxflops.count(cfg, max_target_length=100)
    maxflops.count(cfg, max_target_length=200)  # traced
    assert forms_of(cfg)
    for step in ({"max_target_length": 0}, {"max_target_length": "x"}, {"per_device_batch_size": -1},
                 {"per_device_batch_size": 0.3}, {"max_target_length": 2 ** 70}, {"max_target_length": 1.5},
                 {"per_device_batch_size": True}):
        fast, ordinary = both(cfg, monkeypatch, **step)
        assert isinstance(fast, str) and fast == ordinary, step
    decode = maxflops.load_config("llama3.1-8b", mode="decode")
    maxflops.count(decode, decode_kv_length=10)
    fast, ordinary = both(decode, monkeypatch, decode_kv_length=11, per_device_batch_size=1.5)
    assert "whole number" in fast and fast == ordinary


def test_a_config_counted_once_is_not_traced_and_other_keys_take_the_ordinary_path():
    cfg = maxflops.load_config("gemma3-27b", max_target_length=1234)
    maxflops.count(cfg, max_target_length=1000)
    assert forms_of(cfg) == []
    maxflops.count(cfg, max_target_length=1001, remat_policy="full")  # not the step alone
    assert forms_of(cfg) == []
    maxflops.count(cfg, max_target_length=1002)
    assert len(forms_of(cfg)) == 1
    maxflops.count(cfg, max_target_length=1003, per_device_batch_size=7)  # the same form
    assert len(forms_of(cfg)) == 1


def test_guards_split_the_lengths_at_a_threshold_the_pricing_reads(monkeypatch):
    # with indexer_skip_within_topk, only sequences longer than the top-k run the indexer: the form's guard
    cfg = maxflops.load_config("deepseek3.2-671b", convention="maxtext", indexer_skip_within_topk=True)
    K = cfg.index_topk
    maxflops.count(cfg, max_target_length=K + 100)
    for L in (K + 1, K, 3, K + 7):
        fast, ordinary = both(cfg, monkeypatch, max_target_length=L)
        assert fast == ordinary, L
    sides = [set(g) for g, _, _ in forms_of(cfg)]
    assert sides == [{(K, True)}, {(K, False)}]


def test_batch_level_rules_are_one_basis_each(monkeypatch):
    # Megatron's DSA scales the dense pairs by one ratio from the batch's mean length (clamped at the top-k):
    # a whole-step figure, computed from each step's sequences
    cfg = maxflops.load_config("deepseek3.2-671b", convention="megatron")
    K = cfg.index_topk
    maxflops.count(cfg, max_target_length=3000)
    for L in (K - 1, K, K + 1, 5000):
        fast, ordinary = both(cfg, monkeypatch, max_target_length=L)
        assert fast == ordinary, L
    assert len(forms_of(cfg)) == 1


def test_untraceable_pricing_is_counted_the_ordinary_way(monkeypatch):
    # zero-computation experts take an expected share of the slots, a Fraction of the token count: not traced
    cfg = maxflops.model_config(num_experts=8, num_experts_per_tok=2, zero_experts=2, moe_mlp_dim=256)
    maxflops.count(cfg, max_target_length=3000)
    fast, ordinary = both(cfg, monkeypatch, max_target_length=5000)
    assert fast == ordinary and forms_of(cfg) is False


def test_a_symbol_refuses_every_use_that_is_not_linear():
    t, b = Sym({stepform.TOKENS: 1}), Sym({stepform.COUNT: 1})
    assert (3 * t + Fraction(1, 2) * b - t + 0).terms == {stepform.TOKENS: 2, stepform.COUNT: Fraction(1, 2)}
    assert (5 + t).terms == {stepform.TOKENS: 1, stepform.ONE: 5}
    refused = [lambda: t * b, lambda: t / 2, lambda: t // 2, lambda: divmod(t, 2), lambda: t % 2, lambda: t ** 2,
               lambda: bool(t), lambda: t == 0, lambda: t < 1, lambda: int(t), lambda: float(t), lambda: round(t),
               lambda: hash(t), lambda: t * 1.5, lambda: Fraction(t), lambda: min(t, 3), lambda: abs(t)]
    for op in refused:
        with pytest.raises(TypeError):
            op()


def test_a_ratio_of_a_symbol_is_exact():
    t = Sym({stepform.TOKENS: 1})
    assert masks._ratio(t, 4).terms == {stepform.TOKENS: Fraction(1, 4)}
    assert masks._ratio(12, 4) == 3 and masks._ratio(13, 4) == Fraction(13, 4)


def test_summed_functions_keep_the_values_they_were_called_with():
    # the pricing may rebind a variable its summed function reads after the sum (a loop variable reused):
    # the ordinary path has already called the function; the form must call it with the value of that moment
    def price(c, seqs):
        k = 3
        row = {"mlp": seqs.sum(lambda L: L * k)}
        for k in ("a", "b"):
            pass
        return [row], {"logits": 2 * seqs.tokens}

    guards, rows, head = stepform.trace(price, {"per_device_batch_size": 1, "max_target_length": 8},
                                        "max_target_length", 8)
    form = stepform.compile_form(rows, head, (1,), (False,), True)
    got_rows, got_head, components, learnable, attention = form(10, 4)
    assert got_rows == [{"mlp": 120}] and got_head == {"logits": 80}
    assert components == {"mlp": 120, "logits": 80} and (learnable, attention) == (200, 0)


def test_a_pricing_that_branches_on_the_step_is_not_traced():
    def branches(c, seqs):
        return [{"mlp": seqs.tokens if c["max_target_length"] > 5 else 0}], {}

    def holds(c, seqs):
        t = seqs.tokens
        return [{"mlp": seqs.sum(lambda L: L * t)}], {}

    def floats(c, seqs):
        return [{"mlp": seqs.tokens * 0.5}], {}

    def whole_of_a_sum(c, seqs):  # a whole-step figure's arguments must be known from (L, B) alone
        return [{"mlp": seqs.whole(lambda s, q: q, seqs.sum(lambda L: L * L))}], {}

    c = {"per_device_batch_size": 1, "max_target_length": 8}
    for price in (branches, holds, floats, whole_of_a_sum):
        assert stepform.trace(price, c, "max_target_length", 8) is None, price.__name__
    assert isinstance(_Seqs(8, []).longer_than(3), _Seqs)


@pytest.mark.parametrize("model", ["glm5", "gemma3-27b", "qwen3-next-80b-a3b", "deepseek4-284b", "nemotron-h-8b"])
def test_packed_sums_over_distinct_lengths_equal_sums_over_documents(model, monkeypatch):
    # a packed batch's sums run over its distinct lengths, weighted by how many documents have each
    import numpy as np

    from maxflops.sequences import Packed

    rng = np.random.default_rng(1)
    batches = {
        "few lengths (bincount)": rng.integers(1, 3000, size=5000),
        "long, repeated (unique)": np.repeat(rng.integers(1, 200_000, size=300), 20),
        "every length distinct": rng.permutation(np.arange(1, 3001)),
    }
    for what, docs in batches.items():
        T = int(docs.max())
        cfg = maxflops.load_config(model, max_target_length=T, per_device_batch_size=int(docs.sum()) // T + 1)
        for mode in ("train", "decode"):  # (decode: the lengths are the sequences' KV caches)
            c = cfg if mode == "train" else maxflops.load_config(model, mode="decode", per_device_batch_size=len(docs))
            got = maxflops.count(c, segment_lengths=docs)
            with monkeypatch.context() as m:
                m.setattr(Packed, "_histogram", property(lambda self: (self.lengths, None)))
                want = maxflops.count(c, segment_lengths=docs)
            assert (got.components, got.hardware_components) == (want.components, want.hardware_components), \
                (what, mode)


def test_many_layer_kinds_and_inexact_statistics_fall_back_or_match(monkeypatch):
    # found by review: a component summed over thousands of layer kinds once compiled to a chain of '+' too deep for
    # the compiler; the sums are sum() over tuples now, and a form that cannot serve falls back to the ordinary count
    import random

    n, rng = 2000, random.Random(0)
    cfg = maxflops.model_config(
        num_decoder_layers=n, emb_dim=64, num_query_heads=4, num_kv_heads=2, head_dim=16, mlp_dim=128,
        attention_layer_pattern="GLCGLCGLCGL", sliding_window_size=16, chunk_attn_window_size=32,
        ffn_layer_pattern="FFE--", num_experts=4, num_experts_per_tok=2, moe_mlp_dim=32,
        parallel_layer_pattern="G-L-C--", engram_layers=tuple(sorted(rng.sample(range(n), n // 2))),
        engram_num_heads=2, engram_head_dim=8, engram_max_ngram_size=3, engram_kernel_size=3,
        remat_skip_layers=n // 4, remat_block_layers=2, num_kv_shared_layers=n // 2, per_layer_input_dim=8,
        vocab_size=1000)
    c, plan = maxflops.resolve.resolve_call(cfg)
    assert len(plan.kinds) > 300

    def deep(d, f):  # (a caller deep in its own stack leaves the compiler less room)
        return f() if d == 0 else deep(d - 1, f)

    maxflops.count(cfg, max_target_length=100)
    fast, ordinary = deep(600, lambda: both(cfg, monkeypatch, max_target_length=200))
    assert fast == ordinary and forms_of(cfg)
    # 5,000 rows of one component: one chain of '+' that long does not compile at any depth
    rows = [{"mlp": Sym({stepform.TOKENS: k + 1})} for k in range(5000)]
    form = stepform.compile_form(rows, {}, (2,) * 5000, (False,) * 5000, True)
    assert form(3, 2)[2] == {"mlp": sum(2 * (k + 1) * 6 for k in range(5000))}

    def inexact(c, seqs):  # a summed function that returns a float: the form refuses to use it
        return [{"mlp": seqs.sum(lambda L: L / 2)}], {}

    guards, rows, head = stepform.trace(inexact, {"per_device_batch_size": 1, "max_target_length": 8},
                                        "max_target_length", 8)
    form = stepform.compile_form(rows, head, (1,), (False,), True)
    with pytest.raises(stepform.NotExact):
        form(10, 1)


def _typed(snap):
    """A snapshot with each number's type beside it: 5 and Fraction(5) are equal, and only one is a FLOP count."""
    def walk(x):
        if isinstance(x, (list, tuple)):
            return [walk(y) for y in x]
        return (type(x).__name__, x) if isinstance(x, (int, float, Fraction)) else x
    return walk(snap)


@pytest.mark.parametrize("name,knobs,first,step", [
    # a sum whose coefficients are all ints is still rounded where the ordinary count rounds it (a Fraction else)
    ("deepseek4-284b", dict(compressed_pairs="maxtext"), dict(max_target_length=4096), dict(max_target_length=7001)),
    # prompt tokens run ahead of the layers, not the step's length: never traced
    ("llama3.1-8b", dict(mode="prefill", prompt_tokens=512), dict(max_target_length=1024),
     dict(max_target_length=2048)),
    # decode, a batch-only override: the KV length is decode_kv_length's, not max_target_length's
    ("llama3.1-8b", dict(mode="decode", decode_kv_length=8191), dict(per_device_batch_size=2),
     dict(per_device_batch_size=5)),
])
def test_the_step_form_equals_the_ordinary_count_type_for_type(name, knobs, first, step, monkeypatch):
    cfg = maxflops.load_config(name, **knobs)
    maxflops.count(cfg, **first)
    maxflops.count(cfg, **first)  # the config traced at its first step
    fast, ordinary = both(cfg, monkeypatch, **step)
    assert _typed(fast) == _typed(ordinary)
    assert type(fast[0]) is int
