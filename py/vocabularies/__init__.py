"""Real tokenizers' vocabularies for the masker at scale: OpenAI's ``o200k_base`` (199,998
tokens) and ``cl100k_base`` (100,256), read from the npm package ``js-tiktoken`` (MIT licence)
and shipped as a compact binary (``store``), with their byte-level BPE encoder in pure Python
(``encoder``: the pre-tokenizer of ``pretokenize`` plus the merges). The mini-GPT's own
tokenizer is ``minigpt``'s; these vocabularies come with no model, only masks.
"""

from .encoder import BpeEncoder
from .load import NAMES, load
from .store import Vocabulary, pack, read_js_tiktoken, unpack

__all__ = ["BpeEncoder", "NAMES", "Vocabulary", "load", "pack", "read_js_tiktoken", "unpack"]
