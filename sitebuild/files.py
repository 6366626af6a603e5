"""The site's files: the project's folders, what a build writes (``SitePlan``), hashed names,
the packed ``py/`` and ``weights/``, and the final swap into ``site/``."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the project: build.py, py/, templates/, browser/
SITE = ROOT / "site"
CACHE = ROOT / ".cache"
TEMPLATES = ROOT / "templates"   # the Jinja pages
BROWSER = ROOT / "browser"       # the browser's own files: JS, CSS, the cell kernel
NODE_MODULES = ROOT / "node_modules"

# Files that make the model usable in a page; the model cell needs all of one set.
MODEL_FILE_SETS = (("model.npz",), ("model.json", "model.bin"))


@dataclass
class Asset:
    """One file to write into the site: ``path`` is relative to ``site/``."""
    path: str
    data: bytes


@dataclass
class Page(Asset):
    """A rendered page, with what its notebook needs: ``outline`` (see ``PageOutline``)."""
    outline: list[tuple[str, str]] = field(default_factory=list)
    figures_read: list[str] = field(default_factory=list)  # the fig entries its template read


@dataclass
class SitePlan:
    """Everything the build writes, gathered before ``site/`` is touched."""
    assets: list[Asset] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    weights: list[dict] = field(default_factory=list)
    vocabularies: list[dict] = field(default_factory=list)  # the real tokenizers' files
    figures: dict | None = None  # {page out: its computed figures} (see lesson_figures)
    service_worker: bytes = b""  # the bundled browser/js/sw.js, before the file list goes in

    def add(self, key: str, path: str, data: bytes) -> str:
        self.assets.append(Asset(path, data))
        self.urls[key] = path
        self.sizes[key] = len(data)
        return path


def content_hash(data: bytes, length: int = 10) -> str:
    """Hex digest prefix (sha256) used in asset file names."""
    return hashlib.sha256(data).hexdigest()[:length]


def hashed_name(name: str, data: bytes) -> str:
    """``app.js`` -> ``app.<hash>.js`` (the hash goes before the last suffix)."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return f"{name}.{content_hash(data)}"
    return f"{stem}.{content_hash(data)}.{ext}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pack_python(py_dir: Path) -> bytes:
    """Zip the ``py/`` tree (``.py`` files and data, no caches) reproducibly.

    Members are stored relative to ``py_dir`` with a fixed timestamp, so the same
    sources give the same bytes and the same hashed file name. Each message catalog
    (``lesson/locale/<language>/LC_MESSAGES/*.po``) goes in compiled, as the ``.mo`` file the
    standard library's ``gettext`` reads (``lesson.i18n.compile_po``, Babel): the browser has no
    Babel. A ``.mo`` left in the tree by hand is not packed (the ``.po`` is the source).
    """
    use_py(py_dir.parent)
    from lesson.i18n import compile_po
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(py_dir.rglob("*")):
            if (path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".mo")):
                continue
            data = path.read_bytes()
            if path.suffix == ".po":
                path, data = path.with_suffix(".mo"), compile_po(data)
            info = zipfile.ZipInfo(path.relative_to(py_dir).as_posix(),
                                   date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zipped.writestr(info, data)
    return buffer.getvalue()


def source_digest(root: Path, *extra: Path) -> "hashlib._Hash":
    """A sha256 of what the build's Python computations read: every file of ``root/py`` (sources
    and data such as ``views.css``, which the views embed; caches left out), every file of
    ``root/weights``, and the ``extra`` files, each with its path relative to ``root``. The caches
    of the prose figures and of the cells' outputs are keyed by it, so editing any of them makes
    the next build compute again."""
    inputs = list(extra)
    inputs += sorted(p for p in (root / "py").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    inputs += sorted(p for p in (root / "weights").glob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in inputs:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest


def collect_weights(weights_dir: Path) -> list[tuple[str, bytes]]:
    """Every regular file in ``weights/`` (sorted by name), as ``(name, bytes)``."""
    if not weights_dir.is_dir():
        return []
    return [(path.name, path.read_bytes()) for path in sorted(weights_dir.iterdir())
            if path.is_file() and not path.name.startswith(".")]


def site_weights(weights: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The weights as the site ships them: ``weights`` (``collect_weights``'s list) with ``model.json``
    and ``model.bin`` replaced by their float16 copy (``minigpt.checkpoint.float16_copy``: half the
    bytes to download; the page's ``load_model`` reads them back as float32). Any other file, and a
    list without that pair, is returned as it is. Raises ValueError when the binary's size or sha256
    differs from its manifest, or from ``float16_copy``.
    """
    files = dict(weights)
    if "model.json" not in files or "model.bin" not in files:
        return list(weights)
    use_py()
    from minigpt.checkpoint import float16_copy
    manifest = json.loads(files["model.json"])
    data = files["model.bin"]
    if (len(data) != manifest["bin"]["nbytes"]
            or hashlib.sha256(data).hexdigest() != manifest["bin"]["sha256"]):
        raise ValueError("weights/model.bin: size or sha256 differs from model.json")
    half_manifest, half = float16_copy(manifest, data)
    files["model.json"] = (json.dumps(half_manifest, indent=1, ensure_ascii=False) + "\n").encode()
    files["model.bin"] = half
    return [(name, files[name]) for name, _ in weights]


def weights_folder(weights: list[tuple[str, bytes]], cache: Path = CACHE) -> Path:
    """A folder holding exactly ``weights`` (``site_weights``'s list), for the build's own CPython runs
    (the prose figures and the cells' outputs use the model the page loads):
    ``cache/site-weights-<hash>/``, keyed by the files' names and bytes, written once."""
    digest = hashlib.sha256()
    for name, data in weights:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    folder = cache / f"site-weights-{digest.hexdigest()[:16]}"
    if not folder.is_dir():
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name, data in weights:
            (tmp / name).write_bytes(data)
        tmp.rename(folder)
    return folder


def site_model_dir(weights_dir: Path, cache: Path = CACHE) -> Path:
    """The folder of the weights the site ships, made from the float32 folder ``weights_dir``
    (``collect_weights``, ``site_weights``, ``weights_folder``): what the page's ``load_model``
    reads, for the build's and the tests' CPython runs. Raises what ``site_weights`` raises."""
    return weights_folder(site_weights(collect_weights(weights_dir)), cache)


def has_model(names: list[str]) -> bool:
    """True when the weights folder holds a complete set of model files."""
    return any(all(name in names for name in group) for group in MODEL_FILE_SETS)


def write_site(assets: list[Asset], site: Path = SITE) -> None:
    """Replace ``site/`` with exactly ``assets`` (written to a temp folder, then swapped)."""
    tmp = site.with_name(site.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for asset in assets:
        target = tmp / asset.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(asset.data)
    manifest = {a.path: {"size": len(a.data)} for a in assets}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    shutil.rmtree(site, ignore_errors=True)
    tmp.rename(site)


def use_py(root: Path = ROOT) -> None:
    """Make the project's Python packages (``root/py``) importable by the build."""
    py_dir = str(root / "py")
    if py_dir not in sys.path:
        sys.path.insert(0, py_dir)
