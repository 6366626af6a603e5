"""The real tokenizers' vocabularies the site ships (``py/vocabularies``): read from the npm
package ``js-tiktoken`` (pinned in ``package-lock.json``), packed into ``vocab/<name>.<hash>.bin``
with its manifest ``vocab/<name>.<hash>.json``. Only the pages whose spec says ``"vocabularies":
True`` list them in their runtime config, and their cells fetch them when first asked
(``vocabularies.load``)."""
from __future__ import annotations

import json
from functools import lru_cache

from .files import NODE_MODULES, use_py

NAMES = ("o200k_base", "cl100k_base")
PACKAGE = NODE_MODULES / "js-tiktoken"


def package_version() -> str:
    """``js-tiktoken``'s version, from its ``package.json``; FileNotFoundError when the package
    is not installed (``make setup`` installs it)."""
    return json.loads((PACKAGE / "package.json").read_text())["version"]


@lru_cache(maxsize=None)
def read(name: str):
    """The ``vocabularies.Vocabulary`` ``name`` (one of ``NAMES``) from ``js-tiktoken``'s rank
    file. Raises FileNotFoundError when the package is missing, ValueError for a bad file."""
    if name not in NAMES:
        raise ValueError(f"unknown vocabulary {name!r}; expected one of {', '.join(NAMES)}")
    use_py()
    from vocabularies import read_js_tiktoken
    return read_js_tiktoken(PACKAGE / "dist" / "ranks" / f"{name}.js", name,
                            f"js-tiktoken {package_version()} (MIT licence), dist/ranks/{name}.js")


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
