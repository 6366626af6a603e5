"""The real tokenizers' vocabularies the site ships (``py/vocabularies``): read from the npm
package ``js-tiktoken`` (pinned in ``package-lock.json``), packed into ``vocab/<name>.<hash>.bin``
with its manifest ``vocab/<name>.<hash>.json``. Only the pages whose spec says ``"vocabularies":
True`` list them in their runtime config, and their cells fetch them when first asked
(``vocabularies.load``)."""
from __future__ import annotations

import json

from .files import use_py

use_py()
from vocabularies import NAMES  # noqa: E402  (py/ is on the path from here on)


def read(name: str):
    """The ``vocabularies.Vocabulary`` ``name`` (one of ``NAMES``), read from ``js-tiktoken``'s
    rank file by ``vocabularies.load`` (once per process). Raises what ``load`` raises."""
    from vocabularies import load
    return load(name)


def site_files() -> list[tuple[str, bytes]]:
    """``[(file name, bytes)]``: ``<name>.json`` (the manifest) and ``<name>.bin`` of each
    vocabulary of ``NAMES``."""
    use_py()
    from vocabularies import pack
    out = []
    for name in NAMES:
        data, manifest = pack(read(name))
        out.append((f"{name}.json",
                    (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()))
        out.append((f"{name}.bin", data))
    return out
