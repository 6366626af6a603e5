"""The development server: 127.0.0.1 only, MIME types Pyodide needs, isolation headers."""
from __future__ import annotations

import threading
import urllib.request

import pytest

import build
from sitebuild import devserver, errors, files


@pytest.fixture
def site(tmp_path):
    for name, data in {"a.wasm": b"\0asm", "b.js": b"1", "c.whl": b"PK", "d.json": b"{}",
                       "index.html": b"<p>hola</p>", "e.py": b"x = 1"}.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def serve(site, isolated=False):
    server = devserver.make_server(site, 0, isolated)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def fetch(server, path):
    host, port = server.server_address
    with urllib.request.urlopen(f"http://{host}:{port}/{path}") as response:
        return response.headers, response.read()


@pytest.mark.parametrize("path, mime", [
    ("a.wasm", "application/wasm"), ("b.js", "text/javascript"),
    ("c.whl", "application/zip"), ("d.json", "application/json"),
    ("index.html", "text/html; charset=utf-8"), ("e.py", "text/x-python; charset=utf-8"),
])
def test_mime_types(site, path, mime):
    server = serve(site)
    try:
        headers, body = fetch(server, path)
        assert headers["Content-Type"] == mime
        assert body == (site / path).read_bytes()
    finally:
        server.shutdown()
        server.server_close()


def test_binds_loopback_and_isolation_headers_only_when_asked(site):
    plain, isolated = serve(site), serve(site, isolated=True)
    try:
        assert plain.server_address[0] == "127.0.0.1"
        assert "Cross-Origin-Opener-Policy" not in fetch(plain, "index.html")[0]
        headers = fetch(isolated, "index.html")[0]
        assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    finally:
        for server in (plain, isolated):
            server.shutdown()
            server.server_close()


def test_main_reports_a_build_error_and_exits_non_zero(monkeypatch, capsys):
    def broken():
        raise errors.BuildError("node_modules/pyodide is missing: run `npm ci`")
    monkeypatch.setattr(build, "build", broken)
    assert build.main([]) == 1
    assert "build failed: node_modules/pyodide is missing" in capsys.readouterr().err


def test_serve_on_a_busy_port_says_how_to_choose_another(site, monkeypatch, capsys):
    busy = serve(site)
    monkeypatch.setattr(build, "SITE", site)
    monkeypatch.setattr(build, "build", lambda: files.SitePlan())
    try:
        assert build.main(["serve", "--port", str(busy.server_address[1])]) == 1
    finally:
        busy.shutdown()
        busy.server_close()
    assert "choose another port with --port N" in capsys.readouterr().err


def test_every_response_carries_the_sites_content_security_policy(site):
    with_policy, without = serve(site), devserver.make_server(site, 0, csp=False)
    threading.Thread(target=without.serve_forever, daemon=True).start()
    try:
        for path in ("index.html", "b.js", "a.wasm"):  # b.js stands for the worker's script
            assert fetch(with_policy, path)[0]["Content-Security-Policy"] == \
                devserver.CONTENT_SECURITY_POLICY
        assert "Content-Security-Policy" not in fetch(without, "index.html")[0]
    finally:
        for server in (with_policy, without):
            server.shutdown()
            server.server_close()
