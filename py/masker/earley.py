"""A byte-level Earley recognizer with persistent states (Earley, CACM 13(2), 1970).

Nullable rules are handled as Aycock and Horspool propose ("Practical Earley Parsing", 2002):
when a nullable nonterminal is predicted, the predicting item also moves past it at once.
Left recursion needs no special treatment.

Each ``EarleySet`` is immutable once built and points to the earlier sets its items started in,
so ``step`` never changes a state: the token-trie walk can branch, and a matcher copy is cheap.
Every production is productive (``cfg.py`` removes the others), so a non-empty set means the
bytes so far extend to a complete text: a set with no item is never returned (``step`` -> None).

Work limit: ``max_items`` items per set (one byte of input). Past it ``step`` raises
LimitExceeded rather than freezing the page; highly ambiguous grammars are the usual cause.
"""

from __future__ import annotations

from .errors import LimitExceeded

DEFAULT_MAX_ITEMS = 20_000


class EarleySet:
    """Items after some prefix. ``scans``: (byte mask, prod, dot, origin) for items before a
    terminal; ``waiting[n]``: items before nonterminal n; ``accepting``: the start rule is done."""

    __slots__ = ("scans", "bytes_ok", "waiting", "accepting", "items", "key")

    def __init__(self):
        self.scans: list = []
        self.bytes_ok = 0           # union of the scan masks: a quick test for dead bytes
        self.waiting: dict[int, list] = {}
        self.accepting = False
        self.items: tuple = ()      # the items not yet complete, for the cache key
        self.key: int | None = None  # interned cache key, computed on demand


class EarleyAutomaton:
    """The automaton interface (``automaton.py``) over a grammar in production form.

    ``prods``: list of ``(lhs, rhs)``; rhs symbols >= 0 are nonterminals, a negative symbol ``~t``
    is terminal t whose byte set is the int bitmask ``terminals[t]`` (bit b set = byte b allowed).
    Production 0 is the start production ``START -> root``.
    """

    def __init__(self, prods, terminals, nullable, max_items: int = DEFAULT_MAX_ITEMS):
        self.prods, self.terminals, self.nullable = prods, terminals, nullable
        self.max_items = max_items
        self.by_lhs: dict[int, list[int]] = {}
        for i, (lhs, _) in enumerate(prods):
            self.by_lhs.setdefault(lhs, []).append(i)
        self.start_lhs = prods[0][0]
        self._interned: dict[tuple, int] = {}
        self._start = self._build([(0, 0, None)])

    def start(self) -> EarleySet:
        return self._start

    def step(self, state: EarleySet, byte: int) -> EarleySet | None:
        if not state.bytes_ok >> byte & 1:
            return None
        kernel = [(prod, dot + 1, origin) for mask, prod, dot, origin in state.scans
                  if mask >> byte & 1]
        return self._build(kernel) if kernel else None

    def is_accepting(self, state: EarleySet) -> bool:
        return state.accepting

    def can_continue(self, state: EarleySet) -> bool:
        return bool(state.scans)

    def _build(self, kernel) -> EarleySet:
        """Closure of ``kernel`` under prediction and completion: a new set."""
        new = EarleySet()
        prods, terminals, nullable, by_lhs = self.prods, self.terminals, self.nullable, self.by_lhs
        seen, predicted = set(), set()
        agenda = [(p, d, new if o is None else o) for p, d, o in kernel]
        while agenda:
            item = agenda.pop()
            if item in seen:
                continue
            seen.add(item)
            if len(seen) > self.max_items:
                raise LimitExceeded(f"one Earley step needed more than {self.max_items} items",
                                    "max_items", self.max_items, "make the grammar less "
                                    "ambiguous (e.g. avoid x* x* or nested optional repeats) "
                                    "or raise max_items")
            prod, dot, origin = item
            lhs, rhs = prods[prod]
            if dot == len(rhs):  # completion: advance the items that waited for lhs
                if lhs == self.start_lhs:  # START appears in no right-hand side
                    new.accepting = True
                for p2, d2, o2 in origin.waiting.get(lhs, ()):
                    agenda.append((p2, d2 + 1, o2))
                continue
            sym = rhs[dot]
            if sym < 0:
                mask = terminals[~sym]
                new.scans.append((mask, prod, dot, origin))
                new.bytes_ok |= mask
                continue
            new.waiting.setdefault(sym, []).append(item)
            if sym not in predicted:  # prediction
                predicted.add(sym)
                agenda.extend((p, 0, new) for p in by_lhs[sym])
            if sym in nullable:  # Aycock-Horspool: move past a nullable nonterminal now
                agenda.append((prod, dot + 1, origin))
        # complete items have no future (their completions are already in the set): leaving
        # them out of the key lets e.g. every position inside a JSON string share one key
        new.items = tuple(item for item in seen if item[1] < len(prods[item[0]][1]))
        return new

    # --- cache keys: equal keys imply equal futures -------------------------------------------
    def cache_key(self, state: EarleySet) -> int:
        """Interned id of the incomplete items, each with its origin's key (computed on demand,
        without recursion, for the chain of earlier sets). Equal keys -> equal futures: the
        future of a set depends only on its incomplete items and, through completion, on the
        sets their origins point to."""
        todo = [state]
        while todo:
            top = todo[-1]
            if top.key is not None:
                todo.pop()
                continue
            pending = [o for _, _, o in top.items if o is not top and o.key is None]
            if pending:
                todo.extend(pending)
                continue
            items = frozenset((p, d, -1 if o is top else o.key) for p, d, o in top.items)
            items = (top.accepting, items)
            top.key = self._interned.setdefault(items, len(self._interned))
            todo.pop()
        return state.key
