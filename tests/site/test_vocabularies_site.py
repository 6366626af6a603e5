"""The real tokenizers' vocabularies in the site: packed files that round-trip to js-tiktoken's
ranks, listed in the runtime config of the pages that use them and of no other page, and what
they add to the site (issue 40: at most 4 MB)."""
from __future__ import annotations

import json
import re

import build
from sitebuild import vocabularies as site_vocabularies
from vocabularies import unpack

GROWTH_LIMIT = 4_000_000  # bytes the real vocabularies may add to the site


def config_of(html: str) -> dict:
    return json.loads(re.search(r'id="runtime-config">(.*?)</script>', html, re.S).group(1))


def test_the_packed_files_round_trip_and_fit_the_limit(built):
    folder = built / "vocab"
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 2 * len(site_vocabularies.NAMES)
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert total <= GROWTH_LIMIT
    for name in site_vocabularies.NAMES:
        (manifest_path,) = folder.glob(f"{name}.*.json")
        (bin_path,) = folder.glob(f"{name}.*.bin")
        manifest = json.loads(manifest_path.read_text())
        vocab = unpack(bin_path.read_bytes(), manifest)
        assert vocab.tokens == site_vocabularies.read(name).tokens
        assert "js-tiktoken" in manifest["source"] and "MIT" in manifest["source"]


def test_only_the_pages_that_use_them_list_them(built):
    users = {spec["out"] for spec in build.editions() if spec.get("vocabularies")}
    # «Del esquema al autómata» §4 and the Laboratorio's «vocabulario» choice
    assert users == {"automata.html", "en/automata.html", "laboratorio.html", "en/lab.html"}
    for spec in build.editions():
        html = (built / spec["out"]).read_text()
        if 'id="runtime-config"' not in html:
            continue
        listed = config_of(html).get("vocabularies", [])
        if spec["out"] in users:
            names = sorted(f["name"] for f in listed)
            assert names == sorted(f"{n}.{ext}" for n in site_vocabularies.NAMES
                                   for ext in ("bin", "json"))
            for f in listed:
                assert (built / spec["out"]).parent.joinpath(f["url"]).resolve().is_file()
        else:
            assert listed == [], spec["out"]
