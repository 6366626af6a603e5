"""docs/json-schema.md against the code: every keyword the translator implements is in the
"Supported keywords" table, every keyword it refuses by name is in "Refused keywords", and no
keyword is in both lists."""
from __future__ import annotations

import re
from pathlib import Path

from masker.json_schema.keywords import IMPLEMENTED, REFUSED

DOC = (Path(__file__).resolve().parents[2] / "docs" / "json-schema.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = DOC.index(f"## {title}")
    end = DOC.find("\n## ", start + 3)
    return DOC[start:end if end > 0 else None]


def _table_keywords(section: str) -> set[str]:
    """The keywords named in the first column of the section's table."""
    out = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            out |= set(re.findall(r"`([$\w]+)`", line.split("|")[1]))
    return out


def test_every_implemented_keyword_is_in_the_supported_table():
    listed = _table_keywords(_section("Supported keywords"))
    assert IMPLEMENTED - listed == set(), IMPLEMENTED - listed


def test_every_refused_keyword_is_named_in_the_refused_section():
    text = _section("Refused keywords")
    missing = {k for k in REFUSED if f"`{k}`" not in text and f"/`{k}`" not in text
               and not re.search(rf"[`/]{re.escape(k)}[`/]", text)}
    assert missing == set(), missing
    # and what is refused is not in the supported table
    assert _table_keywords(_section("Supported keywords")) & REFUSED == set()
