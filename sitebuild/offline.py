"""The course's service worker: the list of files it stores, the build id the pages carry, and
``sw.js`` itself (``browser/js/sw.js`` bundled with Workbox, with the list written in).

Why a service worker, what it stores and serves, and how to turn it off: ``docs/site.md``
(«Offline and isolation»).
"""
from __future__ import annotations

import base64
import hashlib
import json
import re

from .files import Asset

SERVICE_WORKER = "sw.js"  # at the site's root: its scope is the whole course, both editions
# What the pages carry until the build knows its id (the template variable ``build``).
BUILD_PLACEHOLDER = "course-build-placeholder"
MANIFEST_PLACEHOLDER = b"self.__COURSE_MANIFEST__"
# Files whose path already names their content: our hashed assets and weights
# (``name.<sha256[:10]>.ext``) and the runtime's versioned folder. They need no revision.
CONTENT_ADDRESSED = re.compile(r"^(assets|weights)/[^/]+\.[0-9a-f]{10}(\.[^./]+)?$|^vendor/[^/]+-\d[\w.]*/")
NOT_STORED = {"manifest.json", SERVICE_WORKER}  # the build's file list; the worker itself


def build_id(assets: list[Asset]) -> str:
    """The build's id: the first 16 hex digits of a sha256 over every file's path and sha256, the
    pages still carrying ``BUILD_PLACEHOLDER``. Same files, same id; any change, a new one."""
    digest = hashlib.sha256()
    for asset in sorted(assets, key=lambda a: a.path):
        if asset.path not in NOT_STORED:
            digest.update(asset.path.encode() + b"\0" + hashlib.sha256(asset.data).digest())
    return digest.hexdigest()[:16]


def stamp(assets: list[Asset], build: str) -> list[Asset]:
    """``assets`` with ``BUILD_PLACEHOLDER`` replaced by ``build`` in every HTML page (the same
    objects, changed in place: a ``Page`` keeps its outline)."""
    placeholder = BUILD_PLACEHOLDER.encode()
    for asset in assets:
        if asset.path.endswith(".html"):
            asset.data = asset.data.replace(placeholder, build.encode())
    return assets


def precache_manifest(assets: list[Asset]) -> list[dict]:
    """What the service worker stores: ``[{url, revision, integrity, size}]`` sorted by URL, one
    entry per file of the site but ``manifest.json`` and ``sw.js``. ``url`` is relative to the
    site's root, ``size`` in bytes; ``revision`` is ``None`` for a content-addressed path
    (``CONTENT_ADDRESSED``) and otherwise the first 16 hex digits of the file's sha256 (Workbox's
    precache entries); ``integrity`` is the file's whole sha256 as subresource integrity
    (``sha256-<base64>``), which the browser checks when it stores the file."""
    entries = []
    for asset in sorted(assets, key=lambda a: a.path):
        if asset.path in NOT_STORED:
            continue
        revision = (None if CONTENT_ADDRESSED.search(asset.path)
                    else hashlib.sha256(asset.data).hexdigest()[:16])
        integrity = "sha256-" + base64.b64encode(hashlib.sha256(asset.data).digest()).decode()
        entries.append({"url": asset.path, "revision": revision, "integrity": integrity,
                        "size": len(asset.data)})
    return entries


def service_worker(bundle: bytes, build: str, manifest: list[dict]) -> Asset:
    """``sw.js``: the bundled worker (``browser/js/sw.js``) with ``{build, files: manifest}``
    written where it reads ``self.__COURSE_MANIFEST__``. Raises ValueError when the bundle does
    not hold that name exactly once."""
    if bundle.count(MANIFEST_PLACEHOLDER) != 1:
        raise ValueError(f"the service worker bundle must read {MANIFEST_PLACEHOLDER.decode()} once")
    course = json.dumps({"build": build, "files": manifest}, separators=(",", ":"), sort_keys=True)
    return Asset(SERVICE_WORKER, bundle.replace(MANIFEST_PLACEHOLDER, course.encode()))


def offline_site(assets: list[Asset], bundle: bytes) -> list[Asset]:
    """The site's files with the service worker added: the build id computed (``build_id``) and
    stamped into the pages (``stamp``), then ``sw.js`` made with the list of every file
    (``precache_manifest``)."""
    build = build_id(assets)
    stamped = stamp(assets, build)
    return stamped + [service_worker(bundle, build, precache_manifest(stamped))]
