"""The cell kernel (browser/kernel.py), run in CPython as in the worker."""
from __future__ import annotations

import os
import signal
import sys
import threading

import pytest
from hypothesis import given, settings, strategies as st

import build
from sitebuild import files
from sitebuild.cellrun import load_kernel


kernel_module = load_kernel(str(files.BROWSER / "kernel.py"))  # as the build's cell runner loads it


@pytest.fixture
def run():
    events: list[tuple[str, dict]] = []
    kernel = kernel_module.Kernel(lambda kind, payload: events.append((kind, payload)))

    def run_cell(code):
        events.clear()
        ok = kernel.run(code)
        return ok, list(events)
    run_cell.kernel = kernel
    return run_cell


def test_stdout_stderr_and_last_expression(run):
    ok, events = run("import sys\nprint('a')\nprint('b', file=sys.stderr)\n1 + 1")
    assert ok
    text = [(kind, p) for kind, p in events if kind == "stream"]
    assert merge_streams(text) == [("stdout", "a\n"), ("stderr", "b\n")]
    assert events[-1] == ("display", {"text": "2"})


def merge_streams(events):
    """Consecutive stream events of one name joined: batching may split text anywhere."""
    merged = []
    for _, payload in events:
        if merged and merged[-1][0] == payload["name"]:
            merged[-1] = (payload["name"], merged[-1][1] + payload["text"])
        else:
            merged.append((payload["name"], payload["text"]))
    return merged


def test_printed_text_is_batched_in_order(run):
    ok, events = run("import sys\nfor i in range(20000):\n    print(i)\n"
                     "    if i == 10000: print('e', file=sys.stderr)\n'fin'")
    assert ok
    streams = [(k, p) for k, p in events if k == "stream"]
    assert len(streams) < 200  # 20001 writes of a line and 20001 of a newline, batched
    merged = merge_streams(streams)
    assert [name for name, _ in merged] == ["stdout", "stderr", "stdout"]
    assert merged[0][1] + merged[2][1] == "".join(f"{i}\n" for i in range(20000))
    assert merged[0][1].endswith("10000\n") and merged[1][1] == "e\n"
    assert events[-1] == ("display", {"text": "'fin'"})


def test_cells_share_one_namespace_and_count_runs(run):
    assert run("x = 40")[0]
    ok, events = run("x + 2")
    assert ok and events == [("display", {"text": "42"})]
    assert run.kernel.count == 2
    ok, events = run("x = 1\nNone")
    assert ok and events == []  # None is not displayed


def test_names_lists_what_the_cells_defined(run):
    assert run.kernel.names() == []
    run("import math as m\nx = 1\n_oculto = 2\ndef f():\n    pass\nclass C:\n    pass")
    assert run.kernel.names() == ["C", "f", "m", "x"]
    run("display = print")  # a cell that rebinds a kernel name defined it
    assert "display" in run.kernel.names()


def test_rich_display_and_display_helper(run):
    ok, events = run("class H:\n    def _repr_html_(self):\n        return '<b>h</b>'\n"
                     "display(H(), 'txt')\nH")
    assert ok
    assert events[:2] == [("display", {"html": "<b>h</b>"}), ("display", {"text": "'txt'"})]
    assert events[2][1]["text"].startswith("<class")  # a class is not rendered as HTML


def test_exception_gives_cell_traceback_and_kernel_goes_on(run):
    ok, events = run("def f():\n    return 1 / 0\nf()")
    assert not ok
    [(kind, payload)] = events
    text = payload["traceback"]
    assert kind == "error"
    assert text.startswith("Traceback (most recent call last):")
    assert 'File "<celda 1>", line 3, in <module>' in text
    assert "return 1 / 0" in text and text.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "kernel.py" not in text
    assert run("print('ok')")[0]


def test_syntax_error_points_at_the_line(run):
    ok, [(kind, payload)] = run("x = (1,\ny = 2 +")
    assert not ok and kind == "error"
    assert "SyntaxError" in payload["traceback"]
    assert "<celda 1>" in payload["traceback"]


def test_keyboard_interrupt_is_reported_not_raised(run):
    ok, [(kind, payload)] = run("raise KeyboardInterrupt")
    assert not ok and kind == "error"
    assert payload["traceback"].rstrip().endswith("KeyboardInterrupt")


def test_masker_error_shows_only_its_message_with_the_caret(run):
    sys.path.insert(0, str(build.ROOT / "py"))  # as prepare() does in the page
    try:
        ok, [(kind, payload)] = run("import masker\nmasker.compile_regex('[a-')")
    finally:
        sys.path.remove(str(build.ROOT / "py"))
    text = payload["traceback"]
    assert not ok and kind == "error"
    assert text.startswith("masker.errors.")  # no frames at all, only type and message
    assert "Traceback" not in text and "File " not in text
    assert "position 0" in text and "  [a-\n  ^" in text


def test_library_frames_collapse_into_one_line_between_cell_frames(run):
    ok, [(_, payload)] = run("import json\ndef parse(s):\n    return json.loads(s)\n"
                             "parse('{x')")
    lines = payload["traceback"].splitlines()
    assert not ok
    assert 'File "<celda 1>", line 4, in <module>' in lines[1]
    assert any('File "<celda 1>", line 3, in parse' in line for line in lines)
    [collapsed] = [line for line in lines if "frames in" in line]
    assert "json/__init__.py" in collapsed and "json/decoder.py" in collapsed
    assert not any(line.lstrip().startswith('File "/') for line in lines)
    assert lines[-1].startswith("json.decoder.JSONDecodeError: Expecting property name")


def test_chained_exceptions_show_both_with_python_wording(run):
    ok, [(_, payload)] = run("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
                             "    raise ValueError('mal') from e")
    text = payload["traceback"]
    assert text.index("ZeroDivisionError") < text.index("direct cause") < text.index(
        "ValueError: mal")


@pytest.mark.parametrize("code", ["input('¿nombre? ')", "import sys\nsys.stdin.readline()"])
def test_input_raises_a_clear_error_at_once(run, code):
    ok, events = run(code)
    assert not ok and [kind for kind, _ in events] == ["error"]  # the prompt is not printed
    last = events[0][1]["traceback"].splitlines()[-1]
    assert last.startswith("RuntimeError: input() no está disponible en las celdas")
    assert "assign the value in the code" in last
    assert "kernel.py" not in events[0][1]["traceback"]


def test_flush_sends_waiting_text_at_once():
    events = []
    kernel = kernel_module.Kernel(lambda kind, payload: events.append(payload["text"]))
    code = ("import time\nprint('a', end='', flush=True)\nprint('b', end='')\n"
            "assert events == ['a'], events\nprint('c', end='', flush=True)\n"
            "assert events == ['a', 'bc'], events")
    kernel.namespace["events"] = events
    assert kernel.run(code), events


def test_streams_are_restored_after_a_cell(run):
    before = sys.stdout, sys.stderr, sys.stdin
    run("print('x')\n1/0")
    assert (sys.stdout, sys.stderr, sys.stdin) == before


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_printed_text_round_trips(text):
    events = []
    kernel = kernel_module.Kernel(lambda kind, payload: events.append(payload))
    assert kernel.run(f"print({text!r}, end='')")
    assert "".join(e["text"] for e in events) == text


def test_prepare_sets_path_and_points_minigpt_at_the_weights(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("MINIGPT_WEIGHTS", "before")  # restored (or removed) after the test
    kernel_module.prepare(str(tmp_path / "py"), str(tmp_path / "w"))
    assert sys.path[0] == str(tmp_path / "py")
    assert os.environ["MINIGPT_WEIGHTS"] == str(tmp_path / "w")
    from minigpt.bpe import weights_dir  # the project's py/ is on the tests' path (pytest.ini)
    assert weights_dir() == tmp_path / "w"


def test_the_worker_leaves_the_weights_setting_to_prepare():
    """kernel.prepare is the page's one place that sets MINIGPT_WEIGHTS; the worker hands it
    the folder it writes the weights to."""
    worker = (files.BROWSER / "js" / "worker.js").read_text()
    assert "kernelModule.prepare(PY_DIR, WEIGHTS_DIR, config.lang" in worker
    assert "MINIGPT_WEIGHTS" not in worker


def test_an_error_naming_another_origin_says_the_site_policy_refused_it():
    events: list[tuple[str, dict]] = []
    kernel = kernel_module.Kernel(lambda kind, payload: events.append((kind, payload)),
                                  origin="http://127.0.0.1:8000")
    assert not kernel.run("raise OSError(\"Failed to load 'https://example.com/x.json'.\")")
    text = events[-1][1]["traceback"]
    assert "La petición a https://example.com/x.json no salió de la página" in text
    assert "(http://127.0.0.1:8000)" in text and "Content-Security-Policy" in text
    # the page's own origin, or no page (CPython), gets no note
    assert kernel.run("1") and not kernel.run("raise OSError('http://127.0.0.1:8000/a.bin')")
    assert "no salió" not in events[-1][1]["traceback"]
    assert kernel_module.foreign_request_note("https://example.com/", None) == ""


@pytest.fixture
def sigint_ignored():
    """SIGINT ignored, as the page's worker sets it before the first cell; restored after."""
    saved = signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGINT, saved)


def test_stop_interrupts_only_the_cells_code(run, sigint_ignored):
    """Stop's request (SIGINT) raises KeyboardInterrupt while a cell's code runs, and is dropped
    after it: the page may write the request again after the cell ended (kernel-client.js)."""
    ok, events = run("import signal\nsignal.raise_signal(signal.SIGINT)\nprint('not reached')")
    assert not ok and [kind for kind, _ in events] == ["error"]
    assert events[0][1]["traceback"].rstrip().endswith("KeyboardInterrupt")
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    # a late request, between cells: ignored, and the next cell runs as usual
    signal.raise_signal(signal.SIGINT)
    assert run("x = 1")[0] and run.kernel.names() == ["signal", "x"]


def test_a_kernel_in_another_thread_runs_cells_without_touching_signals(run, sigint_ignored):
    results = []
    thread = threading.Thread(target=lambda: results.append(run("y = 2")))
    thread.start()
    thread.join()
    assert results == [(True, [])]
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_reset_forgets_the_cells_and_keeps_the_kernels_helpers(run):
    """``Kernel.reset`` (the tests' reset between two tests on one page): the names the cells
    defined are gone, the run count starts again, and ``display`` and ``input`` are still the
    kernel's."""
    assert run("import math\nsecreto = 42\ndef f():\n    return secreto\n")[0]
    kernel = run.kernel
    assert kernel.names() == ["f", "math", "secreto"] and kernel.count == 1
    kernel.reset()
    assert kernel.names() == [] and kernel.count == 0
    ok, events = run("print('secreto' in globals(), 'display' in globals())\ndisplay(7)")
    assert ok and kernel.count == 1
    assert merge_streams([e for e in events if e[0] == "stream"]) == [("stdout", "False True\n")]
    assert events[-1] == ("display", {"text": "7"})
    ok, events = run("input()")
    assert not ok and "RuntimeError" in events[-1][1]["traceback"]
