"""A tiny random pretrained encoder for the fine-tuning tests (the optional train extra: PyTorch and
transformers, imported here at module level, so only tests that have checked for them import this)."""

from __future__ import annotations

from pathlib import Path

import torch
import transformers

from tests.neural_tiny import write_tiny_tokenizer


def write_tiny_base(directory: Path) -> Path:
    """Write a tiny random BERT (dropout 0.1, BertConfig's default) and a tiny word-piece tokenizer to
    ``directory`` in the Hugging Face format ``dualdecomp train --kind neural --base`` reads."""
    vocab = write_tiny_tokenizer(directory / "tokenizer.json")
    config = transformers.BertConfig(vocab_size=vocab, hidden_size=8, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=16, max_position_embeddings=32)
    assert config.hidden_dropout_prob > 0 and config.attention_probs_dropout_prob > 0
    torch.manual_seed(0)
    transformers.BertModel(config, add_pooling_layer=False).save_pretrained(directory)
    return directory
