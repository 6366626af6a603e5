"""The development server: ``site/`` on 127.0.0.1 with the MIME types Pyodide needs.

Used by ``python build.py serve`` and by the end-to-end tests. Any static host works
for the built site; this one adds the site's Content-Security-Policy as a header (every page
also declares it in a ``<meta>`` tag, but a Web Worker only obeys the header sent with its own
script) and, optionally, cross-origin isolation headers.
"""
from __future__ import annotations

import functools
import http.server
from pathlib import Path

# The site's Content-Security-Policy: the page, its worker and the cells may load and fetch only
# from the site's own origin. Directive by directive:
# - script-src: our bundled page script, the worker, Pyodide's scripts; 'wasm-unsafe-eval' lets
#   Pyodide compile its WebAssembly (the interpreter and NumPy's extension modules); no eval.
# - style-src 'unsafe-inline': the lesson views that cells display carry their own <style> and
#   style="width: …" bars, made in the reader's browser by code the reader may edit, so they
#   cannot be hashed at build time. CSS cannot run script, and the img-src, font-src and
#   connect-src below keep it from sending anything to another origin.
# - img-src data:: the page icon is a data: URI.
# frame-ancestors is honoured only as a header, so it is left out to keep header and meta equal.
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self'",
    "connect-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
))


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
    csp = True

    def end_headers(self):
        if self.csp:  # on every response: the worker's script obeys only its own header
            self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, format, *args):  # keep test and serve output quiet
        pass


def make_server(site: Path, port: int = 8000, isolated: bool = False,
                csp: bool = True) -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``site`` on 127.0.0.1 (port 0 picks a free port).

    ``isolated`` adds COOP/COEP; ``csp=False`` drops the Content-Security-Policy header (a test
    uses it to see a worker's request to another origin reach the network).
    """
    handler = type("Handler", (SiteHandler,), {"isolated": isolated, "csp": csp})
    return http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(handler, directory=str(site)))
