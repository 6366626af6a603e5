"""The masker runs unchanged in Pyodide (Python 3.12 + NumPy in WebAssembly, under Node) and
gives the same masks as CPython, with the Python walks and with the vectorized ones. Skipped when node, the npm pyodide package or the Pyodide NumPy
wheel (downloaded by build.py into .cache/wheels) is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "node_modules" / "pyodide"
WHEELS = sorted((ROOT / ".cache" / "wheels").glob("numpy-*pyodide*.whl"))

CASES = [  # (kind, source, prefix)
    ("regex", r"(señor|señora) [a-zñ]{1,5}\.", "señor a"),
    ("regex", r"«[^»]*»|😀+", "«a"),
    ("choice", ["1", "12", "123"], "1"),
    ("cfg", 'root ::= "(" root ")" root | ""', "(("),
    ("cfg", 'root ::= expr\nexpr ::= expr "+" [0-9] | [0-9]', "1+2"),
    ("json", {"type": "object", "properties": {"personaje": {"enum": ["Benina", "Almudena", "Obdulia"]}},
              "required": ["personaje"], "additionalProperties": False}, '{"personaje":"'),
    ("json", {"$defs": {"node": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 4},
                                                                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                                 "required": ["name"], "additionalProperties": False}},
              "$ref": "#/$defs/node"}, '{"name":"añ","kids":[{"name":"'),
]

RUNNER = """
import {{ loadPyodide }} from {pyodide_mjs};
import fs from "fs";
const py = await loadPyodide({{ indexURL: {index_url} }});
await py.loadPackage({wheel});
function copyTree(src, dst) {{  // the package's .py files, subpackages included
  py.FS.mkdirTree(dst);
  for (const e of fs.readdirSync(src, {{ withFileTypes: true }})) {{
    if (e.isDirectory() && e.name !== "__pycache__") copyTree(src + "/" + e.name, dst + "/" + e.name);
    else if (e.isFile() && e.name.endsWith(".py")) py.FS.writeFile(dst + "/" + e.name, fs.readFileSync(src + "/" + e.name));
  }}
}}
copyTree({masker_dir}, "/lib/masker");
console.log("RESULT " + await py.runPythonAsync(fs.readFileSync({script}, "utf8")));
"""

SCRIPT = """
import json, sys
sys.path.insert(0, "/lib")
from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex
build = {"regex": compile_regex, "choice": compile_choice, "cfg": compile_cfg, "json": compile_json_schema}
vocab = [bytes([i]) for i in range(256)] + [b"se", b"\\xc3", b"\\xb1or", b"((", b"+1"]
out = []
for kind, source, prefix in json.loads(CASES):
    m = build[kind](source).matcher(vocab)
    m.consume_bytes(prefix)
    out.append([m.allowed_token_ids(), m.is_accepting(), m.is_finished()])
# the same masks with the vectorized walks, as on a large vocabulary (NumPy's index type is
# int32 in WebAssembly: a dtype that CPython lets through may not pass here)
import masker.trie
masker.trie.VECTOR_MIN_TOKENS = 0
masker.trie.TokenTrie._shared.clear()
vector = []
for kind, source, prefix in json.loads(CASES):
    m = build[kind](source).matcher(vocab)
    m.consume_bytes(prefix)
    vector.append([m.allowed_token_ids(), m.is_accepting(), m.is_finished()])
json.dumps([sys.version_info[:2], out, vector])
"""


def cpython_results():
    build = {"regex": compile_regex, "choice": compile_choice, "cfg": compile_cfg, "json": compile_json_schema}
    vocab = [bytes([i]) for i in range(256)] + [b"se", b"\xc3", b"\xb1or", b"((", b"+1"]
    out = []
    for kind, source, prefix in CASES:
        m = build[kind](source).matcher(vocab)
        m.consume_bytes(prefix)
        out.append([m.allowed_token_ids(), m.is_accepting(), m.is_finished()])
    return out


@pytest.mark.skipif(shutil.which("node") is None or not (PYODIDE / "pyodide.mjs").exists()
                    or not WHEELS, reason="node, node_modules/pyodide or the Pyodide NumPy "
                    "wheel in .cache/wheels is missing (run build.py / npm install)")
def test_same_masks_in_pyodide(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(f"CASES = {json.dumps(json.dumps(CASES))}\n" + SCRIPT, encoding="utf-8")
    runner = tmp_path / "run.mjs"
    runner.write_text(RUNNER.format(
        pyodide_mjs=json.dumps(str(PYODIDE / "pyodide.mjs")), index_url=json.dumps(f"{PYODIDE}/"),
        wheel=json.dumps(str(WHEELS[-1])), masker_dir=json.dumps(str(ROOT / "py" / "masker")),
        script=json.dumps(str(script))), encoding="utf-8")
    done = subprocess.run(["node", str(runner)], capture_output=True, text=True, timeout=240)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-2000:]
    version, results, vectorized = json.loads(lines[-1][len("RESULT "):])
    assert version[0] == 3 and version[1] >= 12
    assert results == cpython_results()
    assert vectorized == results
