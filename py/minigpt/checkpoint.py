"""The weights format: a JSON manifest (``model.json``) plus one raw binary file (``model.bin``).

Format ``minigpt-weights`` version 1:

- ``model.bin`` holds every tensor as little-endian float32, C order, concatenated in manifest order.
  The site ships a float16 copy instead (``float16_copy``: tensors ``"dtype": "float16"``, half the
  bytes); ``load_weights`` reads either and always gives float32 arrays.
- ``model.json`` holds ``format``, ``version``, ``config`` (the GPTConfig fields), ``tensors`` (a list of
  ``{name, shape, dtype, offset, nbytes}`` with offsets in bytes into ``model.bin``), ``bin`` (``file``,
  ``nbytes``, ``sha256`` of the whole file) and ``training`` (free-form facts about the run); a float16
  copy adds ``float16_of`` (the sha256 and size of the float32 binary it was rounded from).

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
DTYPES = {"float32": "<f4", "float16": "<f2"}  # manifest dtype -> NumPy's, little-endian


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

    params: name -> float32 array: read-only views into one buffer for float32 tensors; for float16
    ones (a ``float16_copy``), float32 arrays holding the float16 values exactly.
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
        if t["dtype"] not in DTYPES or tuple(t["shape"]) != shapes.get(t["name"]):
            raise ValueError(f"tensor {t['name']}: shape {t['shape']} / dtype {t['dtype']} does not fit the config")
        count = int(np.prod(t["shape"]))
        stored = np.frombuffer(data, dtype=DTYPES[t["dtype"]], count=count, offset=t["offset"])
        params[t["name"]] = stored.reshape(t["shape"]).astype(np.float32, copy=False)
    if set(params) != set(shapes):
        raise ValueError(f"missing tensors: {sorted(set(shapes) - set(params))}")
    return cfg, params, manifest


def float16_copy(manifest: dict, data: bytes) -> tuple[dict, bytes]:
    """The weights ``(manifest, data)`` of a float32 export (``model.json`` parsed, ``model.bin``'s
    bytes) with every tensor rounded to the nearest float16: ``(manifest, binary)`` of the copy, half
    the size, in the same format (tensors ``"dtype": "float16"``, offsets, ``bin.nbytes`` and
    ``bin.sha256`` recomputed, ``float16_of`` naming the source binary's sha256 and size).

    ``load_weights`` reads the copy back as float32 arrays whose values are the rounded ones (a
    relative error of at most 2**-11 per weight). Raises ValueError when a tensor is not float32
    or a weight's magnitude does not fit float16 (above 65504).
    """
    blobs, tensors, offset = [], [], 0
    for t in manifest["tensors"]:
        if t["dtype"] != "float32":
            raise ValueError(f"tensor {t['name']}: dtype {t['dtype']}, expected float32")
        count = int(np.prod(t["shape"]))
        values = np.frombuffer(data, dtype="<f4", count=count, offset=t["offset"])
        if not np.all(np.abs(values) <= np.finfo(np.float16).max):
            raise ValueError(f"tensor {t['name']}: a weight does not fit float16")
        half = values.astype("<f2").tobytes()
        blobs.append(half)
        tensors.append({**t, "dtype": "float16", "offset": offset, "nbytes": len(half)})
        offset += len(half)
    binary = b"".join(blobs)
    copy = {**manifest, "tensors": tensors,
            "bin": {**manifest["bin"], "nbytes": len(binary),
                    "sha256": hashlib.sha256(binary).hexdigest()},
            "float16_of": {"sha256": manifest["bin"]["sha256"], "nbytes": manifest["bin"]["nbytes"]}}
    return copy, binary
