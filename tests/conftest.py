"""What every test folder shares: one build of the site for the whole session.

``built`` (alias ``site_dir``) is a fresh build of the current sources into a session folder,
made the first time a test asks for it; the unit and property tests never do. Tests read it and
never write into it: a test that changes a site copies it first (``tests/e2e/test_service_worker.py``)
or builds its own (``tests/site/test_build_serve.py``).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

import build

# No property test has a time limit: ``make test`` runs these tests beside the browser tests at
# the lowest priority, where an example can wait for the CPU (the project measures speed in
# benchmarks, never in tests). A test's own ``@settings`` still sets everything else.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """The site built from the current sources (``build.build``), private to this session."""
    site = tmp_path_factory.mktemp("built") / "site"
    build.build(build.ROOT, site)
    return site


@pytest.fixture(scope="session")
def site_dir(built) -> Path:
    """``built``, under the name the browser tests use."""
    return built

