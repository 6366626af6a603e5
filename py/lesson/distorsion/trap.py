"""The particles of one SMC run, followed back through their resamplings: which token split of the
key each particle wrote, what the first resampling copied, what the key's closing quote then cost
each split, and which splits and names the next resampling kept (the prose of «Las partículas en
vivo», in «Corregir la distorsión», and its cell)."""

from __future__ import annotations

import numpy as np

from ..course import NAMES, PROMPT, answer


def lineages(history) -> list[list[list[bytes]]]:
    """``history`` (the Steps of an SMC run 0) as token paths: ``out[j][i]`` is the list of byte
    pieces, one per token, that particle i had written after position j + 1, following the
    resampling's ancestors back (a particle that copies another after a resampling inherits its
    path). A finished particle's path stops growing."""
    out, prev = [], None
    for step in history:
        cur = []
        for i, label in enumerate(step.labels):
            if prev is None:
                cur.append([label])
                continue
            labels, paths, ancestors = prev
            parent = int(ancestors[i]) if ancestors is not None else i
            base = labels[parent]
            cur.append(paths[parent] if label == base else paths[parent] + [label[len(base):]])
        out.append(cur)
        prev = (step.labels, cur, step.ancestors)
    return out


KEY_OPEN = b'{"'  # what comes before the key's own bytes: its token split starts after it


def split_trap(model, tok, result, grammar, prompt: str = PROMPT) -> dict | None:
    """``result``: an :func:`lesson.smc.smc` run (its run 0's history) after ``prompt`` under
    ``grammar`` (texts ``answer(name)``). What the first resampling of ``result``'s run 0 did, read from its ancestry
    (:func:`lineages`), when every particle had then written the opening and the key (``{"nombre``)
    and nothing more: the key's token splits (``"n|om|b|re"``), each with its particles, their
    total normalised weight then, and the copies the resampling gave them; for each split, the
    natural log of the kept mass at the next position (the quote that closes the key: the only
    allowed token there), computed with the model; ``heavy``, the split with the most copies, and
    ``light_ok``, the others. At the second resampling (if any), which first-resampling particles
    the survivors descend from, by split, and ``names_lost``: the names some particle had chosen
    by then that no particle holds at the end, with ``lost_all_on_heavy``: whether every particle
    of theirs descended from ``heavy``. None when the run never resampled, or not at the key.
    Raises ValueError when ``grammar`` allows more than the quote after the key.
    Source: the reading of the page's own run by the December 2026 expert review."""
    hist, resampled = result.history, result.resampled[0]
    if not resampled:
        return None
    first = resampled[0]
    paths = lineages(hist)
    step = hist[first - 1]
    key = answer("")[:answer("").index(":")].encode()  # b'{"nombre"'
    if not all(label == key[:-1] for label in step.labels):  # all at the key, before its quote
        return None
    if not all(b"".join(path[:2]) == KEY_OPEN for path in paths[first - 1]):
        return None
    splits = ["|".join(piece.decode("utf-8", "replace") for piece in path[2:]) for path in paths[first - 1]]
    copies = np.bincount(step.ancestors, minlength=len(splits))
    prompt_ids = tok.encode(prompt)
    groups = {}
    for i, split in enumerate(splits):
        g = groups.setdefault(split, {"split": split, "particles": [], "weight": 0.0, "copies": 0})
        g["particles"].append(i)
        g["weight"] += float(step.weights[i])
        g["copies"] += int(copies[i])
    quote = tok.vocab.index(b'"')
    for split, g in groups.items():
        ids = prompt_ids + [tok.vocab.index(piece) for piece in paths[first - 1][g["particles"][0]]]
        logits = model.forward(np.array([ids]))[0, -1].astype(np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        m = grammar.matcher(tok.vocab)
        m.consume_bytes(key[:-1])
        if list(np.flatnonzero(m.mask())) != [quote]:  # the kept mass is p(") only if " alone is allowed
            raise ValueError("split_trap needs a grammar that allows only the quote after the key")
        g["log_kept_next"] = float(np.log(p[quote]))
    ranked = sorted(groups.values(), key=lambda g: -g["copies"])
    heavy = ranked[0]
    other = ranked[1] if len(ranked) > 1 else None  # the split with the next most copies
    out = {"position": first, "particles": len(splits), "splits": ranked,
           "heavy": heavy["split"], "heavy_copies": heavy["copies"], "heavy_weight": heavy["weight"],
           "other": other and other["split"], "other_copies": other and other["copies"],
           # how many more nats the heavy split pays at the key's closing quote than the other
           "heavy_extra_nats": other and other["log_kept_next"] - heavy["log_kept_next"],
           "second": None, "survivor_splits": [], "survivor_names": [], "names_lost": [],
           "lost_all_on_heavy": False}
    # each particle's first-resampling ancestor, position by position after it
    origin = np.arange(len(splits))
    origin = origin[step.ancestors]  # after the first resampling: particle i descends from origin[i]
    second = next((r for r in resampled if r > first), None)
    if second is not None:
        for j in range(first + 1, second):
            if hist[j - 1].ancestors is not None:
                origin = origin[hist[j - 1].ancestors]
        s2 = hist[second - 1]
        survivors = sorted({int(a) for a in s2.ancestors})
        chosen = {}
        for i in range(len(splits)):
            name = _name_in(paths[second - 1][i])
            if name is not None:
                chosen.setdefault(name, []).append(int(origin[i]))
        final = {_name_in(paths[-1][i]) for i in range(len(splits))}
        lost = sorted(n for n in chosen if n not in final)
        out.update(second=second, survivor_splits=sorted({splits[int(origin[i])] for i in survivors}),
                   survivor_names=sorted({_name_in(paths[second - 1][i]) for i in survivors} - {None}),
                   names_lost=lost,
                   lost_all_on_heavy=bool(lost) and all(splits[o] == heavy["split"] for n in lost for o in chosen[n]))
    return out


def _name_in(pieces: list[bytes]) -> str | None:
    """The name whose initial the path has written after ``{"nombre":"``, or None before it."""
    text = b"".join(pieces)
    prefix = answer("")[:-2].encode()  # b'{"nombre":"'
    if len(text) <= len(prefix) or not text.startswith(prefix):
        return None
    fits = [n for n in NAMES if answer(n).encode().startswith(text) or text.startswith(answer(n).encode())]
    return fits[0] if len(fits) == 1 else None
