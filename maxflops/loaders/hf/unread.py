"""The model types of transformers 5.24's causal-LM mapping the house does not read, each with the one line a user
gets: what the type is when it is no decoder-only language model (``NOT_DECODER``), or the form maxflops does not
price yet (``NEEDS``: the mixers and blocks of the issue that adds them). A type of the mapping in neither, and with
no module in ``models/``, is refused as not read yet. tests/loaders/test_hf_zoo.py holds these lists against the zoo's
fixture (every type of the mapping is read and exact against torch, or here)."""

from __future__ import annotations

# encoders, encoder-decoders, speech and audio models, drafters: maxflops counts decoder-only LMs
NOT_DECODER = {
    'bart': 'encoder-decoder (BartForCausalLM is the decoder half, with cross-attention layers)',
    'bert': 'encoder (BertLMHeadModel: a bidirectional encoder stack run as a decoder with a causal mask)',
    'bert-generation': 'encoder (BertGenerationDecoder: a bidirectional encoder stack run as a decoder with a causal '
                       'mask)',
    'big_bird': 'encoder (BigBirdForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'bigbird_pegasus': 'encoder-decoder (BigBirdPegasusForCausalLM is the decoder half, with cross-attention layers)',
    'blenderbot': 'encoder-decoder (BlenderbotForCausalLM is the decoder half, with cross-attention layers)',
    'blenderbot-small': 'encoder-decoder (BlenderbotSmallForCausalLM is the decoder half, with cross-attention layers)',
    'camembert': 'encoder (CamembertForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'data2vec-text': 'encoder (Data2VecTextForCausalLM: a bidirectional encoder stack run as a decoder with a causal '
                     'mask)',
    'electra': 'encoder (ElectraForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'ernie': 'encoder (ErnieForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'gemma4_assistant': "speculative-decoding drafter (Gemma4AssistantForCausalLM): runs on the target model's hidden "
                        'states and shared KV cache, not on token ids',
    'gemma4_unified_assistant': 'speculative-decoding drafter (Gemma4UnifiedAssistantForCausalLM): runs on the target '
                                "model's hidden states and shared KV cache, not on token ids",
    'git': 'image-to-text (GitForCausalLM): BERT-style encoder layers with a causal text mask around an image encoder',
    'marian': 'encoder-decoder (MarianForCausalLM is the decoder half, with cross-attention layers)',
    'mbart': 'encoder-decoder (MBartForCausalLM is the decoder half, with cross-attention layers)',
    'megatron-bert': 'encoder (MegatronBertForCausalLM: a bidirectional encoder stack run as a decoder with a causal '
                     'mask)',
    'moshi': 'speech-text model (MoshiForCausalLM): text and audio codebook streams, a depth decoder and an '
             'audio codec',
    'musicgen': 'audio: text-to-music decoder (MusicgenForCausalLM) over EnCodec codebook streams, cross-attending a '
                'text encoder',
    'musicgen_melody': 'audio: text-to-music decoder (MusicgenMelodyForCausalLM) over EnCodec codebook streams with a '
                       'chroma prefix',
    'mvp': 'encoder-decoder (MvpForCausalLM is the decoder half, with cross-attention layers)',
    'pegasus': 'encoder-decoder (PegasusForCausalLM is the decoder half, with cross-attention layers)',
    'plbart': 'encoder-decoder (PLBartForCausalLM is the decoder half, with cross-attention layers)',
    'prophetnet': 'encoder-decoder (ProphetNetForCausalLM is the decoder half: n-gram predicting streams, cross-'
                  'attention)',
    'rembert': 'encoder (RemBertForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'roberta': 'encoder (RobertaForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'roberta-prelayernorm': 'encoder (RobertaPreLayerNormForCausalLM: a bidirectional encoder stack run as a decoder '
                            'with a causal mask)',
    'roc_bert': 'encoder (RoCBertForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'roformer': 'encoder (RoFormerForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'trocr': 'encoder-decoder OCR (TrOCRForCausalLM is the text decoder half of a vision encoder-decoder, cross-'
             'attention)',
    'whisper': 'encoder-decoder speech model (WhisperForCausalLM is the decoder half, for assisted decoding)',
    'xlm': "encoder (XLMWithLMHeadModel: XLM's MLM/CLM transformer encoder with language embeddings)",
    'xlm-roberta': 'encoder (XLMRobertaForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
    'xlm-roberta-xl': 'encoder (XLMRobertaXLForCausalLM: a bidirectional encoder stack run as a decoder with a causal '
                      'mask)',
    'xlnet': 'permutation LM (XLNetLMHeadModel: two-stream relative attention with memory), not a causal decoder',
    'xmod': 'encoder (XmodForCausalLM: a bidirectional encoder stack run as a decoder with a causal mask)',
}

# decoder LMs whose layers need a mixer or block maxflops lacks (the mapping's, and published types of remote code)
NEEDS: dict = {}


def why_not(model_type: str) -> str | None:
    """The reason a type of the mapping is not read, or None for a type the mapping lacks."""
    if model_type in NOT_DECODER:
        return f"not a decoder-only language model: {NOT_DECODER[model_type]}; maxflops counts decoder-only LMs"
    if model_type in NEEDS:
        return f"not read: it needs {NEEDS[model_type]}, which maxflops does not price yet"
    return None
