"""The development server: ``site/`` on 127.0.0.1 with the MIME types Pyodide needs.

Used by ``python build.py serve`` and by the end-to-end tests. Any static host works
for the built site; this one only adds optional cross-origin isolation headers.
"""
from __future__ import annotations

import functools
import http.server
from pathlib import Path


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide needs; optional isolation headers."""
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".zip": "application/zip",
        ".whl": "application/zip", ".py": "text/x-python; charset=utf-8",
        ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
        ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
    }
    isolated = False

    def end_headers(self):
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, format, *args):  # keep test and serve output quiet
        pass


def make_server(site: Path, port: int = 8000,
                isolated: bool = False) -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``site`` on 127.0.0.1 (port 0 picks a free port)."""
    handler = type("Handler", (SiteHandler,), {"isolated": isolated})
    return http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(handler, directory=str(site)))
