"""CodeGen: CodeGenConfig, modeling_codegen; GPT-J's layer (multi-head attention of n_embd // n_head per head, here
one fused q/k/v matrix; a plain MLP of n_inner, null: 4 * n_embd, beside it), the same keys and class defaults
(tests/loaders/test_hf_defaults.py holds CodeGenConfig's against them); n_ctx, a context length, no FLOPs effect."""

from __future__ import annotations

import dataclasses

from . import gptj

TYPE = dataclasses.replace(gptj.TYPE, no_effect={**gptj.TYPE.no_effect, "n_ctx": "a context length (no matmul)"})
