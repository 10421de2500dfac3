"""Reformer's attention (letters 'E' LSH and 'O' chunked local, ``lsh_*`` / ``local_*``): the engine against a naive
Reformer that hashes, sorts and chunks as transformers' modeling_reformer does, token by token, and counts its own
multiply-adds (packed documents and decode against a cache included); the hash forward only; reversible layers;
decode bytes; the hardware forms; the refusals; the reference kernels and a Flax model equal to XLA. transformers'
eager Reformer is held in the zoo (tests/loaders/test_hf_zoo.py) and tests/loaders/test_reformer_file.py."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quietly_inert
from flaxcheck import engine_and_xla
from maxflops.families.reformer import lookback, new_token_lookback, chunk_slots

RNG = np.random.default_rng(5)


class NaiveReformer:
    """Reformer layers one token at a time: LSH ('E': the shared query-key projection and the values; each round a
    key's bucket is the argmax over its rotations and their negations; the keys sorted by (bucket, position) and
    split in chunks of C, each query against every key of its chunk and the nb chunks before it, wrapping, masked
    causal and off itself; a sequence of at most C tokens standard causal attention) or local ('O': q, k, v; query
    i against the keys from chunk i // C - nb up to itself); the output projection; the plain FFN. Counts every
    matmul's multiply-adds, the hash's apart."""

    def __init__(self, pattern, D, H, hd, F, C, nb, n, w, Cl, nbl):
        self.pattern, self.D, self.H, self.hd, self.C, self.nb, self.n, self.w = pattern, D, H, hd, C, nb, n, w
        self.Cl, self.nbl = Cl, nbl
        self.macs = self.hash_macs = self.bucket_reads = self.bucket_writes = 0
        m = lambda *s: RNG.normal(size=s)  # noqa: E731
        self.layers = [dict(wq=m(D, H * hd), wk=m(D, H * hd), wv=m(D, H * hd), wo=m(H * hd, D), up=m(D, F),
                            down=m(F, D), rot=m(H, hd, n, w)) for _ in pattern]

    def matvec(self, x, wt):
        self.macs += wt.shape[0] * wt.shape[1]
        return x @ wt

    def _attend(self, q, keys, vals):
        s = keys @ q
        p = np.exp(s - s.max())
        self.macs += 2 * len(keys) * len(q)
        return (p / p.sum()) @ vals

    def _bucket(self, layer, k):
        """Each round's bucket of one key [H, hd] -> [H, n]."""
        rotated = np.einsum("hd,hdnw->hnw", k, layer["rot"])
        self.hash_macs += self.H * self.hd * self.n * self.w
        return np.argmax(np.concatenate([rotated, -rotated], -1), -1)

    def _lsh(self, layer, Q, K, V, queries, memo):
        """Outputs of ``queries`` (positions) over the keys K, V [T, H, hd] of one sequence; ``memo``: the buckets
        of its cached tokens (each key hashed once, when its sequence first outgrows a chunk)."""
        T = len(K)
        out = {i: np.zeros((self.H, self.hd)) for i in queries}
        if T <= self.C:  # standard causal attention, unhashed
            for i in queries:
                for h in range(self.H):
                    out[i][h] = self._attend(Q[i][h], K[:i + 1, h], V[:i + 1, h])
            return out
        self.bucket_reads += len(memo) * self.H * self.n  # (each cached bucket, to place the new keys)
        for t in range(T):
            if t not in memo:
                memo[t] = self._bucket(layer, K[t])
                self.bucket_writes += self.H * self.n
        buckets = np.array([memo[t] for t in range(T)])  # [T, H, n]
        span = self.C * (1 + self.nb)
        for h in range(self.H):
            for r in range(self.n):
                order = sorted(range(T), key=lambda t: (buckets[t, h, r], t))
                for i in queries:
                    j = order.index(i)
                    start = (j // self.C - self.nb) * self.C
                    picked = [order[(start + a) % T] for a in range(span)]  # (wrapping, as transformers)
                    out[i][h] += self._attend(Q[i][h], K[picked, h], V[picked, h]) / self.n
        return out

    def forward(self, xs, cache=None):
        """Run a sequence's new tokens ``xs`` after the cached ones; returns the cache (each layer's inputs)."""
        cache = cache or [([], {}) for _ in self.pattern]
        h = list(xs)
        for layer, letter, (seen, memo) in zip(self.layers, self.pattern, cache):
            start = len(seen)
            seen.extend(h)
            X = np.array(seen)
            new = range(start, len(seen))
            # (a cached token's keys and values were projected when it was new: not counted again)
            project = lambda w: np.array([self.matvec(x, w) if t in new else x @ w  # noqa: E731
                                          for t, x in enumerate(X)]).reshape(len(X), self.H, self.hd)
            if letter == "E":  # one projection for the queries and the keys
                Q = K = project(layer["wq"])
                V = project(layer["wv"])
                outs = self._lsh(layer, Q, K, V, new, memo)
            else:
                Q = np.array([self.matvec(X[t], layer["wq"]) for t in new]).reshape(len(new), self.H, self.hd)
                K, V = project(layer["wk"]), project(layer["wv"])
                outs = {}
                for a, i in enumerate(new):
                    lo = max(0, (i // self.Cl - self.nbl) * self.Cl)
                    outs[i] = np.array([self._attend(Q[a][hh], K[lo:i + 1, hh], V[lo:i + 1, hh])
                                        for hh in range(self.H)])
            attended = [self.matvec(outs[i].reshape(-1), layer["wo"]) for i in new]
            h = [self.matvec(np.maximum(self.matvec(y, layer["up"]), 0), layer["down"]) for y in attended]
        return cache


SHAPES = dict(D=6, H=2, hd=3, F=5, C=4, nb=1, n=2, w=3, Cl=3, nbl=1)


def _config(s, pattern="OE", **kw):
    return quietly_inert(lambda: maxflops.model_config(**{**dict(
        num_decoder_layers=len(pattern), attention_layer_pattern=pattern, emb_dim=s["D"], num_query_heads=s["H"],
        num_kv_heads=s["H"], head_dim=s["hd"], mlp_dim=s["F"], mlp_activations=("relu",), vocab_size=8,
        lsh_chunk_length=s["C"], lsh_chunks_before=s["nb"], lsh_num_hashes=s["n"], lsh_hash_width=s["w"],
        local_chunk_length=s["Cl"], local_chunks_before=s["nbl"]), **kw}))


def test_the_masks_are_their_enumeration():
    for C in range(1, 6):
        for nb in range(0, 3):
            for L in range(30):
                want = sum(i - max(0, (i // C - nb) * C) + 1 for i in range(L))
                assert lookback(L, C, nb) == want
                assert lookback(np.array([L, L]), C, nb).tolist() == [want, want]
                if L:
                    assert new_token_lookback(L - 1, C, nb) == L - 1 - max(0, ((L - 1) // C - nb) * C) + 1
                assert chunk_slots(L, C) == C * len(range(0, L, C))


@pytest.mark.parametrize("shape,pattern,docs", [
    ({}, "OE", [8]), ({}, "EO", [4, 12, 3]), (dict(nb=0, n=1), "E", [8, 2]), (dict(nb=2, n=3, w=2), "EE", [12]),
    (dict(Cl=4, nbl=0), "O", [9, 5]), (dict(Cl=2, nbl=2), "OO", [11]),
])
def test_model_flops_are_the_naive_layers_multiply_adds(shape, pattern, docs):
    s = {**SHAPES, **shape}
    net = NaiveReformer(pattern, **s)
    for L in docs:  # each packed document its own sequence: its own hash, sort and chunks
        net.forward(RNG.normal(size=(L, s["D"])))
    tokens = sum(docs)
    b = maxflops.count(_config(s, pattern, mode="prefill", max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * (net.macs + net.hash_macs)
    assert b.components.get("lsh_hash", 0) == 2 * net.hash_macs
    train = maxflops.count(_config(s, pattern, mode="train", max_target_length=tokens), segment_lengths=docs)
    # the buckets are integers: no gradient reaches the hash, it runs forward only
    assert train.total - train.components["logits"] == 3 * 2 * net.macs + 2 * net.hash_macs


@pytest.mark.parametrize("pattern,kvs", [("OE", [0, 4]), ("EO", [9, 3]), ("E", [2, 6, 13, 4]), ("O", [7])])
def test_decode_is_the_naive_layers_next_token(pattern, kvs):
    s = SHAPES
    macs = reads = writes = 0
    for kv in kvs:
        net = NaiveReformer(pattern, **s)
        cache = net.forward(RNG.normal(size=(kv, s["D"])))
        net.macs = net.hash_macs = net.bucket_reads = net.bucket_writes = 0
        net.forward(RNG.normal(size=(1, s["D"])), cache)
        macs += net.macs + net.hash_macs
        reads, writes = reads + net.bucket_reads, writes + net.bucket_writes
    cfg = _config(s, pattern, mode="decode", per_device_batch_size=len(kvs), kv_cache_bytes=2, index_cache_bytes=1)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    attended = 0
    for letter in pattern:
        for kv in kvs:
            attended += new_token_lookback(kv, s["Cl"], s["nbl"]) if letter == "O" else \
                (kv + 1 if kv + 1 <= s["C"] else s["n"] * s["C"] * (1 + s["nb"]))
    assert t["kv_read"] == attended * 2 * s["H"] * s["hd"] * 2
    if "E" in pattern:  # every cached token's buckets (one per head and round) read to sort, the new ones written
        assert (t["index_read"], t["index_write"]) == (reads, writes)


def test_hardware_forms_and_reversible_layers():
    """'dense': a sequence of at most a chunk the full square, a longer one every chunk's square against its
    chunks (a local layer's partial last chunk padded); reversible layers run each layer's forward again in the
    backward pass, its last matmuls included, but the hash (its buckets kept)."""
    s, L = SHAPES, 12
    H, hd, C, nb, n, Cl, nbl = s["H"], s["hd"], s["C"], s["nb"], s["n"], s["Cl"], s["nbl"]

    def hw(pattern, length=L, **kw):
        return maxflops.count(_config(s, pattern, mode="prefill", max_target_length=length, **kw)).hardware_components

    assert hw("O")["core_attention"] == 4 * H * hd * lookback(L, Cl, nbl)
    assert hw("O", 13, attention_impl="dense")["core_attention"] == 4 * H * hd * 15 * Cl * (1 + nbl)
    assert hw("O", 3, attention_impl="dense")["core_attention"] == 4 * H * hd * 9
    assert hw("E")["core_attention"] == hw("E", attention_impl="dense")["core_attention"] == \
        4 * H * hd * n * L * C * (1 + nb)
    assert hw("E", 4)["core_attention"] == 4 * H * hd * 10 and hw("E", 4)["lsh_hash"] == 0
    assert hw("E", 4, attention_impl="dense")["core_attention"] == 4 * H * hd * 16
    fwd = maxflops.count(_config(s, "OE", mode="prefill", max_target_length=L)).hardware_components
    rev = maxflops.count(_config(s, "OE", mode="train", max_target_length=L, remat_policy="reversible"))
    full = maxflops.count(_config(s, "OE", mode="train", max_target_length=L, remat_policy="full"))
    for k, v in fwd.items():
        want = 3 * v if k == "logits" else v if k == "lsh_hash" else 4 * v
        assert rev.hardware_components[k] == want, k
    # a rematerialized ('full') layer keeps its last matmul (the FFN's down projection) and recomputes the hash
    down = 2 * s["F"] * s["D"] * L * 2
    assert full.hardware_components["mlp"] == rev.hardware_components["mlp"] - down
    assert full.hardware_components["lsh_hash"] == 2 * fwd["lsh_hash"]
    assert rev.components == full.components  # (model FLOPs know no remat)


def test_the_head_reads_both_streams():
    s, L = SHAPES, 8
    b = maxflops.count(_config(s, mode="prefill", max_target_length=L, head_input_dim=2 * s["D"]))
    assert b.components["logits"] == 2 * 2 * s["D"] * 8 * L
    t = maxflops.decode_traffic(_config(s, mode="decode", head_input_dim=2 * s["D"], weight_bytes=1))
    plain = maxflops.decode_traffic(_config(s, mode="decode", weight_bytes=1))
    assert t.components["weights"] - plain.components["weights"] == s["D"] * 8


@pytest.mark.parametrize("extra, match", [
    (dict(attention_type="mla"), r"'attention_type'"),
    (dict(causal=False), r"'causal'"),
    (dict(num_kv_heads=1), r"'num_kv_heads'"),
    (dict(attention_impl="blocked"), r"'attention_impl'"),
    (dict(attention_output_gate=True), r"'attention_output_gate'"),
    (dict(convention="maxtext"), r"'convention': 'maxtext'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    with pytest.raises(ValueError, match=match):
        _config(SHAPES, **{"max_target_length": 8, **extra})


def test_a_sequence_of_ragged_chunks_is_refused_and_decode_is_not():
    cfg = _config(SHAPES, mode="prefill", max_target_length=16)
    with pytest.raises(ValueError, match="'max_target_length' .or a document of segment_lengths.: a sequence of 6 "):
        maxflops.count(cfg, segment_lengths=[4, 6])
    for mode in ("prefill", "train"):
        with pytest.raises(ValueError, match="a sequence of 10 tokens through LSH"):
            maxflops.count(_config(SHAPES, mode=mode, max_target_length=10))
    maxflops.count(cfg, segment_lengths=[3, 8])
    maxflops.count(_config(SHAPES, mode="decode", per_device_batch_size=2), segment_lengths=[5, 6])


def test_the_keys_on_a_model_without_reformer_layers_are_said():
    with pytest.warns(maxflops.InertKeyWarning, match="lsh_chunk_length"):
        maxflops.model_config(num_decoder_layers=2, lsh_chunk_length=32)


def _arrays(*shapes):
    import jax.numpy as jnp

    return [jnp.asarray(RNG.normal(size=s), jnp.float32) for s in shapes]


@pytest.mark.slow
@pytest.mark.parametrize("L", [4, 12])
def test_the_kernels_run_transformers_lsh_and_xla_counts_them_as_the_engine_prices_them(L):
    import jax
    import jax.numpy as jnp

    from maxflops.families.attention.proof import attention
    from maxflops.families.reformer.proof import local_attention, lsh_attention, lsh_hash
    from maxflops.xla.hlo import count_lowered

    Bt, H, hd, C, nb, n, w = 2, 2, 3, 4, 1, 2, 3
    qk, v, rot, q, k = _arrays((Bt, L, H, hd), (Bt, L, H, hd), (H, hd, n, w), (Bt, L, H, hd), (Bt, L, H, hd))
    # local attention: the attended keys whichever the form; with a chunk as long as the sequence, causal attention
    assert jnp.allclose(local_attention(q, k, v, C, nb, "ideal"), local_attention(q, k, v, C, nb, "dense"), atol=1e-5)
    assert jnp.allclose(local_attention(q, k, v, L, 0, "ideal"), attention(q, k, v), atol=1e-5)
    # LSH with every key in one bucket: a query's chunk and the one before it, causal and off itself (the first
    # query keeps only itself)
    one = jnp.zeros((Bt, H, n, L), jnp.int32)
    if L > C:
        got = lsh_attention(qk, v, one, C, nb)
        i = 9  # chunk 2 of 4: keys 4..8 (its own key masked)
        kn = qk[:, 4:9] / jnp.linalg.norm(qk[:, 4:9], axis=-1, keepdims=True) / np.sqrt(hd)
        p = jax.nn.softmax(jnp.einsum("bhd,bkhd->bhk", qk[:, i], kn), -1)
        assert jnp.allclose(got[:, i], jnp.einsum("bhk,bkhd->bhd", p, v[:, 4:9]), atol=1e-4)

    def lsh(qk, v, rot, impl):
        with jax.named_scope("core_attention"):
            return lsh_attention(qk, v, lsh_hash(qk, rot) if L > C else None, C, nb, impl)

    def local(q, k, v, impl):
        with jax.named_scope("core_attention"):
            return local_attention(q, k, v, C, nb, impl)

    names = ["lsh_hash", "core_attention"]
    for impl in ("ideal", "dense"):
        for train in (False, True):
            for pattern, fn, args in (("E", lsh, (qk, v, rot)), ("O", local, (q, k, v))):
                f = (lambda *a, fn=fn: fn(*a, impl))
                if train:
                    f = jax.grad(lambda *a, f=f: jnp.sum(f(*a) ** 2), argnums=(0, 1) if pattern == "E" else (0, 1, 2))
                got = count_lowered(f, *args).by_scope(names)
                b = maxflops.count(_config(dict(SHAPES, H=H, hd=hd, C=C, nb=nb, n=n, w=w, Cl=C, nbl=nb), pattern,
                                           ffn_layer_pattern="-", mode="train" if train else "prefill",
                                           max_target_length=L, per_device_batch_size=Bt, attention_impl=impl))
                want = {k_: b.hardware_components.get(k_, 0) for k_ in names}
                assert {k_: got[k_] for k_ in names} == want, (pattern, impl, train)


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs,docs", [
    ("prefill", {}, ()), ("train", {}, ()), ("train", dict(remat_policy="full"), ()),
    ("prefill", dict(attention_impl="dense"), ()), ("prefill", {}, (4, 3, 8)),
    ("train", dict(attention_impl="dense"), (8, 2)),
    ("train", dict(flash_backward_recompute=True), ()),
], ids=["prefill", "train", "remat", "dense", "packed-prefill", "packed-dense-train", "flash"])
def test_a_flax_model_with_reformer_layers_equals_xla(mode, knobs, docs):
    base = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="OEG", emb_dim=32, num_query_heads=4,
                                 num_kv_heads=4, head_dim=8, mlp_dim=48, mlp_activations=("relu",), vocab_size=300,
                                 lsh_chunk_length=4, local_chunk_length=3, lsh_num_hashes=2, lsh_hash_width=2,
                                 max_target_length=12)
    engine, xla = engine_and_xla(base, mode, knobs, docs)
    assert engine == xla


def test_the_flax_model_refuses_what_it_does_not_build():
    pytest.importorskip("jax")
    from maxflops.xla import model as M

    for extra in (dict(remat_policy="reversible"), dict(head_input_dim=64)):
        with pytest.raises(ValueError, match="the Flax model does not build"):
            M.build(_config(SHAPES, max_target_length=8, **extra), abstract=True, mode="train")
