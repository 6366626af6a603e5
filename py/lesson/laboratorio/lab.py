"""The «Laboratorio»: any constraint on the mini-GPT, driven from a form instead of code.

The page's form sends its fields here (:class:`Lab`); every action returns the HTML of the whole
view, rendered by the same ``_repr_html_`` views as the lessons. Nothing here is specific to the
page: a cell can build a ``Lab`` and call the same methods.

The Lab is split by what it does: :mod:`~lesson.laboratorio.constraint` (compiling the constraint,
its errors and their view), :mod:`~lesson.laboratorio.settings` (checking the settings and the
prompt), :mod:`~lesson.laboratorio.presets`, this module (the experiment and its branch tree) and
:mod:`~lesson.laboratorio.protocol` (the page's ``act``). This module also names what the first
three define, for the callers that import it from here.

Every other message is a Spanish id wrapped in ``_()``/``ngettext()`` (``lesson.i18n``), put in
English by the catalog ``locale/en/LC_MESSAGES/laboratorio.po``.
- :class:`Lab`: a tree of branches (:mod:`lesson.laboratorio.tree`), each a
  :class:`~lesson.sampling.Decoder`, with ``generate`` (to the end), ``step`` (one token),
  ``next_choice`` (through forced positions), ``choose`` (the reader's token at any position: the
  branch goes on, or a new one leaves it there, with ``Decoder.fork_at``), ``select``, ``open``,
  ``tree``/``restore`` (the tree as the page's address holds it), and :meth:`Lab.view`
  (:mod:`lesson.laboratorio.lab_views`).
- :func:`refused_at`: why a token is not allowed: the first of its bytes the grammar refuses.
- :data:`PRESETS`: constraints and prompts to start from (and, for some, settings: a seed or a
  budget that the page applies with them).

Test hooks of the view: see :mod:`lesson.laboratorio.lab_views`; ``[data-testid=lab-error]``
for an error.
"""

from __future__ import annotations

import numpy as np

from masker import MaskerError

from ..course import PROMPT
from ..i18n import _, ngettext
from ..sampling import Decoder
from ..token_language import forced_kind
from .constraint import _shown, compile_constraint
from .lab_views import lab_view_html
from .settings import _spanish_value_error, check_prompt, check_settings
from .tree import MAX_BRANCHES, Branch, advance, decode_tree, encode_tree, offered_at, replay, take
from .words import count

# What the other parts define, named here too for the callers that import them from this module.
from .constraint import (EMPTY, KIND_NAMES, KINDS, ConstraintError,  # noqa: E402,F401
                         english_error, error_heading, error_html, kind_names, masker_error, spanish_error)
from .lab_views import refused_at  # noqa: E402,F401
from .presets import PRESETS, preset_titles  # noqa: E402,F401
from .settings import MAX_TOKENS, SEED_MAX  # noqa: E402,F401


class Lab:
    """One experiment: a constraint, a prompt and sampling settings, and its tree of branches.

    model, tok: the mini-GPT and its tokenizer. kind/constraint: see :func:`compile_constraint`
    (errors are raised here, before any model work, as ConstraintError; so are the settings'
    and the prompt's, :func:`check_settings` and :func:`check_prompt`). The other arguments are those of
    :func:`lesson.sampling.generate` (``stop_at_accept``: stop at the first complete text, for
    grammars whose texts can always go on). ``compare=True`` also runs the same seed without the
    constraint, side by side.

    ``branches``: the tree (:class:`~lesson.laboratorio.tree.Branch`, the first one from the
    prompt); ``current``: the index of the branch on show; ``decoder`` is its decode loop.
    ``selected``: the 1-based position open in the detail (None: the next one, or the first real
    choice once the branch is done). Nothing is ever discarded: choosing a token at an earlier
    position adds a branch.
    """

    def __init__(self, model, tok, *, kind: str = "choice", constraint: str = "", prompt: str = PROMPT,
                 seed: int = 0, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, max_tokens: int | None = 120, stop_at_accept: bool = False,
                 compare: bool = False):
        self.model, self.tok = model, tok
        self.settings = check_settings(seed, temperature, top_k, top_p, max_tokens)
        check_prompt(model, tok, prompt, self.settings["max_tokens"])
        self.grammar = compile_constraint(kind, constraint)
        self.kind = kind
        self.prompt, self.compare, self.stop_at_accept = prompt, compare, stop_at_accept
        self.branches = [Branch(self._fresh_decoder())]
        self.current = 0
        self.unconstrained = None
        self.selected: int | None = None
        self.compare_with: int | None = None  # the branch the reader compares the current one with
        self.note = ""  # said once in the summary (e.g. why a new experiment started)

    def _fresh_decoder(self) -> Decoder:
        return Decoder(self.model, self.tok, self.prompt, self.grammar, stop_at_accept=self.stop_at_accept,
                       **self.settings)

    @property
    def branch(self) -> Branch:
        return self.branches[self.current]

    @property
    def decoder(self) -> Decoder:
        """The current branch's decode loop."""
        return self.branch.decoder

    def generate(self, limit: int | None = None) -> "Lab":
        """Run the current branch to its end, or for ``limit`` more tokens at most (then it stays
        in progress: the page runs long generations in pieces, to show progress and stop between)."""
        self.branch.stopped = False
        advance(self.branch, None if limit is None else len(self.decoder.generation.token_ids) + int(limit))
        self.selected = None
        return self._compare_when_done()

    def stop(self) -> "Lab":
        """Mark the current branch «detenida» (the reader stopped it); its text is kept."""
        if not self.decoder.done:
            self.branch.stopped = True
        return self

    def step(self) -> "Lab":
        """One more token, sampled, on the current branch; the next position opens in the detail.
        On a finished branch nothing happens, and the summary says so."""
        if self._said_done():
            return self
        take(self.decoder)
        self.selected = None  # the next position opens (the strip shows the new one)
        return self._compare_when_done()

    def next_choice(self) -> "Lab":
        """«Paso hasta la próxima elección»: one token, then on through every forced position
        (one token offered, or one text with several token splits) until the next position offers
        a real choice or the branch ends; that next position opens in the detail."""
        if self._said_done():
            return self
        take(self.decoder)
        while not self.decoder.done and self._next_is_forced():
            take(self.decoder)
        self.selected = None
        if self.decoder.done:
            self.note = _("no quedaba ninguna elección de verdad: la rama llegó a su final")
        return self._compare_when_done()

    def _said_done(self) -> bool:
        if self.decoder.done:
            self.note = _("esta rama ya terminó: elige otro token en una de sus posiciones para abrir "
                          "una rama nueva, o pulsa «Generar» para empezar otra vez")
        return self.decoder.done

    def _next_is_forced(self) -> bool:
        """Whether the current branch's next position leaves the reader no real choice."""
        decoder = self.decoder
        tokens = offered_at(decoder, len(decoder.generation.token_ids) + 1)
        if len(tokens) <= 1:
            return True
        ids = np.array(sorted(t for t, _, _ in tokens))
        return decoder.matcher is not None and forced_kind(decoder.matcher, ids, self.stop_at_accept) is not None

    def choose(self, position: int, token_id: int) -> "Lab":
        """The reader's token at a 1-based position of the current branch.

        At the branch's next position (while it can go on) the branch goes on with it. At an
        earlier position a new branch leaves the current one there, with the same settings: it
        keeps the tokens before ``position``, takes ``token_id`` and, when the current branch had
        run to its end, runs to its own end too; it becomes the current branch. Choosing the same
        token again opens the branch that already has it. ValueError (current language) for a position
        outside the branch, a token the settings do not offer there (q̃ = 0), or a full tree.
        """
        decoder, position, token_id = self.decoder, int(position), int(token_id)
        n = len(decoder.generation.token_ids)
        self.note = ""
        if position == n + 1 and not decoder.done:
            take(decoder, token_id)
            self.branch.picks[position] = token_id
            self.selected = None
            return self._compare_when_done()
        offered_ids = {t for t, _, _ in offered_at(decoder, position)}  # ValueError outside the branch
        if token_id not in offered_ids:
            raise ValueError(_("el token {token} no está entre los que los ajustes permiten en la "
                               "posición {position} (q̃ = 0)").format(token=token_id, position=position))
        self.selected = position
        if decoder.generation.token_ids[position - 1] == token_id:
            self.note = _("esta rama ya tiene ese token en la posición {position}").format(position=position)
            return self
        prefix = decoder.generation.token_ids[:position - 1] + [token_id]
        same = next((i for i, b in enumerate(self.branches) if b.decoder.generation.token_ids[:position] == prefix), None)
        if same is not None:  # another branch already goes this way: show it, don't copy it
            self.current = same
            if position == 1:
                self.note = _("la rama {i} ya empieza por ese token: se abre ella en vez de repetirla").format(
                    i=same + 1)
            else:
                self.note = _("la rama {i} ya tiene estos {n} primeros tokens: se abre ella en vez de "
                              "repetirla").format(i=same + 1, n=position)
            return self._compare_when_done()
        self.current = self._fork(position, token_id)
        return self._compare_when_done()

    def pick(self, token_id: int) -> "Lab":
        """The reader's token for the current branch's next position (:meth:`choose` there)."""
        return self.choose(len(self.decoder.generation.token_ids) + 1, token_id)

    def _fork(self, position: int, token_id: int) -> int:
        """The index of the branch that leaves the current one at ``position`` with ``token_id``
        (made now, unless it exists)."""
        for i, b in enumerate(self.branches):
            if (b.parent, b.start, b.start_token) == (self.current, position, token_id):
                return i
        if len(self.branches) >= MAX_BRANCHES:
            raise ValueError(_("el árbol ya tiene {n} ramas, las que caben: pulsa «Generar» "
                               "para empezar otro").format(n=MAX_BRANCHES))
        fork = self.decoder.fork_at(position)
        take(fork, token_id)
        branch = Branch(fork, self.current, position, token_id)
        if self.decoder.done:
            advance(branch)
        self.branches.append(branch)
        return len(self.branches) - 1

    def select(self, index: int) -> "Lab":
        """Show branch ``index`` (0-based, as ``data-index``); ValueError when there is none."""
        if not 0 <= int(index) < len(self.branches):
            n = len(self.branches)
            raise ValueError(_("no hay rama {i}: el árbol tiene {branches}").format(
                i=_shown(int(index) + 1), branches=count(ngettext("{n} rama", "{n} ramas", n), n)))
        self.current, self.selected, self.note = int(index), None, ""
        return self

    def compare_to(self, index: int) -> "Lab":
        """Compare the current branch with branch ``index`` (0-based) in the view; ValueError when
        there is no such branch."""
        if not 0 <= int(index) < len(self.branches):
            n = len(self.branches)
            raise ValueError(_("no hay rama {i}: el árbol tiene {branches}").format(
                i=_shown(int(index) + 1), branches=count(ngettext("{n} rama", "{n} ramas", n), n)))
        self.compare_with, self.note = int(index), ""
        return self

    def open(self, position: int) -> "Lab":
        """Open a 1-based position of the current branch in the detail (its next one included)."""
        offered_at(self.decoder, int(position))  # ValueError outside the branch
        self.selected, self.note = int(position), ""
        return self

    def tree(self) -> str:
        """The tree as the page's address holds it (:func:`~lesson.laboratorio.tree.encode_tree`)."""
        return encode_tree(self.branches)

    def restore(self, tree: str, current: int | None = None, selected: int | None = None) -> "Lab":
        """Rebuild the branches that ``tree`` (from :meth:`tree`) describes, on a new Lab with the
        same settings; ``tree == ""`` runs the first branch to its end. ValueError (current language) when
        the text does not describe a tree these settings give."""
        try:
            self.branches = replay(self._fresh_decoder(), decode_tree(tree))
        except (ValueError, MaskerError) as error:
            why = (masker_error(error, self.kind, "").message if isinstance(error, MaskerError)
                   else _spanish_value_error(error).message)
            raise ConstraintError(_("el enlace no describe un árbol de este experimento: {why}").format(why=why),
                                  _("abre el enlace tal como se copió, o pulsa «Generar» para empezar otro"),
                                  "link") from None
        self.current = current if current is not None and 0 <= current < len(self.branches) else 0
        self.selected = None
        if selected is not None:
            try:
                self.open(selected)
            except ValueError:
                pass
        return self._compare_when_done()

    def _compare_when_done(self) -> "Lab":
        """With ``compare``, a finished branch gets the unconstrained twin of the same seed."""
        if self.decoder.done and self.compare and self.grammar is not None and self.unconstrained is None:
            other = Decoder(self.model, self.tok, self.prompt, None, **self.settings)
            while not other.done:
                other.step()
            self.unconstrained = other.generation
        return self

    @property
    def state(self) -> str:
        return self.branch.state

    def open_position(self) -> int:
        """The position the detail shows: ``selected``, else the next one while the branch can go
        on, else its first real choice (as the strip opens), else 1."""
        gen = self.decoder.generation
        if self.selected is not None:
            return self.selected
        if not self.decoder.done:
            return len(gen.token_ids) + 1
        return next((j for j, pos in enumerate(gen.positions, start=1) if not pos.is_forced), 1)

    def accepted(self, branch: Branch) -> bool:
        return self.grammar.accepts(branch.decoder.generation.bytes) if self.grammar is not None else True

    def view(self) -> str:
        """The whole view as HTML (see :mod:`lesson.laboratorio.lab_views`)."""
        return lab_view_html(self)

    def _repr_html_(self) -> str:
        return self.view()


__all__ = ["ConstraintError", "KINDS", "Lab", "MAX_BRANCHES", "MAX_TOKENS", "PRESETS", "SEED_MAX",
           "check_prompt", "check_settings", "compile_constraint", "english_error", "error_html", "masker_error",
           "preset_titles", "refused_at", "spanish_error"]
