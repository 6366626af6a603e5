"""Shared fixtures of the lesson tests: the committed tokenizer and the model the site runs, loaded
once."""

import pytest

from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model
from sitebuild import files


@pytest.fixture(scope="session")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="session")
def model():
    """The committed model as the site ships it, rounded to float16 (``files.site_weights``): the
    model the build's figures and the page use, so a test that recomputes a figure gets its value."""
    return load_model(files.site_model_dir(files.ROOT / "weights"))
