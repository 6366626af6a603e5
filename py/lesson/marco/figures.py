"""Every figure that the prose of «Python en el navegador» quotes, from the committed weights.

The page's model cells print the five most likely next tokens after two prompts, one ending in a
space and one not; the prose says what kind of token leads each list, in words computed here.
Figures that are text (the picture, the count in words) are stored in both languages,
``{"es": ..., "en": ...}`` (``lesson.i18n.each_language``): each edition's template takes its own.
"""
from __future__ import annotations

import unicodedata

import numpy as np

from ..i18n import _, each_language
from ..views import token_label
from .picture import next_tokens_svg

WITH_SPACE = "La señora "   # the prompt of the cell «Modelo»
WITHOUT_SPACE = "La señora"  # the cell after it: the same prompt without its last space
TOP = 5                      # how many tokens the cells print


def next_tokens(model, tok, prompt: str, k: int = TOP) -> list[dict]:
    """The ``k`` most likely next tokens after ``prompt`` under ``model`` (float32, as the cell
    computes them): each ``{"id", "label", "box", "p", "kind"}`` (``label`` the
    decoded text, ``box`` its ``views.token_label``, space as ␣), most likely first. ``kind`` is
    ``"letter"`` when the token's text starts with a letter (it writes a word or its end),
    ``"space"`` when it starts with white space, else ``"punctuation"``."""
    p = probabilities(model, tok, prompt)
    out = []
    for i in np.argsort(-p)[:k]:
        text = tok.decode([int(i)])
        kind = "letter" if text[:1].isalpha() else "space" if text[:1].isspace() else "punctuation"
        out.append({"id": int(i), "label": text, "box": token_label(tok.vocab[int(i)]), "p": float(p[i]), "kind": kind})
    return out


def probabilities(model, tok, prompt: str) -> np.ndarray:
    """p(next token | prompt) under ``model``, float32, shape (vocabulary,), as the cells compute it."""
    logits = model.forward(np.array([tok.encode(prompt)]))[0, -1]
    p = np.exp(logits - logits.max())
    return p / p.sum()


def space_tokens(tok) -> tuple[list[dict], int]:
    """Where the vocabulary puts spaces: the tokens whose bytes start with a space, each
    ``{"id", "box"}`` (id order), and how many tokens end with one (as the cell «Sin el espacio»
    prints them)."""
    starting = [{"id": i, "box": token_label(v)} for i, v in enumerate(tok.vocab) if v[:1] == b" "]
    return starting, sum(v[-1:] == b" " for v in tok.vocab)


def space_mass(model, tok, prompt: str) -> float:
    """The probability that the token after ``prompt`` starts with a space (float32 sum, as the
    cell «Sin el espacio» prints it)."""
    starts = np.array([tok.vocab[i][:1] == b" " for i in range(len(tok.vocab))])
    return float(probabilities(model, tok, prompt)[starts].sum())


def number_word(n: int) -> str:
    """``n`` (0 to 6) as a word in the current language, as the prose writes a small count:
    5 -> "cinco" ("five"). Raises IndexError for any other ``n``."""
    if not 0 <= n <= 6:
        raise IndexError(f"number_word knows 0 to 6, not {n}")
    return (_("cero"), _("uno"), _("dos"), _("tres"), _("cuatro"), _("cinco"), _("seis"))[n]


def compute_figures(model, tok) -> dict:
    """The vocabulary's make-up (bytes and learned merges) and the two prompts' next tokens."""
    with_space = next_tokens(model, tok, WITH_SPACE)
    without = next_tokens(model, tok, WITHOUT_SPACE)
    ends = {key: tok.encode(prompt)[-1] for key, prompt in
            (("with_space", WITH_SPACE), ("without_space", WITHOUT_SPACE))}
    first = 256  # the first merge's token id (Tokenizer: merge k makes token 256 + k)
    # one position earlier: the prompt without its last token (the lone «a»), whose most likely
    # next token the cell prints; the prose says the model expects the space there, inside a token
    stem = tok.decode(tok.encode(WITHOUT_SPACE)[:-1])
    stem_next = next_tokens(model, tok, stem, 1)[0]
    starting, ending = space_tokens(tok)
    picture = each_language(next_tokens_svg, with_space, without, WITHOUT_SPACE)  # {"es", "en"}
    return {
        "picture": picture,
        "last_token": {key: {"id": i, "box": token_label(tok.vocab[i])} for key, i in ends.items()},
        "first_merge": {"id": first, "box": token_label(tok.vocab[first])} if tok.merges else None,
        # the prose's explanation holds when the prompt with the space ends in the first merge and
        # the one without it in that merge's left byte (then no space can follow it: see the test)
        "ends_explain": bool(tok.merges) and ends["with_space"] == first
                        and tok.vocab[ends["without_space"]] + b" " == tok.vocab[first],
        "space_mass_without": space_mass(model, tok, WITHOUT_SPACE),
        "space_initial": starting, "space_final": ending,
        "stem": stem, "stem_next": stem_next,
        # «da … a a␣, que escribe la a y el espacio juntos»: the stem's most likely next token is
        # the lone «a» that ends the prompt, followed by a space
        "stem_next_carries_space": tok.vocab[stem_next["id"]] == tok.vocab[ends["without_space"]] + b" ",
        "vocab": len(tok.vocab), "bytes": len(tok.vocab) - len(tok.merges), "merges": len(tok.merges),
        "top": TOP, "top_word": each_language(number_word, TOP),  # {"es": "cinco", "en": "five"}
        "with_space": with_space, "without_space": without,
        "with_space_all_letter": all(t["kind"] == "letter" for t in with_space),
        # «empiezan todos por un signo de puntuación»: a Unicode punctuation mark (P*), not just
        # any non-letter (the picture's orange, which also takes other symbols)
        "without_space_all_punctuation": all(
            t["kind"] == "punctuation" and unicodedata.category(t["label"][:1]).startswith("P")
            for t in without),
    }
