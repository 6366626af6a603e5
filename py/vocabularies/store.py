"""A tokenizer's vocabulary as data: read from ``js-tiktoken``'s rank files, written as a compact
binary with a JSON manifest, and read back.

The binary is ``n`` lengths (uint8, one per token id) followed by every token's bytes in id order:
``o200k_base`` is 1.6 MB (200 KB of lengths), against 2.3 MB for the base64 text it comes from.
The manifest holds what the encoder needs besides (the pre-tokenizer's pattern, the special
tokens), the binary's size and sha256, and the source package and version.

Token id = BPE rank in tiktoken's encodings (the rank of a merge is the id of the token it makes),
so a list of bytes indexed by id is the whole of the ranks. A rank file with a gap in its ids is
refused (``ValueError``): neither vocabulary has one.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Vocabulary:
    """A byte-level BPE vocabulary: ``tokens[i]`` is token id i's bytes; ``pat_str`` the
    pre-tokenizer's regular expression (tiktoken's syntax); ``special_tokens`` text -> id (ids
    outside ``tokens``; the masks never allow them); ``name`` and ``source`` say where it came
    from."""
    name: str
    tokens: list[bytes]
    pat_str: str
    special_tokens: dict[str, int] = field(default_factory=dict)
    source: str = ""

    def __len__(self) -> int:
        return len(self.tokens)


def read_js_tiktoken(path: str | Path, name: str | None = None, source: str = "") -> Vocabulary:
    """Read one of ``js-tiktoken``'s rank files (``dist/ranks/<name>.js``: ``export default`` a
    JSON object with ``pat_str``, ``special_tokens`` and ``bpe_ranks``, whose lines are ``! <first
    id> <base64 token> <base64 token> ...``). Raises ValueError when the file does not have that
    shape or its ids leave a gap."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    head = "export default "
    start = text.find(head)
    if start < 0:
        raise ValueError(f"{path}: expected 'export default {{...}}', found none")
    data = json.loads(text[start + len(head):].rstrip().rstrip(";"))
    tokens: list[bytes] = []
    for line_no, line in enumerate(data["bpe_ranks"].split("\n"), 1):
        if not line:
            continue
        _, first, *encoded = line.split(" ")
        if int(first) != len(tokens):
            raise ValueError(f"{path}: line {line_no} starts at id {first}, expected "
                             f"{len(tokens)} (a gap in the ids)")
        tokens.extend(base64.b64decode(t) for t in encoded)
    return Vocabulary(name or path.name.split(".")[0], tokens, data["pat_str"],
                      dict(data.get("special_tokens", {})), source)


def pack(vocab: Vocabulary) -> tuple[bytes, dict]:
    """The binary and its manifest (a JSON-ready dict). Raises ValueError for a token longer than
    255 bytes (a length is one byte) or an empty one."""
    lengths = bytearray()
    for i, tok in enumerate(vocab.tokens):
        if not 0 < len(tok) < 256:
            raise ValueError(f"token {i} has {len(tok)} bytes; expected 1 to 255")
        lengths.append(len(tok))
    data = bytes(lengths) + b"".join(vocab.tokens)
    manifest = {"name": vocab.name, "n_tokens": len(vocab.tokens), "nbytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(), "pat_str": vocab.pat_str,
                "special_tokens": vocab.special_tokens, "source": vocab.source,
                "format": "uint8 length per token id, then the tokens' bytes in id order"}
    return data, manifest


def unpack(data: bytes, manifest: dict) -> Vocabulary:
    """The vocabulary back from ``pack``'s binary and manifest. Raises ValueError when the
    binary's size or sha256 differs from the manifest's, or its lengths do not add up."""
    if len(data) != manifest["nbytes"] or hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise ValueError(f"vocabulary {manifest.get('name')!r}: the binary's size or sha256 "
                         "differs from its manifest")
    n = manifest["n_tokens"]
    tokens, at = [], n
    for length in data[:n]:
        tokens.append(data[at:at + length])
        at += length
    if at != len(data):
        raise ValueError(f"vocabulary {manifest.get('name')!r}: the lengths add up to {at} "
                         f"bytes, the binary has {len(data)}")
    return Vocabulary(manifest["name"], tokens, manifest["pat_str"],
                      dict(manifest.get("special_tokens", {})), manifest.get("source", ""))
