"""Benchmark: one JSON Schema's token masks inside Pyodide (Python 3.12 in WebAssembly).

Run: ``python bench/bench_masker_pyodide.py`` after ``make build`` (it needs ``node``,
``node_modules/pyodide`` and the Pyodide NumPy wheel that build.py caches in ``.cache/wheels``).
Node runs the same V8 WebAssembly engine as Chromium, without a page around it.

Prints, for the lesson schema (b) and the trained 512-token vocabulary: compile time, and the
per-token mask time walking the five valid answers token by token (BPE tokens), cold (first walk of
a fresh grammar: each state's mask is computed when first met, shared prefixes then hit the cache)
and warm (second walk, every mask cached), median and p99 in milliseconds, with the same
figures measured in this CPython beside them.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYODIDE = ROOT / "node_modules" / "pyodide"
WHEELS = sorted((ROOT / ".cache" / "wheels").glob("numpy-*pyodide*.whl"))

MEASURE = r'''
import json, statistics, time
from masker import compile_json_schema
from minigpt.bpe import load_tokenizer

SCHEMA = {"type": "object", "properties": {"personaje": {"enum": [
    "Benina", "Almudena", "Frasquito", "Obdulia", "Juliana"]}},
    "required": ["personaje"], "additionalProperties": False}


def measure(weights):
    tok = load_tokenizer(weights)
    texts = ['{"personaje":"%s"}' % n for n in SCHEMA["properties"]["personaje"]["enum"]]
    t = time.perf_counter()
    grammar = compile_json_schema(SCHEMA)
    compile_ms = (time.perf_counter() - t) * 1e3
    out = {"compile_ms": compile_ms}
    for phase in ("cold", "warm"):
        times = []
        for text in texts:
            m = grammar.matcher(tok.vocab)
            for tid in tok.encode(text):
                t = time.perf_counter()
                mask = m.mask()
                times.append((time.perf_counter() - t) * 1e3)
                m.consume(tid)
        times.sort()
        out[phase] = (statistics.median(times), times[int(0.99 * (len(times) - 1))], len(times))
    return out
'''

RUNNER = """
import {{ loadPyodide }} from {pyodide_mjs};
import fs from "fs";
const py = await loadPyodide({{ indexURL: {index_url} }});
await py.loadPackage({wheel});
function copyTree(src, dst) {{  // a package's .py files, subpackages included
  py.FS.mkdirTree(dst);
  for (const e of fs.readdirSync(src, {{ withFileTypes: true }})) {{
    if (e.isDirectory() && e.name !== "__pycache__") copyTree(src + "/" + e.name, dst + "/" + e.name);
    else if (e.isFile() && e.name.endsWith(".py")) py.FS.writeFile(dst + "/" + e.name, fs.readFileSync(src + "/" + e.name));
  }}
}}
for (const pkg of ["masker", "minigpt"]) copyTree({py_dir} + "/" + pkg, "/lib/" + pkg);
py.FS.mkdirTree("/weights");
py.FS.writeFile("/weights/merges.txt", fs.readFileSync({merges}));
py.runPython("import sys; sys.path.insert(0, '/lib')");
py.runPython(fs.readFileSync({measure}, "utf8"));
console.log("RESULT " + py.runPython("import json; json.dumps(measure('/weights'))"));
"""


def row(name: str, r: dict) -> None:
    print(f"{name:<8} compile {r['compile_ms']:7.2f} ms | mask cold median {r['cold'][0]:.4f} ms, "
          f"p99 {r['cold'][1]:.4f} ms | warm median {r['warm'][0]:.4f} ms, p99 {r['warm'][1]:.4f} ms "
          f"(n={r['cold'][2]} tokens)")


def main() -> None:
    if not (PYODIDE / "pyodide.mjs").exists() or not WHEELS:
        sys.exit("needs node_modules/pyodide and .cache/wheels/numpy-*.whl: run `make build` first")
    with tempfile.TemporaryDirectory() as tmp:
        measure, runner = Path(tmp) / "measure.py", Path(tmp) / "run.mjs"
        measure.write_text(MEASURE, encoding="utf-8")
        runner.write_text(RUNNER.format(
            pyodide_mjs=json.dumps(str(PYODIDE / "pyodide.mjs")), index_url=json.dumps(f"{PYODIDE}/"),
            wheel=json.dumps(str(WHEELS[-1])), py_dir=json.dumps(str(ROOT / "py")),
            merges=json.dumps(str(ROOT / "weights" / "merges.txt")), measure=json.dumps(str(measure))),
            encoding="utf-8")
        done = subprocess.run(["node", str(runner)], capture_output=True, text=True, timeout=600)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        sys.exit(done.stderr[-3000:])
    sys.path.insert(0, str(ROOT / "py"))
    namespace: dict = {}
    exec(compile(MEASURE, "measure", "exec"), namespace)  # the same code, in this CPython
    print("JSON Schema (b), trained 512-token vocabulary, per-token mask()")
    row("Pyodide", json.loads(lines[-1][len("RESULT "):]))
    row("CPython", namespace["measure"](str(ROOT / "weights")))


if __name__ == "__main__":
    main()
