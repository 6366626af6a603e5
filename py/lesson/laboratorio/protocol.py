"""The page's protocol: :func:`act`, the one call the «Laboratorio»'s form makes (the page runs
``act(...)`` as a cell and shows the view it returns), the session's experiment it works on, and
:func:`forget`, after Python was interrupted in the middle of an action.
"""

from __future__ import annotations

import json


from masker import MaskerError

from ..i18n import _

from .constraint import ConstraintError, error_html, masker_error
from .lab import Lab
from .settings import MAX_TOKENS, _shown, _spanish_value_error, check_settings


class _Html:
    """Any HTML string as a displayable object (a cell shows its ``_repr_html_``)."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


_SESSION: dict = {"lab": None, "key": None, "model": None, "tok": None}
SETTINGS = ("kind", "constraint", "prompt", "seed", "temperature", "top_k", "top_p", "max_tokens",
            "stop_at_accept", "compare")


def act(action: str, state, token_id: int | None = None, position: int | None = None,
        branch: int | None = None, limit: int | None = None):
    """What the page's form asks for, as a displayable view; the page runs ``act(...)`` as a cell.

    state: the form's fields (a dict, or its JSON), keys of SETTINGS, and for "restore" ``tree``,
    ``branch`` and ``open`` (what the view's ``data-tree``, ``data-branch`` and ``data-open`` said).
    action:
    - "generate": a new experiment; its first branch runs to the end (or to ``limit`` tokens);
    - "continue": the current branch goes on to the end (or to ``limit`` tokens); "stop": it is
      marked «detenida»;
    - "restore": a new experiment rebuilt from ``state["tree"]`` (a shared link);
    - "step" (one token) and "next" (to the next real choice), starting a new experiment when the
      settings changed;
    - "choose" (``token_id`` at ``position``, 1-based: the current branch goes on, or a new branch
      leaves it), "pick" (``token_id`` at the next position), "open" (``position``), "branch"
      (show branch ``branch``, 0-based), "compare" (compare the current branch with branch
      ``branch``, 0-based).
    Compile and settings errors come back as the error view, in the current language, never as a traceback:
    the settings are checked (:func:`check_settings`, with the form's limit of MAX_TOKENS tokens)
    before anything runs, so a link with ``seed=1e30`` or ``max_tokens=2000`` gets a message too.
    The model and tokenizer are loaded once.
    """
    if isinstance(state, str):
        state = json.loads(state)
    if _SESSION["model"] is None:
        from minigpt.bpe import load_tokenizer
        from minigpt.gpt import load_model
        _SESSION["tok"], _SESSION["model"] = load_tokenizer(), load_model()
    settings = {k: state[k] for k in SETTINGS if k in state}
    key = json.dumps(settings, sort_keys=True)
    try:
        check_settings(**{k: settings[k] for k in ("seed", "temperature", "top_k", "top_p", "max_tokens")
                          if k in settings}, max_tokens_limit=MAX_TOKENS)  # the form's limits, from a link too
        return _run(_lab_for(action, state, settings, key), action, token_id, position, branch, limit)
    except ConstraintError as error:
        if action == "restore":  # a link's tree that does not rebuild: nothing of it is kept
            _SESSION["lab"] = None
        # otherwise the session's experiment stays as it was (a new one that failed to compile
        # never replaced it): the page keeps showing it, and its actions go on with it
        return _Html(error_html(error))
    except MaskerError as error:  # at run time: a work limit (compile errors are ConstraintErrors)
        return _Html(error_html(masker_error(error, settings.get("kind", ""), "")))
    except ValueError as error:
        return _Html(error_html(_spanish_value_error(error)))
    except KeyboardInterrupt:  # the kernel bar's «Detener» interrupted Python in the middle of an action
        _SESSION["lab"] = None  # its branches may be half changed: the next action rebuilds the tree
        return _Html(error_html(ConstraintError(
            _("Python paró esta acción a medias, con «Detener» de la barra de Python"),
            _("la dirección de la página aún guarda el árbol de antes de esta acción: recarga la página "
              "para volver a abrirlo, o pulsa «Generar» para empezar otro"), "stopped")))


def _run(lab, action: str, token_id, position, branch, limit):
    """One of :func:`act`'s actions on the experiment ``lab`` (the session's, or the new one
    :func:`_lab_for` made); its result is the view. Raises ValueError for an unknown action."""
    if action in ("generate", "continue"):
        return lab.generate(limit)
    if action == "restore":
        return lab
    if action == "stop":
        return lab.stop()
    if action == "step":
        return lab.step()
    if action == "next":
        return lab.next_choice()
    if action == "pick":
        return lab.choose(len(lab.decoder.generation.token_ids) + 1, int(token_id))
    if action == "choose":
        return lab.choose(int(position), int(token_id))
    if action == "open":
        return lab.open(int(position))
    if action == "branch":
        return lab.select(int(branch))
    if action == "compare":
        return lab.compare_to(int(branch))
    raise ValueError(_("acción desconocida {action}").format(action=_shown(str(action))))


def forget() -> None:
    """Drop the session's experiment (the page calls it after Python was interrupted in the middle
    of an action, when the branches may be half changed); the next action rebuilds the tree that
    the page's address holds."""
    _SESSION["lab"] = None


def _lab_for(action: str, state: dict, settings: dict, key: str) -> Lab:
    """The experiment an action works on: a new one for "generate" and "restore" (and for "step"
    and "next" when the settings changed), the session's one otherwise."""
    lab = _SESSION["lab"]
    fresh = action in ("generate", "restore") or (action in ("step", "next") and (
        (lab is None and not state.get("tree")) or (lab is not None and key != _SESSION["key"])))
    if not fresh:
        if lab is None and state.get("tree"):
            fresh, action = True, "restore"  # Python started again: the page's tree comes back
        elif lab is None:
            raise ValueError(_("no hay ninguna generación en curso: pulsa «Paso» o «Generar»"))
        elif key != _SESSION["key"]:
            raise ValueError(_("cambiaste los ajustes desde la última generación: pulsa «Generar» para "
                               "empezar con los nuevos"))
    if not fresh:
        lab.note = ""  # said once
    if fresh:
        renewed = action in ("step", "next") and lab is not None and not lab.decoder.done
        lab = Lab(_SESSION["model"], _SESSION["tok"], **settings)
        _SESSION["lab"], _SESSION["key"] = lab, key
        if action == "restore":
            lab.restore(state.get("tree") or "", _int(state.get("branch")), _int(state.get("open")))
        if renewed:
            lab.note = _("nuevo experimento: cambiaron los ajustes")
    return lab


def _int(value) -> int | None:
    """A link's ``branch`` or ``open``: an int, or None (absent, or not an integer: then ignored)."""
    try:
        return None if value in (None, "") else int(value)
    except (TypeError, ValueError):
        return None
