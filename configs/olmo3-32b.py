"""Ai2 OLMo 3 32B: 64 layers of GQA (40 heads of 128, 8 KV heads) with q/k norms, three sliding-window layers (4096
keys) to one full-attention layer, a SwiGLU MLP of 27648; untied embedding and head over 100278 tokens.

Sources: MaxText 0.2.5's configs/models/olmo3-32b.yml (base_emb_dim 5120, base_num_query_heads 40,
base_num_kv_heads 8, base_mlp_dim 27648, base_num_decoder_layers 64, head_dim 128, sliding_window_size 4096,
inhomogeneous_layer_cycle_interval 4, vocab_size 100278; a copy in tests/fixtures/maxtext/); transformers 5.24
modeling_olmo3. MaxText's FLOPs function counts the window layers as global (a quirk its convention carries).
Published: 32B parameters (this config: 32.23B).
"""
from maxflops.config import model_config
from maxflops.loaders.maxtext.model import maxtext_quirks


def get_config():
    return model_config(
        model_name="olmo3-32b",
        num_decoder_layers=64,  # maxtext base_num_decoder_layers
        attention_layer_pattern="LLLG",  # maxtext inhomogeneous_layer_cycle_interval 4
        sliding_window_size=4096,  # maxtext sliding_window_size
        emb_dim=5120,  # maxtext base_emb_dim
        vocab_size=100278,  # maxtext vocab_size
        num_query_heads=40,  # maxtext base_num_query_heads
        num_kv_heads=8,  # maxtext base_num_kv_heads
        head_dim=128,  # maxtext head_dim
        mlp_activations=("silu", "linear"),  # maxtext mlp_activations (SwiGLU)
        mlp_dim=27648,  # maxtext base_mlp_dim
        convention_quirks=maxtext_quirks("olmo3"),  # MaxText's function prices the window layers as global
    )
