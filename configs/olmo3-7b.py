"""Ai2 OLMo 3 7B: 32 layers of MHA (32 heads of 128, 32 KV heads) with q/k norms, three sliding-window layers (4096
keys) to one full-attention layer, a SwiGLU MLP of 11008 in every layer; untied embedding and head.

Sources: public transcriptions of the allenai Olmo-3 7B config.json (model_type olmo3, hidden_size 4096,
num_attention_heads 32, num_key_value_heads 32, sliding_window 4096, layer_types three sliding_attention then one
full_attention, repeating; rope only: YaRN on the full layers), and OLMo 2 7B's config.json for the two widths the
transcriptions at hand did not show (intermediate_size 11008, vocab_size 100352: the padded Dolma 2 tokenizer
table); transformers 5.24 modeling_olmo3. Published: 7B parameters (this config: 7.30B). The HF loader reads an
olmo3 file directly (`--model=path/config.json`): prefer it when the file is at hand.
"""
from maxflops.config import model_config


def get_config():
    return model_config(
        model_name="olmo3-7b",
        num_decoder_layers=32,  # num_hidden_layers
        attention_layer_pattern="LLLG",  # layer_types: sliding x 3, full
        sliding_window_size=4096,  # sliding_window
        emb_dim=4096,  # hidden_size
        vocab_size=100352,  # vocab_size (as OLMo 2 7B)
        num_query_heads=32,  # num_attention_heads
        num_kv_heads=32,  # num_key_value_heads
        head_dim=128,  # hidden_size / num_attention_heads
        mlp_activations=("silu", "linear"),  # SwiGLU
        mlp_dim=11008,  # intermediate_size (as OLMo 2 7B)
    )
