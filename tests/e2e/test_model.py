"""The model cell: appears when weights/ holds a model, and runs in the browser.

Uses a small random model written with the project's own weights format, so the
path (weights stage -> MINIGPT_WEIGHTS -> load_model) is tested whether or not the
trained model is in weights/ yet.
"""
from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest

import build
from sitebuild import devserver, files
from minigpt.checkpoint import save_weights
from minigpt.config import GPTConfig, parameter_shapes
from tests.e2e.helpers import assert_cells_match_cpython, open_lesson

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def model_site(tmp_path_factory):
    """A copy of the project whose weights/ has a small random model; built and served."""
    root = tmp_path_factory.mktemp("with-model")
    for name in ("node_modules", ".cache", "templates", "browser", "py"):
        (root / name).symlink_to(build.ROOT / name)
    weights = root / "weights"
    weights.mkdir()
    for name, data in files.collect_weights(build.ROOT / "weights"):
        if name not in ("model.json", "model.bin"):
            (weights / name).write_bytes(data)
    cfg = GPTConfig(n_ctx=64, n_layer=1, n_head=2, n_embd=32)
    rng = np.random.default_rng(0)
    params = {name: (0.2 * rng.standard_normal(shape)).astype(np.float32)
              for name, shape in parameter_shapes(cfg).items()}
    save_weights(weights, cfg, params)
    # Only the pages this test opens: the other lessons' prose figures need the trained model (a
    # figure that cannot be computed stops the build), and their cells fail on this one.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "PAGES", tuple(p for p in build.PAGES if p["out"] in ("index.html", "marco.html")))
        build.build(root, root / "site", strict_cells=False)
    server = devserver.make_server(root / "site", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", weights
    server.shutdown()
    server.server_close()
    shutil.rmtree(root / "site", ignore_errors=True)


def test_model_cell_runs_in_the_browser_like_in_cpython(context, guard, model_site):
    url, weights = model_site
    guard.allowed += (url,)
    page = open_lesson(context, url)
    weights_stage = page.locator("#startup [data-stage=weights] .stage-detail")
    assert weights_stage.inner_text().startswith("listo")
    model_cells = page.locator("[data-testid=cell]", has_text="load_model")
    assert model_cells.count() == 1
    assert_cells_match_cpython(page, weights)
    assert model_cells.first.get_attribute("data-state") == "done"
    assert len(model_cells.first.locator("[data-testid=cell-output]").inner_text().splitlines()) == 5
