"""The lesson kernel: runs the page's cells in one shared namespace.

It runs inside the page's Web Worker under Pyodide (Python 3.12), and in CPython
for the tests. It knows nothing about JavaScript: every result goes through one
callback, ``emit(kind, payload)``, with ``payload`` a JSON-ready dict:

- ``("stream", {"name": "stdout" | "stderr", "text": str})``: printed text;
- ``("display", {"html": str} | {"text": str})``: a rich or plain value;
- ``("error", {"traceback": str})``: the cell raised; the text is a Python
  traceback with the cell's own frames (library frames collapsed, see
  ``format_cell_traceback``).

``input()`` and ``sys.stdin`` raise ``RuntimeError`` in a cell: a page has no
keyboard stream for Python to read.

The value of a cell's last expression is displayed, as in a notebook. Objects with
``_repr_html_()`` are shown as HTML; anything else by ``repr()``.
"""
from __future__ import annotations

import json
import ast
import contextlib
import io
import linecache
import os
import re
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable

Emit = Callable[[str, dict], None]
# The page's language ("es" or "en"), set by ``prepare``: the kernel's own messages and the name a
# traceback gives a cell («<celda 3>», "<cell 3>") are in it.
LANGUAGE = "es"
CELL_PREFIXES = {"es": "<celda ", "en": "<cell "}
CELL_PREFIX = CELL_PREFIXES["es"]
INPUT_MESSAGES = {
    "es": ("input() no está disponible en las celdas: escribe el valor en el código "
           "(por ejemplo, nombre = \"Ana\") / input() is not available in the cells: "
           "assign the value in the code instead."),
    "en": ("input() is not available in the cells: assign the value in the code instead "
           "(for example, name = \"Ana\")."),
}
INPUT_MESSAGE = INPUT_MESSAGES["es"]


class Output:
    """Printed text on its way to ``emit``, in batches.

    Text is sent when the stream changes (stdout/stderr keep their order), when
    ``BATCH_CHARS`` characters are waiting, ``BATCH_SECONDS`` after the last send,
    and before any other event. A loop that prints a million lines thus sends
    hundreds of messages, not millions, and a slow loop still shows its progress.
    """
    BATCH_CHARS = 8192
    BATCH_SECONDS = 0.05

    def __init__(self, emit: Emit):
        self._emit = emit
        self._name: str | None = None
        self._parts: list[str] = []
        self._size = 0
        self._sent_at = 0.0

    def write(self, name: str, text: str) -> None:
        if name != self._name:
            self.flush()
            self._name = name
        self._parts.append(text)
        self._size += len(text)
        if (self._size >= self.BATCH_CHARS
                or time.monotonic() - self._sent_at >= self.BATCH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if self._parts:
            self._emit("stream", {"name": self._name, "text": "".join(self._parts)})
            self._parts, self._size = [], 0
        self._sent_at = time.monotonic()

    def event(self, kind: str, payload: dict) -> None:
        """Send any waiting text, then a ``display`` or ``error`` event."""
        self.flush()
        self._emit(kind, payload)


class CellStream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` while a cell runs."""

    def __init__(self, output: Output, name: str):
        self._output = output
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            self._output.write(self.name, text)
        return len(text)

    def flush(self) -> None:  # print(..., flush=True) sends the text now
        self._output.flush()


def rich_payload(value: Any) -> dict:
    """``{"html": ...}`` for objects with ``_repr_html_``, else ``{"text": repr}``."""
    to_html = getattr(value, "_repr_html_", None)
    if callable(to_html) and not isinstance(value, type):
        html = to_html()
        if html is not None:
            return {"html": str(html)}
    return {"text": repr(value)}


def is_masker_error(error: BaseException) -> bool:
    """True for ``masker.errors.MaskerError`` and its subclasses: errors in the
    reader's input whose message already names the position (with a caret)."""
    return any(cls.__name__ == "MaskerError" and cls.__module__ == "masker.errors"
               for cls in type(error).__mro__)


def short_path(filename: str) -> str:
    """A library file's path relative to the ``sys.path`` entry that holds it."""
    roots = [p for p in sys.path if p and filename.startswith(p.rstrip("/") + "/")]
    if not roots:
        return os.path.basename(filename)
    return filename[len(max(roots, key=len).rstrip("/")) + 1:]


def format_frames(tb) -> list[str]:
    """The cell's frames in full; each run of library frames (the project's
    packages, the standard library, NumPy) as one line naming its files."""
    lines: list[str] = []
    library: list[str] = []

    def close_run() -> None:
        if library:
            files = ", ".join(dict.fromkeys(short_path(f) for f in library))
            count = len(library)
            lines.append(f"  … {count} frame{'s' if count > 1 else ''} in {files} …\n")
            library.clear()

    for frame in traceback.extract_tb(tb):
        if frame.filename == __file__:  # the kernel's own helpers (no_input)
            continue
        if frame.filename.startswith(tuple(CELL_PREFIXES.values())):
            close_run()
            lines.extend(traceback.format_list([frame]))
        else:
            library.append(frame.filename)
    close_run()
    return lines


def format_cell_traceback(error: BaseException, _seen: set[int] | None = None) -> str:
    """The traceback of ``error`` as the reader needs it.

    Frames before the first cell frame (the kernel's) are dropped and runs of
    library frames are collapsed into one line (see ``format_frames``). A
    ``MaskerError`` shows only its type and message: it is about the reader's
    regex, schema or grammar, and its message points at the position. Chained
    exceptions (``raise ... from``, errors while handling another) come first,
    as in Python's own tracebacks.
    """
    seen = _seen if _seen is not None else set()
    seen.add(id(error))
    text = ""
    if error.__cause__ is not None and id(error.__cause__) not in seen:
        text = (format_cell_traceback(error.__cause__, seen)
                + "\nThe above exception was the direct cause of the following exception:\n\n")
    elif (error.__context__ is not None and not error.__suppress_context__
          and id(error.__context__) not in seen):
        text = (format_cell_traceback(error.__context__, seen)
                + "\nDuring handling of the above exception, another exception occurred:\n\n")
    only = "".join(traceback.format_exception_only(type(error), error))
    if is_masker_error(error):
        return text + only
    tb = error.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(tuple(CELL_PREFIXES.values())):
        tb = tb.tb_next
    frames = format_frames(tb)
    if frames:
        text += "Traceback (most recent call last):\n" + "".join(frames)
    return text + only


def no_input(prompt: Any = "") -> str:
    """``input()`` inside a cell: there is no keyboard to read from."""
    raise RuntimeError(INPUT_MESSAGES[LANGUAGE])


class NoStdin(io.TextIOBase):
    """``sys.stdin`` while a cell runs: reading raises ``RuntimeError`` at once."""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise RuntimeError(INPUT_MESSAGES[LANGUAGE])

    def readline(self, size: int | None = -1) -> str:
        raise RuntimeError(INPUT_MESSAGES[LANGUAGE])


FOREIGN_REQUEST_NOTES = {
    "es": ("\nLa petición a {url} no salió de la página: este sitio solo deja leer archivos de su "
           "propio origen ({origin}), por su política de seguridad (Content-Security-Policy, "
           "connect-src 'self'). Las lecciones funcionan sin conexión: escribe en la celda los datos "
           "que necesites. / The site's Content-Security-Policy allows requests to its own origin only.\n"),
    "en": ("\nThe request to {url} never left the page: this site may only read files from its own "
           "origin ({origin}), by its security policy (Content-Security-Policy, connect-src 'self'). "
           "The lessons work offline: write the data you need into the cell.\n"),
}
FOREIGN_REQUEST_NOTE = FOREIGN_REQUEST_NOTES["es"]


def foreign_request_note(message: str, origin: str | None) -> str:
    """A note for an error whose message names a URL outside ``origin`` (a cell tried to reach
    another site and the page's Content-Security-Policy refused it); ``""`` otherwise.

    ``origin`` is the page's, e.g. ``"http://127.0.0.1:8000"``; None (CPython) means no note.
    """
    if not origin:
        return ""
    for url in re.findall(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", message, flags=re.I):
        url = url.rstrip(".,;:)")
        if not url.startswith(origin.rstrip("/") + "/") and url != origin:
            return FOREIGN_REQUEST_NOTES[LANGUAGE].format(url=url, origin=origin)
    return ""


class Kernel:
    """Runs cells in one namespace; ``count`` is the number of cells run so far.

    ``origin`` is the page's origin, when there is a page: an error naming a URL outside it gets
    ``foreign_request_note`` after its traceback.
    """

    def __init__(self, emit: Emit, origin: str | None = None):
        self._output = Output(emit)
        self._origin = origin
        self._builtins = {"display": self.display, "input": no_input}
        self.namespace: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every cell run so far: an empty namespace (the kernel's ``display`` and
        ``input`` only) and ``count`` back to 0. Modules the cells imported stay loaded, as after
        ``del`` of their names. The end-to-end tests reuse one page for many tests and call this
        between them (the worker's ``reset`` message)."""
        self.count = 0
        self.namespace = {"__name__": "__main__", **self._builtins}

    def names(self) -> list[str]:
        """The names the cells have defined (variables, functions, classes, imported modules),
        sorted; names starting with ``_`` and the kernel's own ``display``/``input`` are left out.
        The page lists them when a restart loses them."""
        return sorted(name for name, value in self.namespace.items()
                      if not name.startswith("_") and self._builtins.get(name) is not value)

    def display(self, *values: Any) -> None:
        """Show each value in the running cell's output (HTML when it has one)."""
        for value in values:
            self._output.event("display", rich_payload(value))

    def run(self, code: str) -> bool:
        """Run one cell's source; return True on success, False if it raised.

        Exceptions never escape (KeyboardInterrupt from Stop included): they are
        emitted as an ``error`` event, so the next cell runs as usual.
        """
        self.count += 1
        filename = f"{CELL_PREFIXES[LANGUAGE]}{self.count}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        out, err = CellStream(self._output, "stdout"), CellStream(self._output, "stderr")
        with (contextlib.redirect_stdout(out), contextlib.redirect_stderr(err),
              redirect_stdin(NoStdin())):
            try:
                with interruptible():
                    value = self._execute(code, filename)
                    if value is not None:
                        self.display(value)
            except BaseException as error:  # the cell's error, reported, never raised
                text = format_cell_traceback(error)
                text += foreign_request_note(text.rstrip().rsplit("\n", 1)[-1], self._origin)
                self._output.event("error", {"traceback": text})
                return False
            finally:
                self._output.flush()
        return True

    def _execute(self, code: str, filename: str) -> Any:
        """Exec all statements; evaluate a trailing expression and return its value."""
        tree = ast.parse(code, filename, "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, filename, "exec"), self.namespace)
        if last is None:
            return None
        expression = ast.Expression(last.value)
        return eval(compile(expression, filename, "eval"), self.namespace)


@contextlib.contextmanager
def interruptible():
    """Inside the block SIGINT raises ``KeyboardInterrupt`` (``signal.default_int_handler``);
    after it, SIGINT has the handler it had before.

    The page's worker ignores SIGINT between cells (``SIG_IGN``, set in worker.js), and the page
    may write Stop's request more than once (kernel-client.js, ``interrupt``): a request that
    Python reads after the cell's code has ended is then dropped, instead of raising in the
    kernel's own report of the cell or in ``names()``. Signals reach only the main thread, and
    only it may set a handler: in another thread the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:  # None: a handler set outside Python, which Python can only put back as the default
        signal.signal(signal.SIGINT, signal.SIG_DFL if saved is None else saved)


@contextlib.contextmanager
def redirect_stdin(stream: io.TextIOBase):
    """``sys.stdin`` is ``stream`` inside the block."""
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved


def prepare(py_dir: str, weights_dir: str, language: str = "es",
            vocabularies: str = "{}") -> None:
    """Put the project's Python on ``sys.path``, point the model at its weights, and make the
    lesson code write in the page's ``language`` ("es" or "en": ``lesson.i18n.set_language``,
    which raises ValueError for any other).

    Called by the worker before any project code runs. ``minigpt`` reads ``MINIGPT_WEIGHTS`` to
    find the tokenizer and model files (``minigpt.bpe.weights_dir``); in the page, this is the one
    place that sets it. ``vocabularies``: JSON, file name -> URL of the site's real tokenizers'
    files (``vocab/``), put in ``COURSE_VOCABULARIES`` for ``vocabularies.load``; "{}" (a page
    that lists none, or the build's CPython) removes it, so ``load`` reads ``node_modules/``.
    Mutates ``sys.path`` and ``os.environ``.
    """
    if py_dir not in sys.path:
        sys.path.insert(0, py_dir)
    os.environ["MINIGPT_WEIGHTS"] = weights_dir
    if json.loads(vocabularies):
        os.environ["COURSE_VOCABULARIES"] = vocabularies
    else:
        os.environ.pop("COURSE_VOCABULARIES", None)
    from lesson import i18n  # after sys.path has py_dir
    i18n.set_language(language)  # raises ValueError for a language the course lacks
    global LANGUAGE
    LANGUAGE = language
