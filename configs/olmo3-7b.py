"""Ai2 OLMo 3 7B: 32 layers of MHA (32 heads of 128, 32 KV heads) with q/k norms, three sliding-window layers (4096
keys) to one full-attention layer, a SwiGLU MLP of 11008 in every layer; untied embedding and head over 100278
tokens.

Sources: MaxText 0.2.5's configs/models/olmo3-7b.yml (base_emb_dim 4096, base_num_query_heads 32, base_num_kv_heads
32, base_mlp_dim 11008, base_num_decoder_layers 32, head_dim 128, sliding_window_size 4096,
inhomogeneous_layer_cycle_interval 4, vocab_size 100278; a copy in tests/fixtures/maxtext/), which agrees with
public transcriptions of the allenai Olmo-3 7B config.json (layer_types three sliding_attention, one
full_attention); transformers 5.24 modeling_olmo3. MaxText's FLOPs function counts the window layers as global
(a quirk its convention carries). Published: 7B parameters (this config: 7.30B).
"""
from maxflops.config import model_config
from maxflops.loaders.maxtext.model import maxtext_quirks


def get_config():
    return model_config(
        model_name="olmo3-7b",
        num_decoder_layers=32,  # maxtext base_num_decoder_layers; HF num_hidden_layers
        attention_layer_pattern="LLLG",  # maxtext inhomogeneous_layer_cycle_interval 4; HF layer_types
        sliding_window_size=4096,  # maxtext sliding_window_size; HF sliding_window
        emb_dim=4096,  # maxtext base_emb_dim; HF hidden_size
        vocab_size=100278,  # maxtext vocab_size
        num_query_heads=32,  # maxtext base_num_query_heads
        num_kv_heads=32,  # maxtext base_num_kv_heads
        head_dim=128,  # maxtext head_dim
        mlp_activations=("silu", "linear"),  # maxtext mlp_activations (SwiGLU)
        mlp_dim=11008,  # maxtext base_mlp_dim
        convention_quirks=maxtext_quirks("olmo3"),  # MaxText's function prices the window layers as global
    )
