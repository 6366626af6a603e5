"""The «Laboratorio»'s settings checked before anything runs (a link can hold any value):
:func:`check_settings` (seed, temperature, top-k, top-p, the token budget) and
:func:`check_prompt`, with messages in the current language (a
:class:`~lesson.laboratorio.constraint.ConstraintError`).
"""

from __future__ import annotations

import re



from ..i18n import _, ngettext
from ..numbers import fmt_int
from .words import count

from .constraint import ConstraintError, _shown


SEED_MAX = 2**32 - 1  # the largest seed: numpy takes any integer from 0, the page keeps 32 bits
MAX_TOKENS = 200  # the form's limit for «tokens como máximo» (act; a Lab in a cell has the model's context)


def _now(value) -> str:
    """«ahora vale 2,5», or «ahora está vacío» for none (the page's ``invalid()`` says the same)."""
    if value is None or value == "":
        return _("ahora está vacío")
    return _("ahora vale {value}").format(value=_shown(value))


def _integer(value, name: str, low: int, high: int | None, none_ok: bool, key: str):
    """``value`` as an int in [low, high] (an integral float counts: a link's JSON may give 5.0),
    or None when ``none_ok``; ConstraintError otherwise. ``name``: the setting's name, already in
    the current language."""
    if value is None and none_ok:
        return None
    ok = (isinstance(value, int) or (isinstance(value, float) and value == value and value not in
                                     (float("inf"), float("-inf")) and value.is_integer())) \
        and not isinstance(value, bool) and low <= value and (high is None or value <= high)
    if not ok:
        bound = (_("un entero de {low} a {high}").format(low=fmt_int(low), high=fmt_int(high)) if high is not None
                 else _("un entero de {low} o más").format(low=fmt_int(low)))
        empty = " " + _("(o vacío)") if none_ok else ""
        raise ConstraintError(_("{name} tiene que ser {bound}{empty}; {now}").format(
                                  name=name, bound=bound, empty=empty, now=_now(value)),
                              _("escribe en {name} {bound}").format(name=name, bound=bound), key)
    return int(value)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


def check_settings(seed=0, temperature=1.0, top_k=None, top_p=None, max_tokens=None, *,
                   max_tokens_limit: int | None = None) -> dict:
    """The sampling settings, checked, as a dict (seed, temperature, top_k, top_p, max_tokens; the
    integers as int). seed: an integer 0..SEED_MAX; temperature: a number > 0; top_k: an integer
    >= 1 or None; top_p: a number in (0, 1] or None; max_tokens: an integer >= 1 (at most
    ``max_tokens_limit`` when given) or None. Raises ConstraintError (kind "settings.<name>") with
    a message in the current language that names the setting and its value: a link can hold any of
    them."""
    seed = _integer(seed, _("la semilla"), 0, SEED_MAX, False, "settings.seed")
    if not _number(temperature) or temperature <= 0:
        raise ConstraintError(_("la temperatura tiene que ser un número mayor que 0; {now}").format(
                                  now=_now(temperature)),
                              _("mueve el control de la temperatura"), "settings.temperature")
    top_k = _integer(top_k, "top-k", 1, None, True, "settings.top_k")
    if top_p is not None and (not _number(top_p) or not 0 < top_p <= 1):
        raise ConstraintError(_("top-p tiene que ser un número mayor que 0 y de 1 como mucho (o vacío); "
                                "{now}").format(now=_now(top_p)),
                              _("escribe en top-p un número como 0,9, o déjalo vacío"), "settings.top_p")
    max_tokens = _integer(max_tokens, _("«tokens como máximo»"), 1, max_tokens_limit, True, "settings.max_tokens")
    return {"seed": seed, "temperature": float(temperature), "top_k": top_k,
            "top_p": None if top_p is None else float(top_p), "max_tokens": max_tokens}


def check_prompt(model, tok, prompt: str, max_tokens: int | None) -> None:
    """ConstraintError (current language) for an empty prompt, or one that leaves no room in the
    model's context for ``max_tokens`` new tokens (:func:`lesson.sampling.check_settings`'s checks)."""
    if not isinstance(prompt, str) or not tok.encode(prompt):
        raise ConstraintError(_("el prompt está vacío: el modelo necesita al menos un token del que partir"),
                              _("escribe un prompt"), "settings.prompt")
    n, n_ctx = len(tok.encode(prompt)), model.config.n_ctx
    if n + (max_tokens or 1) > n_ctx:
        room = n_ctx - n
        fix = (_("baja «tokens como máximo» a {room} como mucho, o acorta el prompt").format(room=fmt_int(room))
               if room >= 1 else _("acorta el prompt"))
        new = count(ngettext("{n} token nuevo", "{n} tokens nuevos", max_tokens or 1), max_tokens or 1)
        raise ConstraintError(_("el prompt ({tokens}) y {new} no caben en el contexto del modelo, de "
                                "{context}").format(tokens=count(ngettext("{n} token", "{n} tokens", n), n), new=new,
                                                    context=count(ngettext("{n} token", "{n} tokens", n_ctx), n_ctx)),
                              fix, "settings.context")


# sampling's own English ValueErrors (lesson.sampling), for a case the checks above let through:
# (pattern, message and fix in the current language, from the match's groups)
_SAMPLING_ERRORS = [
    (r"the model gives probability 0 to every allowed token after .*",
     lambda: (_("el modelo da probabilidad 0 a todos los tokens que la restricción permite aquí (a esta "
                "temperatura se redondean a 0)"), _("sube la temperatura, o cambia la restricción"))),
    (r"position must be in 1\.\.(\d+), found (-?\d+)",
     lambda last, found: (_("la posición {found} no existe en esta rama (va de 1 a {last})").format(
         found=found, last=last), _("elige una posición de la rama"))),
    (r"token (\d+) is not allowed after .*",
     lambda token: (_("el token {token} no está permitido en esta posición").format(token=token),
                    _("elige uno de los tokens que la máscara permite"))),
]


def _spanish_value_error(error: ValueError) -> ConstraintError:
    """An action's ValueError as the error view shows it: ours are in the current language already
    (raised with ``_()``); sampling's English ones are put in it (:data:`_SAMPLING_ERRORS`)."""
    text = str(error)
    for pattern, words in _SAMPLING_ERRORS:
        match = re.fullmatch(pattern, text, re.DOTALL)
        if match:
            groups = [g.replace("-", "\u2212") for g in match.groups()]
            message, fix = words(*groups)
            return ConstraintError(message, fix, "run")
    return ConstraintError(text, kind="run")
