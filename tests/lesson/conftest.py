"""Shared fixtures of the lesson tests: the committed tokenizer and model, loaded once."""

import pytest

from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model


@pytest.fixture(scope="session")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="session")
def model():
    return load_model()
