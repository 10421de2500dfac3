"""The mixer families, one module each, registered here: everything about a family lives in its module (its pattern
letters and name, its config keys, its model and hardware pricing, its decode bytes, its components and report
label, its proof-side slots); the engine, ``decode_traffic``, the breakdown, the report and the config check read
the registry.

    FAMILIES                    attention (G, L, C; GQA and MLA), dsa (top-k + indexer on MLA 'G' layers),
                                compressed (DeepSeek-V4: S, H, and its window layers), mamba2 (Mamba-2 SSD: M), mamba1 (Mamba-1 selective scan: A), shortconv (LFM2's gated short conv: V),
                                gdn (the gated delta net: D), gdp (the gated delta product: P), kda (Kimi delta attention: K), lightning (lightning
                                attention: N), zamba (Zamba's shared block: Z), cross (cross-attention to image
                                tokens: X), rglru (Griffin's recurrent block: R), rwkv (RWKV-4's time mix: W),
                                msa (MiniMax sparse attention, whole key blocks an indexer picks: B), mlstm (xLSTM's
                                mLSTM: T), qsa (Qwen4-Exp's indexed attention, a tail and whole blocks an indexer
                                picks from pooled keys: Q), reformer (Reformer's LSH attention: E, and its chunked
                                local attention: O), patch (BLT's cross-attention between bytes and patches: Y, U)
    family_of(kind)             the family that prices a plan's LayerKind
    mixer_of(letter, n, c)      (mixer, span, computes_index, ratio) of a pattern letter at 1-based layer n
    LETTERS                     every pattern letter -> its family

Adding a family: see "Adding a model family" in the README.
"""

from __future__ import annotations

from typing import Mapping

from ..components import register
from . import (attention, compressed, cross, dsa, gdn, gdp, kda, lightning, mamba1, mamba2, mlstm, msa, patch, qsa,
               reformer, rglru, rwkv, shortconv, zamba)
from .base import Family, Priced, ffn_width

__all__ = ["FAMILIES", "Family", "Priced", "ffn_width", "family_of", "mixer_of", "projection_of", "letters_in_use",
           "letters_of", "LETTERS",
           "MIXER_LABELS", "MIXER_FAMILY"]

# The registry in the order the families ask for a pattern letter (Family.claims, then name): where two could take a
# layer, the lower claims it (a compressed model's window layers, DSA's 'G' layers before plain attention's).
FAMILIES: tuple[Family, ...] = tuple(sorted(
    (attention.FAMILY, compressed.FAMILY, cross.FAMILY, dsa.FAMILY, gdn.FAMILY, gdp.FAMILY, kda.FAMILY,
     lightning.FAMILY, mamba1.FAMILY, mamba2.FAMILY, mlstm.FAMILY, msa.FAMILY, patch.FAMILY, qsa.FAMILY,
     reformer.FAMILY, rglru.FAMILY, rwkv.FAMILY, shortconv.FAMILY, zamba.FAMILY), key=lambda f: (f.claims, f.name)))

for _family in FAMILIES:
    register(*_family.components)

def letters_of(families) -> dict:
    """Every pattern letter -> the family that declares it; a letter two families declare is refused."""
    out: dict[str, Family] = {}
    for fam in families:
        for letter in fam.letters:
            if letter in out:
                raise ValueError(f"pattern letter {letter!r} declared by families {out[letter].name!r} and "
                                 f"{fam.name!r}")
            out[letter] = fam
    return out


LETTERS = letters_of(FAMILIES)
MIXER_LABELS = {mixer: label for fam in FAMILIES for mixer, label in fam.mixers.items()}
MIXER_FAMILY = {mixer: fam for fam in FAMILIES for mixer in fam.mixers}
_BY_MIXER = MIXER_FAMILY
_BY_PROJECTION = {fam.projection: fam for fam in FAMILIES if fam.projection}


def letters_in_use(c: Mapping) -> str:
    """Every pattern letter a config's layers may carry: the decoder's, the MTP modules' and the parallel mixers'."""
    return c["attention_layer_pattern"] + c["mtp_layer_pattern"] + c["parallel_layer_pattern"]


def family_of(kind) -> Family:
    """The family that prices a layer kind: by its projection where a family owns the projection (compressed, gdn),
    else by its mixer."""
    return _BY_PROJECTION.get(kind.projection) or _BY_MIXER[kind.mixer]


def idle(letter: str, c) -> str:
    """Why a pattern letter's layers are skipped whole (mixer and FFN) under this config (its family's ``idle``
    rule), or "" when they run."""
    fam = LETTERS.get(letter)
    return fam.idle(c) if fam is not None and fam.idle is not None else ""


def mixer_of(letter: str, layer_number: int, c) -> tuple:
    """(mixer, span, computes_index, ratio) of a pattern letter: the first family that takes it in this config."""
    for fam in FAMILIES:
        got = fam.mixer_of(letter, layer_number, c)
        if got is not None:
            return got
    raise ValueError(f"config key 'attention_layer_pattern': unknown letter {letter!r}")


def projection_of(mixer: str, c) -> str:
    """The projection of a layer with this mixer: its family's own (the gated delta net's), else as the config's
    attention type says."""
    return _BY_MIXER[mixer].projection or {"mla": "mla", "compressed": "compressed"}.get(c["attention_type"], "gqa")
