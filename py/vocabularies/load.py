"""Where a page, the build and a notebook find a real tokenizer's vocabulary.

- In the page, the worker hands the kernel the URLs of the site's packed files
  (``vocab/<name>.<hash>.json`` and ``.bin``, ``sitebuild/vocabularies.py``) and the kernel puts
  them in ``$COURSE_VOCABULARIES`` (JSON: file name -> URL); ``load`` fetches them then, the
  first time a cell asks (a synchronous request, allowed in the worker; offline, the service
  worker answers it), so a page that never asks downloads nothing.
- In CPython (the build, the tests, a notebook in a clone of the repository) the variable is not
  set, and ``load`` reads the rank files of the npm package ``js-tiktoken`` that ``make setup``
  installs in ``node_modules/``: the same tokens (``tests/vocabularies``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .store import Vocabulary, read_js_tiktoken, unpack

NAMES = ("o200k_base", "cl100k_base")
RANKS = Path(__file__).resolve().parents[2] / "node_modules" / "js-tiktoken" / "dist" / "ranks"
_LOADED: dict[str, Vocabulary] = {}


def load(name: str = "o200k_base") -> Vocabulary:
    """The vocabulary ``name`` (one of ``NAMES``), loaded once per process. Raises ValueError for
    another name, OSError when its files cannot be read or fetched (with the place tried), and
    ValueError when the fetched binary's size or sha256 differs from its manifest."""
    if name not in NAMES:
        raise ValueError(f"unknown vocabulary {name!r}; expected one of {', '.join(NAMES)}")
    found = _LOADED.get(name)
    if found is None:
        urls = os.environ.get("COURSE_VOCABULARIES")
        if urls:
            urls = json.loads(urls)
            manifest = json.loads(_fetch(urls[f"{name}.json"]))
            found = unpack(_fetch(urls[f"{name}.bin"]), manifest)
        else:
            path = RANKS / f"{name}.js"
            if not path.is_file():
                raise OSError(f"{path} not found: run `make setup` (it installs js-tiktoken)")
            version = json.loads((RANKS.parents[1] / "package.json").read_text())["version"]
            found = read_js_tiktoken(path, name, f"js-tiktoken {version} (MIT licence), "
                                     f"dist/ranks/{name}.js")
        _LOADED[name] = found
    return found


def _fetch(url: str) -> bytes:
    """The bytes at ``url``, by a synchronous request (the page's worker has no event loop to
    await in a cell). Raises OSError on a failed request."""
    from js import Uint8Array, XMLHttpRequest  # Pyodide only
    request = XMLHttpRequest.new()
    request.open("GET", url, False)
    request.responseType = "arraybuffer"
    request.send(None)
    if request.status != 200:
        raise OSError(f"{url}: HTTP {request.status}")
    return bytes(Uint8Array.new(request.response).to_py())
