"""BLT's patch stream and the patch family (letters 'Y' and 'U'): the engine against a naive byte latent transformer
that counts its own multiply-adds position by position (a frozen patcher with its head, the encoder's byte layers and
its patch cross-attention, the global layers over the patches, the decoder's cross-attention and byte layers, the
head; packed documents and stated patch counts included; training: the frozen parts once, the rest three times); the
hardware rectangle; the refusals; the reference kernels and a Flax model equal to XLA. transformers' eager BLT is
held in the zoo and tests/fixtures/hf_eager."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quietly_inert
from flaxcheck import engine_and_xla
from maxflops.families.patch.proof import layout

RNG = np.random.default_rng(0)


class Counter:
    def __init__(self):
        self.macs = 0

    def matvec(self, x, w):
        self.macs += w.shape[0] * w.shape[1]
        return x @ w

    def attend(self, q, keys, vals):
        """One head's query over its keys: QK^T and PV, len(keys) x hd multiply-adds each."""
        s = np.array([k @ q for k in keys])
        p = np.exp(s - s.max())
        self.macs += 2 * len(keys) * len(q)
        return (p / p.sum()) @ np.array(vals)


def _weights(*shape):
    return RNG.normal(size=shape) / 4


class Stack:
    """Pre-norm GQA layers of one width (heads D / H wide) with a gated MLP; causal, or a window of W keys."""

    def __init__(self, n, D, H, Hkv, I, W=0):
        self.D, self.H, self.Hkv, self.d, self.W = D, H, Hkv, D // H, W
        self.layers = [dict(wq=_weights(D, D), wk=_weights(D, Hkv * self.d), wv=_weights(D, Hkv * self.d),
                            wo=_weights(D, D), gate=_weights(D, I), up=_weights(D, I), down=_weights(I, D))
                       for _ in range(n)]

    def run(self, n: Counter, xs, layers=None):
        for w in self.layers if layers is None else [self.layers[i] for i in layers]:
            xs = self.layer(n, w, xs)
        return xs

    def layer(self, n: Counter, w, xs):
        g = self.H // self.Hkv
        q = [n.matvec(x, w["wq"]).reshape(self.H, self.d) for x in xs]
        k = [n.matvec(x, w["wk"]).reshape(self.Hkv, self.d) for x in xs]
        v = [n.matvec(x, w["wv"]).reshape(self.Hkv, self.d) for x in xs]
        out = []
        for i, x in enumerate(xs):
            lo = max(0, i - self.W + 1) if self.W else 0
            o = np.concatenate([n.attend(q[i][h], [kk[h // g] for kk in k[lo:i + 1]], [vv[h // g] for vv in
                                                                                    v[lo:i + 1]])
                                for h in range(self.H)])
            y = x + n.matvec(o, w["wo"])
            a = n.matvec(y, w["gate"])
            out.append(y + n.matvec(a / (1 + np.exp(-a)) * n.matvec(y, w["up"]), w["down"]))
        return out


class Cross:
    """BltCrossAttention: q from ``queries``, k and v from ``sources``, each query attending the sources its patch
    pairs it with."""

    def __init__(self, D, H, Hkv):
        self.H, self.Hkv, self.d = H, Hkv, D // H
        self.wq, self.wo = _weights(D, D), _weights(D, D)
        self.wk, self.wv = _weights(D, Hkv * self.d), _weights(D, Hkv * self.d)

    def run(self, n: Counter, queries, sources, pairs):
        g = self.H // self.Hkv
        k = [n.matvec(s, self.wk).reshape(self.Hkv, self.d) for s in sources]
        v = [n.matvec(s, self.wv).reshape(self.Hkv, self.d) for s in sources]
        out = []
        for i, x in enumerate(queries):
            q = n.matvec(x, self.wq).reshape(self.H, self.d)
            seen = pairs(i)
            o = np.concatenate([n.attend(q[h], [k[j][h // g] for j in seen], [v[j][h // g] for j in seen])
                                if seen else np.zeros(self.d) for h in range(self.H)])
            out.append(x + n.matvec(o, self.wo))
        return out


class NaiveBLT:
    """One sequence (or packed document) at a time: L bytes in P patches (byte i in patch ``layout(L, P)[i]``)."""

    def __init__(self, s):
        self.s = s
        self.patcher = Stack(s["Np"], s["Dp"], s["Hp"], s["Hkvp"], s["Ip"], s["Wp"])
        self.patcher_head = _weights(s["Dp"], s["V"])
        self.encoder = Stack(s["Ne"], s["D"], s["He"], s["Hkve"], s["Ie"], s["W"])
        self.enc_cross = [Cross(s["D"], s["He"], s["Hkve"]) for _ in range(s["Ne"] if s["enc_all"] else 1)]
        self.pool_proj = [_weights(s["D"], s["k"] * s["D"]) for _ in self.enc_cross]
        self.global_in = _weights(s["k"] * s["D"], s["Dg"])
        self.glob = Stack(s["Ng"], s["Dg"], s["Hg"], s["Hkvg"], s["Ig"])
        self.global_out = _weights(s["Dg"], s["k"] * s["D"])
        self.decoder = Stack(s["Nd"], s["D"], s["Hd"], s["Hkvd"], s["Id"], s["W"])
        self.dec_cross = [Cross(s["D"], s["Hd"], s["Hkvd"]) for _ in range(s["Nd"] if s["dec_all"] else 1)]
        self.head = _weights(s["D"], s["V"])
        self.frozen, self.trained = Counter(), Counter()

    def forward(self, L, P):
        s, k, D = self.s, self.s["k"], self.s["D"]
        ids = layout(L, P)
        by_patch = [[i for i in range(L) if ids[i] == j] for j in range(P)]
        xs = list(RNG.normal(size=(L, D)))
        for x in self.patcher.run(self.frozen, list(RNG.normal(size=(L, s["Dp"])))):  # frozen: no gradient
            self.frozen.matvec(x, self.patcher_head)
        n = self.trained
        patches = None
        for i in range(s["Ne"]):
            xs = self.encoder.run(n, xs, [i])
            if s["enc_all"] or i == s["Ne"] - 1:
                # a cross-attention the next one replaces feeds nothing: forward only (as the frozen parts)
                m = n if i == s["Ne"] - 1 else self.frozen
                c = i if s["enc_all"] else 0
                pooled = [np.max([xs[b] for b in by_patch[j]], 0) if by_patch[j] else np.zeros(D) for j in range(P)]
                queries = [q for p in pooled for q in m.matvec(p, self.pool_proj[c]).reshape(k, D)]
                patches = self.enc_cross[c].run(m, queries, xs, lambda qi: by_patch[qi // k])
        stream = [np.concatenate(patches[j * k:(j + 1) * k]) for j in range(P)]
        if k * D != s["Dg"]:  # the patch stream's input projection
            stream = [n.matvec(x, self.global_in) for x in stream]
        stream = self.glob.run(n, stream)
        keys = [kk for x in stream for kk in n.matvec(x, self.global_out).reshape(k, D)]
        for i in range(s["Nd"]):
            if s["dec_all"] or i == 0:
                xs = self.dec_cross[i if s["dec_all"] else 0].run(n, xs, keys,
                                                                  lambda b: list(range(ids[b] * k, ids[b] * k + k)))
            xs = self.decoder.run(n, xs, [i])
        for x in xs:
            n.matvec(x, self.head)


SHAPES = dict(Np=2, Dp=6, Hp=3, Hkvp=1, Ip=7, Wp=3, Ne=2, D=8, He=4, Hkve=2, Ie=9, W=4, enc_all=True, k=2,
              Ng=2, Dg=12, Hg=3, Hkvg=3, Ig=10, Nd=2, Hd=2, Hkvd=1, Id=5, dec_all=False, V=11)


def blt_config(s, **kw):
    """The naive model's layers as the blt loader lays them out: the patcher, the encoder (a 'Y' after each layer
    with enc_all), the global layers over the patches, the decoder ('U' before each layer with dec_all)."""
    letters, ffns, rules, frozen = [], [], [], []

    def add(letter, ffn, **own):
        rules.extend(f"{key}@{len(letters)}={v}" for key, v in own.items())
        letters.append(letter)
        ffns.append(ffn)

    byte = "L" if s["W"] else "G"
    for _ in range(s["Np"]):
        frozen.append(len(letters))
        own = dict(sliding_window_size=s["Wp"]) if s["Wp"] else {}
        add("L" if s["Wp"] else "G", "F", emb_dim=s["Dp"], num_query_heads=s["Hp"], num_kv_heads=s["Hkvp"],
            head_dim=s["Dp"] // s["Hp"], mlp_dim=s["Ip"], **own)
    head = len(letters) - 1
    for i in range(s["Ne"]):
        add(byte, "F")
        if s["enc_all"] or i == s["Ne"] - 1:
            if i < s["Ne"] - 1:
                frozen.append(len(letters))
            add("Y", "-")
    patch_layers = []
    for _ in range(s["Ng"]):
        patch_layers.append(len(letters))
        add("G", "F", emb_dim=s["Dg"], num_query_heads=s["Hg"], num_kv_heads=s["Hkvg"], head_dim=s["Dg"] // s["Hg"],
            mlp_dim=s["Ig"])
    dec = dict(num_query_heads=s["Hd"], num_kv_heads=s["Hkvd"], head_dim=s["D"] // s["Hd"], mlp_dim=s["Id"])
    for i in range(s["Nd"]):
        if s["dec_all"] or i == 0:
            add("U", "-", **dec)
        add(byte, "F", **dec)
    return quietly_inert(lambda: maxflops.model_config(**{**dict(
        num_decoder_layers=len(letters), attention_layer_pattern="".join(letters), ffn_layer_pattern="".join(ffns),
        layer_widths=tuple(rules), frozen_layers=frozen, patch_layers=patch_layers, patcher_head_layer=head,
        emb_dim=s["D"], num_query_heads=s["He"], num_kv_heads=s["Hkve"], head_dim=s["D"] // s["He"],
        mlp_dim=s["Ie"], sliding_window_size=s["W"] or s["Wp"], vocab_size=s["V"], patch_cross_k=s["k"]), **kw}))


@pytest.mark.parametrize("shape,docs,P", [({}, [9], 0), ({}, [5, 8, 1], 0), (dict(k=1, Dg=8, Hg=4, Hkvg=2, dec_all=True), [7], 0),
                                          (dict(enc_all=False, Wp=0, W=0, Ne=1), [6, 6], 0), ({}, [9], 4),
                                          (dict(k=3, Dg=24), [10], 3)])
def test_model_flops_are_the_naive_models_multiply_adds(shape, docs, P):
    s = {**SHAPES, **shape}
    net = NaiveBLT(s)
    for L in docs:
        net.forward(L, P or L + 1)
    lengths = dict(segment_lengths=docs) if P == 0 else {}
    T = sum(docs) if P == 0 else docs[0]
    pre = maxflops.count(blt_config(s, mode="prefill", max_target_length=T, patches_per_sequence=P), **lengths)
    assert pre.total == 2 * (net.frozen.macs + net.trained.macs)
    assert pre.components["patcher_logits"] == 2 * sum(docs) * s["Dp"] * s["V"]
    train = maxflops.count(blt_config(s, mode="train", max_target_length=T, patches_per_sequence=P), **lengths)
    assert train.total == 2 * net.frozen.macs + 3 * 2 * net.trained.macs  # the frozen parts forward only


def test_the_hardware_rectangle_and_the_pairs():
    """'ideal': each patch's queries over its bytes, k L pairs; 'dense' and 'blocked': the whole P k x L rectangle
    (the patches' bounds are data)."""
    s = dict(SHAPES, Np=0)
    L, k, He, Hd, d = 9, s["k"], s["He"], s["Hd"], s["D"] // s["He"]

    def core(impl, P=0):
        b = maxflops.count(blt_config(s, mode="prefill", max_target_length=L, attention_impl=impl,
                                      patches_per_sequence=P, patcher_head_layer=-1, frozen_layers=[1]))
        rows = {r.name: r.hardware_components for r in b.layers}
        return rows["layer 3"]["core_attention"], rows["layer 6"]["core_attention"]  # the last 'Y', the 'U'

    assert core("ideal") == (4 * He * d * k * L, 4 * Hd * (s["D"] // s["Hd"]) * k * L)
    for impl in ("dense", "blocked"):
        assert core(impl) == (4 * He * d * k * (L + 1) * L, 4 * Hd * (s["D"] // s["Hd"]) * k * (L + 1) * L)
        assert core(impl, P=4) == (4 * He * d * k * 4 * L, 4 * Hd * (s["D"] // s["Hd"]) * k * 4 * L)


@pytest.mark.parametrize("extra, match", [
    (dict(mode="decode"), r"'mode': 'decode' with the patch family's layers"),
    (dict(mode="decode", attention_layer_pattern="L" * 16, ffn_layer_pattern="F" * 16), r"'mode': 'decode' with "
                                                                                         "patch_layers"),
    (dict(convention="maxtext"), r"'convention': 'maxtext'"),
    (dict(patch_layers=[5]), r"'patch_layers': layer 5 is a 'Y' layer"),
    (dict(patch_layers=[99]), r"'patch_layers': layer 99 is past the last decoder layer"),
    (dict(frozen_layers=[99]), r"'frozen_layers': layer 99 is past"),
    (dict(patcher_head_layer=99), r"'patcher_head_layer': layer 99 is past"),
    (dict(layer_loops=("0-1*2",)), r"'layer_loops'.*patch stream"),
    (dict(prompt_tokens=3), r"'prompt_tokens'.*patch stream"),
    (dict(patch_cross_k=0), r"'patch_cross_k'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    with pytest.raises(ValueError, match=match):
        blt_config(SHAPES, **extra)


def test_the_patch_family_is_modelled_on_gqa():
    with pytest.raises(ValueError, match=r"'attention_type'.*modelled on GQA"):
        maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="GY", attention_type="mla")


def test_a_stated_patch_count_with_documents_is_refused():
    with pytest.raises(ValueError, match=r"'patches_per_sequence': 4 with segment_lengths"):
        maxflops.count(blt_config(SHAPES, max_target_length=10, patches_per_sequence=4), segment_lengths=[5, 5])


@pytest.mark.parametrize("key", ["patches_per_sequence", "patch_cross_k"])
def test_the_patch_keys_without_patches_are_said(key):
    with pytest.warns(maxflops.InertKeyWarning, match=key):
        maxflops.model_config(num_decoder_layers=2, **{key: 4})


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl", ["ideal", "dense"])
@pytest.mark.parametrize("P", [0, 4])
def test_xla_counts_the_kernels_as_the_engine_prices_them(train, impl, P):
    import jax
    import jax.numpy as jnp

    from maxflops.families.patch.proof import params, patch_decode, patch_encode
    from maxflops.xla.hlo import count_lowered

    B, L, D, H, Hkv, d, k = 2, 9, 8, 4, 2, 2, 2
    Pn = P or L + 1
    ids = layout(L, Pn)
    arr = lambda *shape: jnp.asarray(RNG.normal(size=shape), jnp.float32)  # noqa: E731
    names = ["patch_proj", "qkv_proj", "core_attention", "out_proj"]
    for letters, fn, args in (
            ("YY", lambda p, x: patch_encode(p, x, ids, Pn, k, H, Hkv, impl), (arr(B, L, D),)),
            ("UU", lambda p, x, keys: patch_decode(p, x, keys, ids, Pn, k, H, Hkv, impl),
             (arr(B, L, D), arr(B, Pn * k, D)))):
        prm = params(lambda name, shape: arr(*shape), D, H, Hkv, d, k if letters == "YY" else 0)
        f = jax.grad(lambda *a, f0=fn: jnp.sum(f0(*a) ** 2), argnums=tuple(range(1 + len(args)))) if train else fn
        got = count_lowered(f, prm, *args).by_scope(names)
        b = maxflops.count(maxflops.model_config(
            num_decoder_layers=2, attention_layer_pattern=letters, ffn_layer_pattern="--", emb_dim=D,
            num_query_heads=H, num_kv_heads=Hkv, head_dim=d, patch_cross_k=k, vocab_size=8, patches_per_sequence=P,
            attention_impl=impl, mode="train" if train else "prefill", max_target_length=L,
            per_device_batch_size=B))
        # the layer that neither feeds nor projects the patch stream: the first 'Y' (the last feeds it), the second
        # 'U' (the first projects it)
        row = {r.name: r.hardware_components for r in b.layers}["layer 0" if letters == "YY" else "layer 1"]
        assert {n: got[n] for n in names} == {n: row.get(n, 0) for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs,docs", [
    ("prefill", {}, ()), ("train", {}, ()), ("train", dict(remat_policy="full"), ()),
    ("train", dict(attention_impl="dense"), ()), ("prefill", {}, (4, 5)), ("train", {}, (4, 5)),
    ("train", dict(patches_per_sequence=4), ())],
    ids=["prefill", "train", "remat", "dense", "packed-prefill", "packed-train", "stated-patches"])
def test_a_flax_model_with_patch_layers_equals_xla(mode, knobs, docs):
    """Byte layers (one of its own window), the encoder's cross-attention twice (the first frozen: the second
    replaces its output), the decoder's twice (the first projecting the patch stream): the one-stream Flax model."""

    base = maxflops.model_config(num_decoder_layers=6, attention_layer_pattern="LYYULU", ffn_layer_pattern="F--F-F",
                                 emb_dim=16, num_query_heads=4, num_kv_heads=2, head_dim=4, mlp_dim=24, vocab_size=64,
                                 sliding_window_size=3, patch_cross_k=2, max_target_length=9, frozen_layers=[1],
                                 layer_widths=("sliding_window_size@4=2",))
    engine, xla = engine_and_xla(base, mode, knobs, docs)
    assert engine == xla


def test_the_flax_model_refuses_the_patch_stream_by_name():
    pytest.importorskip("jax")
    from maxflops.xla import model as M

    for extra, key in ((dict(), "patch_layers"), (dict(patch_layers=[]), "patcher_head_layer"),
                       (dict(patch_layers=[], patcher_head_layer=-1), "layer_widths")):
        with pytest.raises(ValueError, match=f"'{key}'.*the Flax model does not build"):
            M.build(blt_config(SHAPES, max_target_length=8, **extra), abstract=True, mode="train")


def test_padded_packed_rows_price_the_patch_stream_as_full_rows():
    """packed_tokens='padded' prices every token slot of a packed row: the global layers over the patches then run a
    full row's patches (L + 1 a row, as for unpacked rows), not the row's byte length."""
    L, rows = 14, 2
    cfg = blt_config(SHAPES, mode="prefill", max_target_length=L, per_device_batch_size=rows, packed_tokens="padded")
    packed = maxflops.count(cfg, segment_lengths=[5, 6, 14])
    full = maxflops.count(cfg)
    patch_rows = [i for i, r in enumerate(full.layers) if r.patches]
    assert patch_rows
    for i in patch_rows:
        for comp in ("qkv_proj", "out_proj", "mlp"):
            if comp in full.layers[i].components:
                assert packed.layers[i].components[comp] == full.layers[i].components[comp], (i, comp)
