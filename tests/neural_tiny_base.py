"""Tiny random pretrained encoders for the fine-tuning tests (the optional train extra: PyTorch and
transformers, imported here at module level, so only tests that have checked for them import this)."""

from __future__ import annotations

from pathlib import Path

import torch
import transformers

from tests.neural_tiny import write_tiny_tokenizer


def write_tiny_base(directory: Path, model_type: str = "bert", dropout: float = 0.1) -> Path:
    """Write a tiny random BERT or MPNet (``model_type``; dropout 0.1, the configs' default) and a tiny
    word-piece tokenizer with that architecture's special pieces to ``directory``, in the Hugging Face
    format ``dualdecomp train --kind neural --base`` reads."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = write_tiny_tokenizer(directory / "tokenizer.json", model_type=model_type)
    sizes = dict(vocab_size=vocab, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=16, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    if model_type == "mpnet":  # positions start after the padding piece (1): 32 usable
        config = transformers.MPNetConfig(**sizes, max_position_embeddings=34, pad_token_id=1,
                                          relative_attention_num_buckets=32)
        model_class = transformers.MPNetModel
    else:
        config = transformers.BertConfig(**sizes, max_position_embeddings=32)
        model_class = transformers.BertModel
    torch.manual_seed(0)
    model_class(config, add_pooling_layer=False).save_pretrained(directory)
    return directory
