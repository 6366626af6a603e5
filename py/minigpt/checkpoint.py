"""The weights format: a JSON manifest (``model.json``) plus one raw binary file (``model.bin``).

Format ``minigpt-weights`` version 1:

- ``model.bin`` holds every tensor as little-endian float32, C order, concatenated in manifest order.
- ``model.json`` holds ``format``, ``version``, ``config`` (the GPTConfig fields), ``tensors`` (a list of
  ``{name, shape, dtype, offset, nbytes}`` with offsets in bytes into ``model.bin``), ``bin`` (``file``,
  ``nbytes``, ``sha256`` of the whole file) and ``training`` (free-form facts about the run).

No pickle: the files can be read with any JSON parser and ``numpy.frombuffer``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .config import GPTConfig, parameter_shapes

FORMAT = "minigpt-weights"
VERSION = 1
MANIFEST = "model.json"
BINARY = "model.bin"


def save_weights(folder, cfg: GPTConfig, params: dict, training: dict | None = None) -> dict:
    """Write ``model.json`` and ``model.bin`` into ``folder``; returns the manifest.

    params: name -> float32 array with the shape that ``parameter_shapes(cfg)`` gives.
    Raises ValueError for a missing, extra or mis-shaped tensor.
    """
    shapes = parameter_shapes(cfg)
    if set(params) != set(shapes):
        raise ValueError(f"parameter names differ: missing {sorted(set(shapes) - set(params))}, "
                         f"extra {sorted(set(params) - set(shapes))}")
    blobs, tensors, offset = [], [], 0
    for name, shape in shapes.items():
        arr = np.ascontiguousarray(params[name], dtype="<f4")
        if arr.shape != shape:
            raise ValueError(f"{name}: expected shape {shape}, found {arr.shape}")
        blobs.append(arr.tobytes())
        tensors.append({"name": name, "shape": list(shape), "dtype": "float32", "offset": offset, "nbytes": arr.nbytes})
        offset += arr.nbytes
    data = b"".join(blobs)
    manifest = {
        "format": FORMAT, "version": VERSION, "config": cfg.to_dict(), "tensors": tensors,
        "bin": {"file": BINARY, "nbytes": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        "training": training or {},
    }
    folder = Path(folder)
    (folder / BINARY).write_bytes(data)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def load_weights(folder) -> tuple[GPTConfig, dict, dict]:
    """Read ``folder/model.json`` and its binary; returns (config, params, manifest).

    params: name -> float32 array (read-only views into one buffer).
    Raises ValueError if the format or version is unknown, the sha256 or size of the binary does not
    match the manifest, or a tensor does not fit the configuration.
    """
    folder = Path(folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ValueError(f"{folder / MANIFEST}: expected format {FORMAT!r} version {VERSION}, "
                         f"found {manifest.get('format')!r} version {manifest.get('version')}")
    data = (folder / manifest["bin"]["file"]).read_bytes()
    if len(data) != manifest["bin"]["nbytes"] or hashlib.sha256(data).hexdigest() != manifest["bin"]["sha256"]:
        raise ValueError(f"{folder / manifest['bin']['file']}: size or sha256 differs from {MANIFEST}; "
                         "the files are from different exports or were damaged in transfer")
    cfg = GPTConfig.from_dict(manifest["config"])
    shapes = parameter_shapes(cfg)
    params = {}
    for t in manifest["tensors"]:
        if t["dtype"] != "float32" or tuple(t["shape"]) != shapes.get(t["name"]):
            raise ValueError(f"tensor {t['name']}: shape {t['shape']} / dtype {t['dtype']} does not fit the config")
        count = int(np.prod(t["shape"]))
        params[t["name"]] = np.frombuffer(data, dtype="<f4", count=count, offset=t["offset"]).reshape(t["shape"])
    if set(params) != set(shapes):
        raise ValueError(f"missing tensors: {sorted(set(shapes) - set(params))}")
    return cfg, params, manifest
