"""DeepSeek-V4's compressed attention: closed forms against enumeration of the masks, a whole model rebuilt by hand
from its weight shapes, decode and packed documents, the hardware forms, and bad input."""

import itertools
import random

import numpy as np
import pytest

import maxflops
from maxflops import masks
from maxflops.families.attention import window_unclamped
from maxflops.families.compressed import (blocked_compressed, compressed_blocks, compressed_maxtext,
                                          compressed_topk_maxtext)
from brute import brute_compressed_tiles
from repo import FIXTURES, quietly_inert


# --- the masks, enumerated -------------------------------------------------------------------------------------

def attended(L, W, m, K):
    """Per query t of a length-L sequence: (window keys, visible compressed blocks, attended blocks), from the
    definitions: key j is in the window iff 0 <= t - j < W; block b (L // m blocks are formed) holds tokens up to
    (b+1)m - 1 and is visible iff that token is at or before t; a top-K query attends its K best visible blocks
    (every visible block when K is 0). The indexer's scores are random; only how many it keeps matters."""
    rows = []
    rng = np.random.default_rng(L * 1000 + m)
    for t in range(L):
        window = [j for j in range(L) if 0 <= t - j < W]
        visible = [b for b in range(L // m) if (b + 1) * m - 1 <= t]
        if K:
            scores = rng.random(len(visible))
            chosen = [visible[i] for i in np.argsort(-scores)[:K]]
        else:
            chosen = visible
        rows.append((window, visible, chosen))
    return rows


CASES = [(L, m, K) for L in range(1, 45) for m in (1, 2, 3, 4, 7) for K in (0, 1, 2, 3, 6, 50)]


def test_compressed_pairs_match_enumeration():
    """Partial last blocks (L % m != 0), top-k above and below the visible blocks, ratio 1."""
    for L, m, K in CASES:
        rows = attended(L, 1, m, K)
        visible = sum(len(v) for _, v, _ in rows)
        chosen = sum(len(c) for _, _, c in rows)
        assert masks.compressed_visible(L, m) == visible, (L, m)
        assert (masks.compressed_topk(L, m, K) if K else masks.compressed_visible(L, m)) == chosen, (L, m, K)
        assert compressed_blocks(L, m) == L // m


def test_window_part_matches_enumeration_window_larger_than_sequence():
    for L, W in itertools.product(range(1, 30), (1, 2, 5, 64)):
        assert masks.capped(L, W) == sum(len(w) for w, _, _ in attended(L, W, 4, 0))


def test_vectorized_forms_equal_the_scalar_ones():
    lengths = np.arange(1, 300, dtype=np.int64)
    for m, K in ((4, 3), (7, 1), (128, 512)):
        np.testing.assert_array_equal(masks.compressed_visible(lengths, m),
                                      [masks.compressed_visible(int(L), m) for L in lengths])
        np.testing.assert_array_equal(masks.compressed_topk(lengths, m, K),
                                      [masks.compressed_topk(int(L), m, K) for L in lengths])


def test_new_token_blocks_is_the_last_query_of_a_longer_sequence():
    for kv, m, K in itertools.product(range(0, 40), (1, 3, 4), (0, 1, 2, 9)):
        _, visible, chosen = attended(kv + 1, 1, m, K)[-1]
        assert masks.new_token_blocks(kv, m, K) == len(chosen)


def test_blocked_compressed_matches_tile_enumeration():
    for L, m, bq, bkv in itertools.product((1, 5, 17, 40, 64), (1, 3, 4), (1, 4, 8), (1, 2, 5)):
        assert blocked_compressed(L, m, bq, bkv) == brute_compressed_tiles(L, m, bq, bkv), (L, m, bq, bkv)
    lengths = np.array([17, 40, 3], dtype=np.int64)
    np.testing.assert_array_equal(blocked_compressed(lengths, 4, 8, 2), [brute_compressed_tiles(int(L), 4, 8, 2)
                                                                               for L in lengths])


def test_folded_compressed_tiles_equal_brute_force(monkeypatch):
    """Above ``masks.ENUMERATE_ROWS`` row blocks a length's tiles are folded by their period (``masks._fold``): forced
    for every length here, the fold equals the brute-force tile count."""
    monkeypatch.setattr(masks, "ENUMERATE_ROWS", -1)  # every length folded by its period
    rng = random.Random(17)
    for _ in range(300):
        L, bq, bkv, m = rng.randint(1, 90), rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 7)
        assert blocked_compressed(L, m, bq, bkv) == brute_compressed_tiles(L, m, bq, bkv), (L, m, bq, bkv)


# --- a whole model, rebuilt from its weight shapes ----------------------------------------------------------------

# Every width distinct: D 40, H 6, head 14, KV heads 2, q LoRA 9, 4 output groups of rank 11, window 5, CSA ratio 3,
# HCA ratio 7, top-k 2, indexer 5 heads of 6, FFN 13, 3 mHC streams, vocabulary 17.
TINY = dict(model_name="v4-tiny", attention_type="compressed", attention_layer_pattern="LSHS", num_decoder_layers=4,
            emb_dim=40, num_query_heads=6, num_kv_heads=2, head_dim=14, q_lora_rank=9, o_groups=4, o_lora_rank=11,
            sliding_window_size=5, csa_compress_ratio=3, hca_compress_ratio=7, use_sparse_indexer=True,
            index_topk=2, index_n_heads=5, index_head_dim=6, mlp_dim=13, mhc_expansion_rate=3,
            mhc_hyper_head=True, vocab_size=17, per_device_batch_size=2, max_target_length=23, mode="prefill")

# Every matmul of one token as (input width, output width), read off the weights (not from maxflops.terms).
D, H, HD, NKV, RQ, G, RO, F, S, V = 40, 6, 14, 2, 9, 4, 11, 13, 3, 17
NI, HI = 5, 6
PROJ = [(D, RQ), (RQ, H * HD), (D, NKV * HD)] + [(H * HD // G, RO)] * G + [(G * RO, D)]
COMPRESSOR = {"S": [(D, 2 * HD)] * 2, "H": [(D, HD)] * 2, "L": []}  # kv and gate
INDEXER = [(RQ, NI * HI), (D, NI), (D, 2 * HI), (D, 2 * HI)]  # q, head weights, its own kv and gate
FFN = [(D, F), (D, F), (F, D)]
MHC = [(S * D, 2 * S + S * S), (S, D), (S * S, D)]  # projection; pre contraction over S; residual mix S x S over D
HEAD = [(S * D, S), (D, V)]  # hyper head projection (its weighted sum of the streams is elementwise), logits


def flops(shapes):
    return sum(2 * i * o for i, o in shapes)


def hand_count(letter, L, ratio={"S": 3, "H": 7}, K=2, W=5):
    """One layer, one sequence of length L, forward."""
    m = ratio.get(letter, 1)
    rows = attended(L, W, m, K if letter == "S" else 0)
    keys = sum(len(w) for w, _, _ in rows) + (sum(len(c) for _, _, c in rows) if letter != "L" else 0)
    total = L * (flops(PROJ) + flops(COMPRESSOR[letter]) + flops(FFN) + 2 * flops(MHC))
    total += keys * 2 * H * (HD + HD)  # q.k and p.v per head per attended key
    if letter == "S":
        scored = sum(len(v) for _, v, _ in rows)
        total += L * flops(INDEXER) + scored * (2 * NI * HI + 2 * NI)  # q.k per head, then the head weighting
    return total


def test_tiny_model_equals_its_hand_count_prefill_and_train():
    L = 23
    want = 2 * (sum(hand_count(x, L) for x in "LSHS") + L * flops(HEAD))
    b = maxflops.count(maxflops.model_config(**TINY))
    assert b.total == want and b.hardware_flops == want
    assert [r.mixer for r in b.layers] == ["window", "csa", "hca", "csa", ""]
    # train: 3x everything but the indexer, which gets no gradient without its loss (1x)
    idx = 2 * 2 * (L * flops(INDEXER) + sum(len(v) for _, v, _ in attended(L, 5, 3, 0)) * (2 * NI * HI + 2 * NI))
    t = maxflops.count(maxflops.model_config(**{**TINY, "mode": "train"}))
    assert t.total == 3 * want - 2 * idx
    # with the indexer's KL loss: projections 2x (their inputs are detached), scoring 3x
    kl = maxflops.count(maxflops.model_config(**{**TINY, "mode": "train", "indexer_loss_scaling_factor": 0.1}))
    proj = 2 * 2 * L * flops(INDEXER)
    assert kl.total == 3 * want - proj


def test_tiny_model_decode_is_the_difference_of_two_prefills():
    cfg = maxflops.model_config(**TINY)
    for kv in (0, 1, 4, 6, 13, 20, 22):
        dec = maxflops.count(cfg, mode="decode", decode_kv_length=kv)
        grow = (maxflops.count(cfg, max_target_length=kv + 1).total
                - (maxflops.count(cfg, max_target_length=kv).total if kv else 0))
        assert dec.total == grow, kv


def test_packed_documents_count_as_separate_sequences():
    cfg = maxflops.model_config(**{**TINY, "max_target_length": 64, "per_device_batch_size": 1})
    docs = [5, 21, 1, 7, 30]
    packed = maxflops.count(cfg, segment_lengths=docs)
    alone = sum(maxflops.count(cfg, max_target_length=L).total for L in docs)
    assert packed.total == alone
    assert packed.total == sum(sum(hand_count(x, L) for x in "LSHS") + L * flops(HEAD) for L in docs)


def test_hardware_forms():
    """dot_product (MaxText on CPU) and eager transformers: the full square plus every formed block, and the
    indexer against every formed block; gather_k: min(blocks, K) per query; blocked: tiles."""
    L, B = 23, 2
    base = maxflops.count(maxflops.model_config(**TINY))
    dense = maxflops.count(maxflops.model_config(**TINY, attention_impl="dense", dsa_impl="dense"))
    per_key = 2 * H * 2 * HD
    C = {"S": L // 3, "H": L // 7}
    want = 0
    for x in "LSHS":
        rows = attended(L, 5, {"S": 3, "H": 7}.get(x, 1), 2 if x == "S" else 0)
        ideal = sum(len(w) for w, _, _ in rows) + (sum(len(c) for _, _, c in rows) if x != "L" else 0)
        want += B * per_key * (L * (L + C.get(x, 0)) - ideal)
        if x == "S":
            want += B * (2 * NI * HI + 2 * NI) * (L * C["S"] - sum(len(v) for _, v, _ in rows))
    assert dense.hardware_flops - base.hardware_flops == want
    assert dense.total == base.total  # model FLOPs do not move
    gather = maxflops.count(maxflops.model_config(**TINY, dsa_impl="gather_k"))
    topk = sum(len(c) for _, _, c in attended(L, 5, 3, 2))
    assert gather.hardware_flops - base.hardware_flops == 2 * B * per_key * (L * min(C["S"], 2) - topk)
    blocked = maxflops.count(maxflops.model_config(**TINY, attention_impl="blocked", attention_block_q=8,
                                                   attention_block_kv=4))
    hca = sum(len(v) for _, v, _ in attended(L, 5, 7, 0))
    scored = sum(len(v) for _, v, _ in attended(L, 5, 3, 0))
    want = B * per_key * (4 * (masks.blocked("window", 5, L, 8, 4) - masks.capped(L, 5))
                          + brute_compressed_tiles(L, 7, 8, 4) - hca)
    want += 2 * B * (2 * NI * HI + 2 * NI) * (brute_compressed_tiles(L, 3, 8, 4) - scored)
    assert blocked.hardware_flops - base.hardware_flops == want


def test_mtp_module_takes_its_own_letter_and_the_hyper_head():
    cfg = maxflops.model_config(**{**TINY, "mode": "train", "mtp_num_layers": 1, "attention_layer_pattern": "LSHS",
                                  "mtp_layer_pattern": "L"})
    b = maxflops.count(cfg)
    assert [r.mixer for r in b.layers] == ["window", "csa", "hca", "csa", "window", ""]
    mtp = b.layers[4]
    L = 23
    eh = 2 * (2 * D) * D
    want = 3 * 2 * (hand_count("L", L) + L * (eh + flops(HEAD)))
    assert mtp.total == want


def test_convention_maxtext_formulas():
    """MaxText's DeepSeek-V4 function's pair counts, from its formulas (window T*W - W^2/2, HCA T^2/(2m), CSA
    T^2/m * (k/N - (k/N)^2/2), the indexer T^2/(2*4)) on a uniform batch."""
    from fractions import Fraction
    from maxflops.sequences import Uniform

    for T, W, K in ((4096, 128, 512), (1000, 128, 512), (2048, 32, 16), (30, 64, 5), (3, 8, 2)):
        seqs = Uniform(T, 2)
        assert window_unclamped(seqs, W) == 2 * (Fraction(T * W) - Fraction(W * W, 2))
        assert compressed_maxtext(seqs, 128) == 2 * Fraction(T * T, 256)
        N = T // 4
        k = min(K, N)
        ratio = Fraction(k, N) - Fraction(k * k, 2 * N * N) if N else 0
        assert compressed_topk_maxtext(seqs, 4, K) == 2 * Fraction(T * T, 4) * ratio


@pytest.mark.parametrize("bad, match", [
    (dict(attention_type="mla"), r"'attention_layer_pattern': 'LSHS': 'S' and 'H' layers are compressed attention"),
    (dict(o_groups=5), r"'o_groups': 5 does not divide num_query_heads x head_dim = 84"),
    (dict(o_lora_rank=0), r"'o_lora_rank': o_groups=4 and o_lora_rank=0: set both"),
    (dict(index_topk=0), r"'index_topk': must be positive, got 0"),
    (dict(csa_compress_ratio=0), r"'csa_compress_ratio': must be positive, got 0"),
    (dict(sliding_window_size=0), r"'sliding_window_size': must be >= 1 when attention_layer_pattern='LSHS' has"),
    (dict(mtp_layer_pattern="J"), r"'mtp_layer_pattern': 'J' has unknown letter 'J'"),
    (dict(mtp_num_layers=1, mtp_layer_pattern="D"), r"'D' layers are not built with attention_type='compressed'"),
    (dict(attention_layer_pattern="LSDS"), r"'D' layers are not built with attention_type='compressed'"),
    (dict(causal=False), r"'causal': False: compressed attention"),
])
def test_bad_input_one_clear_line(bad, match):
    with pytest.raises(ValueError, match=match):
        maxflops.model_config(**{**TINY, **bad})


# --- loaders ----------------------------------------------------------------------------------------------------



def test_transformers_class_defaults_load_with_their_own_layer_types():
    """DeepseekV4Config() as transformers saves it: HCA on layers 0, 1 and then every even layer, CSA on the odd
    ones from 3 (its default matches no published checkpoint), one MTP module (window only)."""
    from maxflops import loaders
    from maxflops.loaders import NOT_UNDERSTOOD

    loaded = loaders.load_hf_config(FIXTURES / "hf_transformers" / "class_defaults" / "deepseek_v4.json")
    assert NOT_UNDERSTOOD not in loaded.ignored.values()
    o = loaded.overrides
    assert o["attention_layer_pattern"] == "HH" + "".join("S" if i % 2 else "H" for i in range(41))
    assert o["mtp_layer_pattern"] == "L"
    assert o["mtp_num_layers"] == 1 and o["csa_compress_ratio"] == 4 and o["hca_compress_ratio"] == 128
    shipped = maxflops.load_config("deepseek4-284b")
    mine = maxflops.model_config(**{**o, "model_name": "deepseek4-284b"})
    want = quietly_inert(lambda: maxflops.model_config(  # (every key of the shipped config, its inert ones too)
        **{**shipped.to_dict(), "attention_layer_pattern": o["attention_layer_pattern"], "mtp_num_layers": 1,
           "convention_knobs_from": "exact"}))
    assert [r.mixer for r in maxflops.count(mine).layers][-2:] == ["window", ""]  # the MTP module, then the head
    assert maxflops.count(mine).total == maxflops.count(want).total


def _write_json(tmp_path, **changes):
    import json

    d = json.loads((FIXTURES / "hf" / "deepseek4-284b.json").read_text())
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    p = tmp_path / "config.json"
    p.write_text(json.dumps(d))
    return p


def test_hf_bad_compress_ratios_are_one_clear_line(tmp_path):
    from maxflops import loaders

    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*ratio 16 is none of 0 \(sliding window\), 4 "
                                         r"\(CSA\), 128 \(HCA\)"):
        loaders.load_hf_config(_write_json(tmp_path, compress_ratios=[0, 16] + [4] * 42))
    # as DeepseekV4Config does: the legacy list names the layer kinds, compress_rates gives their ratios
    o = loaders.load_hf_config(_write_json(tmp_path, compress_rates={"compressed_sparse_attention": 8})).overrides
    assert o["csa_compress_ratio"] == 8 and o["attention_layer_pattern"] == "LL" + "SH" * 20 + "S"
    assert o["mtp_layer_pattern"] == "L"
    # the MTP module's letter comes from the checkpoint's list; the maxtext convention's quirks come with the file
    o = loaders.load_hf_config(_write_json(tmp_path, compress_ratios=[0, 0] + [4, 128] * 20 + [4, 4])).overrides
    assert o["attention_layer_pattern"] == "LL" + "SH" * 20 + "S" and o["mtp_layer_pattern"] == "S"
    assert "maxtext:window_pairs=unclamped" in o["convention_quirks"]
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*has 3 entries for num_hidden_layers=43"):
        loaders.load_hf_config(_write_json(tmp_path, compress_ratios=[0, 4, 128]))
    with pytest.raises(ValueError, match=r"key 'layer_types' = <absent>: DeepSeek-V4 needs its per-layer attention"):
        loaders.load_hf_config(_write_json(tmp_path, compress_ratios=None))
    with pytest.raises(ValueError, match=r"key 'index_topk' = 0: must be >= 1"):
        loaders.load_hf_config(_write_json(tmp_path, index_topk=0))


def test_maxtext_bad_compress_ratios_are_one_clear_line():
    from maxflops.maxtext import from_maxtext
    import json

    base = json.loads((FIXTURES / "maxtext_real" / "maxtext_base_keys.json").read_text())
    model = json.loads((FIXTURES / "maxtext_real" / "maxtext_models.json").read_text())["models"]["deepseek4-tiny"]
    keys = {**base, **model["keys"]}
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*has 42 entries for num_decoder_layers=43"):
        from_maxtext({**keys, "compress_ratios": keys["compress_ratios"][:-1], "scan_layers": False})
    # scanned (MaxText's default): the prefix as listed, then (128, 4) pairs, whatever the rest of the list says
    assert from_maxtext({**keys, "base_num_decoder_layers": 5, "num_decoder_layers": 5}).attention_layer_pattern == \
        "LLSHS"
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*builds \[0, 0, 4, 128, 4, .*set scan_layers=False"):
        from_maxtext({**keys, "compress_ratios": [0, 0, 4] + [4, 128] * 20})
    assert from_maxtext({**keys, "compress_ratios": [0, 0, 4] + [4, 128] * 20, "scan_layers": False}) \
        .attention_layer_pattern == "LLS" + "SH" * 20
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*other 41 in \(128, 4\) pairs"):
        from_maxtext({**keys, "first_num_hash_layers": 2})
    with pytest.raises(ValueError, match=r"key 'mtp_num_layers' = 1: MaxText refuses MTP for decoder_block"):
        from_maxtext({**keys, "mtp_num_layers": 1})
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*entry 1 is 2: a ratio is 0"):
        from_maxtext({**keys, "compress_ratios": [0, 2] + keys["compress_ratios"][2:]})
    with pytest.raises(ValueError, match=r"key 'compress_ratios' = .*heavily compressed layers of ratios \[64, 128\]"):
        from_maxtext({**keys, "compress_ratios": [0, 64] + keys["compress_ratios"][2:]})
    with pytest.raises(ValueError, match=r"MaxText config: key 'indexer_topk' = 0: must be >= 1"):
        from_maxtext({**keys, "indexer_topk": 0})


def test_shipped_config_reproduces_maxtexts_function_at_every_recorded_case():
    """configs/deepseek4-284b.py under convention='maxtext' gives MaxText 0.2.5's own triple for its deepseek4-284b
    at each recorded (batch, length, accumulation), lengths below the window and not multiples of 4 or 128
    included (the exact count differs at every one)."""
    import json
    import math

    cases = json.loads((FIXTURES / "maxtext_real" / "maxtext_models.json").read_text())["models"]["deepseek4-284b"]
    assert len(cases["cases"]) == 9
    for case in cases["cases"]:
        a = case["args"]
        step = dict(per_device_batch_size=a["per_device_batch_size"], max_target_length=a["max_target_length"],
                    gradient_accumulation_steps=a["gradient_accumulation_steps"])
        b = maxflops.count(maxflops.load_config("deepseek4-284b", convention="maxtext", **step))
        got = [b.total / 1e12, b.learnable_weight / 1e12, b.attention / 1e12]
        assert all(math.isclose(x, y, rel_tol=1e-12) for x, y in zip(got, case["tflops"])), (a, got, case["tflops"])
        assert maxflops.count(maxflops.load_config("deepseek4-284b", **step)).total != b.total


def test_review_fixes():
    """Blocked decode never prices blocks that do not exist; indexer_flops=False drops a CSA layer's indexer too;
    a huge top-k with packed documents is exact (no overflow); bad combinations are one clear line."""
    cfg = maxflops.model_config(**TINY)
    dense = maxflops.count(cfg, mode="decode", decode_kv_length=40, attention_impl="dense").hardware_components
    blocked = maxflops.count(cfg, mode="decode", decode_kv_length=40, attention_impl="blocked",
                             attention_block_kv=512).hardware_components
    assert blocked["indexer_score"] == dense["indexer_score"]  # every cached block: (40 + 1) // 3 = 13, not 512
    train = maxflops.model_config(**{**TINY, "mode": "train"})
    assert "indexer_score" not in maxflops.count(train, indexer_flops=False).components
    huge = maxflops.count(cfg, segment_lengths=[5, 21, 1], index_topk=2 ** 62)
    assert huge.total == maxflops.count(cfg, segment_lengths=[5, 21, 1], index_topk=30).total  # >= every block
    for bad, match in ((dict(mhc_expansion_rate=1), r"'mhc_hyper_head': True needs mHC streams"),
                       (dict(num_kv_shared_layers=1), r"'num_kv_shared_layers': 1 is not modelled"),
                       (dict(global_head_dim=16), r"'global_head_dim': 16 is not modelled")):
        with pytest.raises(ValueError, match=match):
            maxflops.model_config(**{**TINY, **bad})


def test_mhc_remat_keeps_a_saved_down_projection():
    """With mHC the FFN's down projection is recomputed under remat (its output is weighted per token), unless the
    policy saves it ('mlpwo')."""
    cfg = maxflops.model_config(**{**TINY, "mode": "train"})
    none = maxflops.count(cfg, remat_policy="none").hardware_components["mlp"]
    full = maxflops.count(cfg, remat_policy="full").hardware_components["mlp"]
    save_wo = maxflops.count(cfg, remat_policy="save_dot_except_mlpwi").hardware_components["mlp"]
    L, B = 23, 2
    up, down = 2 * 2 * D * F * L * B, 2 * F * D * L * B  # per layer, the two up (gate) projections and the down one
    assert full - none == 4 * (up + down) and save_wo - none == 4 * up


def test_a_compressor_that_forms_no_block_is_dead_work():
    """Where no sequence of the step reaches a layer's ratio, nothing reads its compressor (nor a CSA layer's
    indexer): a compiled program drops them (dead_compressor='eliminated', the default), an eager one projects every
    token forward and runs no backward ('forward'). Model FLOPs price every weight matmul per token either way."""
    B = 2
    per_token = {"S": flops(COMPRESSOR["S"]) + flops(INDEXER), "H": flops(COMPRESSOR["H"])}
    for L, dead in ((2, "SH"), (3, "H"), (6, "H"), (7, ""), (23, "")):  # ratios 3 (S) and 7 (H)
        waste = B * L * sum(per_token[x] * "LSHS".count(x) for x in dead)
        for mode in ("prefill", "train"):
            base = {**TINY, "max_target_length": L, "mode": mode}
            keep = maxflops.count(maxflops.model_config(**base, dead_compressor="forward"))
            drop = maxflops.count(maxflops.model_config(**base))
            assert keep.total == drop.total, (L, mode)  # model FLOPs do not move
            assert keep.hardware_flops - drop.hardware_flops == waste, (L, mode)  # the forward, once
        # a dead layer's compressor has no component row at all when dropped
        rows = maxflops.count(maxflops.model_config(**{**TINY, "max_target_length": L, "mode": "train"})).layers
        for row, letter in zip(rows, "LSHS"):
            assert ("compressor" in row.hardware_components) == (letter in "SH" and letter not in dead), (L, letter)
    # packed documents: one long enough anywhere in the step keeps every compressor alive
    cfg = maxflops.model_config(**{**TINY, "max_target_length": 16, "per_device_batch_size": 1, "mode": "train"})
    short = maxflops.count(cfg, segment_lengths=[2, 2, 2])
    mixed = maxflops.count(cfg, segment_lengths=[2, 7, 2])
    assert "compressor" not in short.hardware_components
    assert mixed.hardware_components["compressor"] == 3 * 11 * (2 * flops(COMPRESSOR["S"]) + flops(COMPRESSOR["H"]))
