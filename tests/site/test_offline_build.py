"""The service worker's part of the build (``sitebuild/offline.py``): the list of files it stores,
their revisions, the build id every page carries, and ``sw.js`` itself."""
from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

import build
from sitebuild import offline
from sitebuild.files import Asset, Page

COURSE = re.compile(r'\{"build":"[0-9a-f]{16}","files":\[.*?\]\}')


def course_of(site: Path) -> dict:
    return json.loads(COURSE.search((site / "sw.js").read_text()).group(0))


def test_the_worker_stores_every_file_of_the_site_with_its_size(built):
    files = {p.relative_to(built).as_posix(): p for p in built.rglob("*") if p.is_file()}
    listed = course_of(built)["files"]
    assert [e["url"] for e in listed] == sorted(set(files) - {"sw.js", "manifest.json"})
    assert all(e["size"] == files[e["url"]].stat().st_size for e in listed)
    kinds = {Path(e["url"]).suffix for e in listed}
    assert {".html", ".ipynb", ".js", ".wasm", ".whl", ".zip", ".bin"} <= kinds


def test_a_file_without_revision_is_named_by_its_content(built):
    """No revision only where the path changes with the bytes: our hashed names (checked against
    the bytes) and the runtime's versioned folder; every other file's revision is its sha256."""
    for entry in course_of(built)["files"]:
        data = (built / entry["url"]).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if entry["revision"] is None:
            if entry["url"].startswith("vendor/"):
                assert re.match(r"vendor/pyodide-\d+\.\d+\.\d+/", entry["url"])
            else:
                assert digest[:10] in Path(entry["url"]).name, entry["url"]
        else:
            assert entry["revision"] == digest[:16], entry["url"]
        # the whole digest, checked by the browser when it stores the file
        assert entry["integrity"] == "sha256-" + base64.b64encode(bytes.fromhex(digest)).decode()
    revised = {e["url"] for e in course_of(built)["files"] if e["revision"]}
    assert "index.html" in revised and "en/mask.html" in revised and "mascara.ipynb" in revised


def test_every_page_carries_the_build_id_and_the_worker_address(built):
    build_id = course_of(built)["build"]
    pages = sorted(built.rglob("*.html"))
    assert len(pages) == len(build.EDITIONS)
    for page in pages:
        html = page.read_text()
        assert offline.BUILD_PLACEHOLDER not in html
        status = re.search(r'data-testid="offline-status"[^>]*', html).group(0)
        assert f'data-build="{build_id}"' in status, page
        address = re.search(r'data-sw="([^"]+)"', status).group(1)
        assert (page.parent / address).resolve() == (built / "sw.js").resolve(), page


def test_the_worker_is_one_production_file_of_ours():
    bundle = build.bundle_script(build.ROOT / build.SERVICE_WORKER, build.ROOT / "node_modules",
                                 build.PRODUCTION)
    text = bundle.decode()
    assert text.count("self.__COURSE_MANIFEST__") == 1
    assert "process.env" not in text and "importScripts" not in text  # one file, no logging
    # it names no other site, but for a link in a warning Workbox prints (never requested)
    assert set(re.findall(r"https?://[^\s\"'`]+", text)) <= {"https://bit.ly/wb-precache"}
    assert "Cross-Origin-Embedder-Policy" in text and "Cross-Origin-Opener-Policy" in text


def test_the_build_id_follows_every_file_and_only_the_changed_file_gets_a_new_revision():
    page = f'<p data-build="{offline.BUILD_PLACEHOLDER}">hola</p>'.encode()
    one = [Page("index.html", page), Asset("assets/app.0123456789.js", b"1"),
           Asset("mascara.ipynb", b"{}")]
    two = [Page("index.html", page), Asset("assets/app.0123456789.js", b"1"),
           Asset("mascara.ipynb", b'{"cells": []}')]
    assert offline.build_id(one) == offline.build_id(list(reversed(one)))  # order does not matter
    assert offline.build_id(one) != offline.build_id(two)
    first = offline.precache_manifest(one)
    second = offline.precache_manifest(two)
    changed = [a["url"] for a, b in zip(first, second) if a != b]
    assert changed == ["mascara.ipynb"]
    assert [e["revision"] is None for e in first] == [True, False, False]  # assets/app.<hash>.js


def test_offline_site_stamps_the_pages_and_writes_the_worker():
    page = f'<p data-build="{offline.BUILD_PLACEHOLDER}">hola</p>'.encode()
    files = offline.offline_site([Page("index.html", page), Asset("manifest.json", b"{}")],
                                 b"const c = self.__COURSE_MANIFEST__;")
    worker = files[-1]
    assert worker.path == "sw.js"
    course = json.loads(worker.data.decode()[len("const c = "):-1])
    assert files[0].data == f'<p data-build="{course["build"]}">hola</p>'.encode()
    assert [e["url"] for e in course["files"]] == ["index.html"]  # not the build's own list
    assert course["files"][0]["revision"] == hashlib.sha256(files[0].data).hexdigest()[:16]


def test_a_worker_bundle_that_does_not_read_the_list_is_refused():
    with pytest.raises(ValueError, match="__COURSE_MANIFEST__"):
        offline.service_worker(b"console.log(1)", "0" * 16, [])
