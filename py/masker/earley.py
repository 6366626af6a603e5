"""A byte-level Earley recognizer with persistent states (Earley, CACM 13(2), 1970).

Nullable rules are handled as Aycock and Horspool propose ("Practical Earley Parsing", 2002):
when a nullable nonterminal is predicted, the predicting item also moves past it at once.
Left recursion needs no special treatment.

Each ``EarleySet`` is immutable once built and points to the earlier sets its items started in,
so ``step`` never changes a state: the token-trie walk can branch, and a matcher copy is cheap.
Every production is productive (``cfg.py`` removes the others), so a non-empty set means the
bytes so far extend to a complete text: a set with no item is never returned (``step`` -> None).

States are hash-consed: a new set whose key (accepting flag, predicted nonterminals, and its
incomplete older items with their origins' keys) equals an existing set's key *is* that set, so
equal futures share one object, its memoized transitions (``EarleySet.next``) and its cached
mask. Inside a JSON string, for example, every character leads back to the same state: after
warm-up the recognizer behaves like a lazily built DFA.

Work limit: ``max_items`` items per set (one byte of input). Past it ``step`` raises
LimitExceeded rather than freezing the page; highly ambiguous grammars are the usual cause.
"""

from __future__ import annotations

from .automaton import Automaton
from .errors import LimitExceeded

DEFAULT_MAX_ITEMS = 20_000
MAX_CANONICAL_STATES = 50_000  # hash-consing table size; it restarts empty when full


class EarleySet:
    """Items after some prefix. ``scans``: (byte mask, prod, dot, origin) for items before a
    terminal; ``waiting[n]``: items before nonterminal n; ``accepting``: the start rule is done."""

    __slots__ = ("scans", "bytes_ok", "waiting", "accepting", "key", "next")

    def __init__(self):
        self.scans: list = []
        self.bytes_ok = 0           # union of the scan masks: a quick test for dead bytes
        self.waiting: dict[int, list] = {}
        self.accepting = False
        self.key = -1                # interned id; equal ids -> equal futures
        self.next: dict[int, object] = {}  # memoized step(byte) results


class EarleyAutomaton(Automaton):
    """The automaton interface (``automaton.py``) over a grammar in production form; masks use
    the generic trie walk (``Automaton.allowed_tokens``), one memoized ``step`` per trie edge.

    ``prods``: list of ``(lhs, rhs)``; rhs symbols >= 0 are nonterminals, a negative symbol ``~t``
    is terminal t whose byte set is the int bitmask ``terminals[t]`` (bit b set = byte b allowed).
    Production 0 is the start production ``START -> root``.
    """

    def __init__(self, prods, terminals, nullable, max_items: int = DEFAULT_MAX_ITEMS):
        self.prods, self.terminals, self.nullable = prods, terminals, nullable
        self.max_items = max_items
        self.start_lhs = prods[0][0]
        # next_sym[prod][dot]: the symbol after the dot, or None when the item is complete
        self.next_sym = [tuple(rhs) + (None,) for _, rhs in prods]
        self.lhs_of = [lhs for lhs, _ in prods]
        self._precompute_predictions()
        self._canonical: dict[tuple, EarleySet] = {}
        self._next_key = 0
        self._start = EarleySet()
        predicted: set[int] = set()
        self._predict(self._start, self.start_lhs, predicted)
        self._start.accepting = self.start_lhs in nullable
        self._start = self._intern(self._start, predicted, ())

    def _precompute_predictions(self) -> None:
        """For each nonterminal n, the items that predicting n adds directly, with the dot also
        moved past leading nullable symbols (Aycock-Horspool): ``scans[n]`` (mask, prod, dot),
        ``waits[n]`` (symbol, prod, dot), ``bytes_ok[n]``; and ``closure[n]``, every nonterminal
        that predicting n predicts in turn (n included). Items predicted in a set never need a
        completion step: whatever waits for a nullable symbol has already moved past it."""
        self.scans, self.waits, self.bytes_ok = {}, {}, {}
        for prod, (lhs, rhs) in enumerate(self.prods):
            scans, waits = self.scans.setdefault(lhs, []), self.waits.setdefault(lhs, [])
            self.bytes_ok.setdefault(lhs, 0)
            for dot, sym in enumerate(rhs):
                if sym < 0:
                    scans.append((self.terminals[~sym], prod, dot))
                    self.bytes_ok[lhs] |= self.terminals[~sym]
                    break
                waits.append((sym, prod, dot))
                if sym not in self.nullable:
                    break
        self.closure = {}
        for n in self.scans:
            seen, todo = {n}, [n]
            while todo:
                for sym, _, _ in self.waits[todo.pop()]:
                    if sym not in seen:
                        seen.add(sym)
                        todo.append(sym)
            self.closure[n] = tuple(seen)

    def start(self) -> EarleySet:
        return self._start

    def step(self, state: EarleySet, byte: int) -> EarleySet | None:
        if not state.bytes_ok >> byte & 1:
            return None
        nxt = state.next.get(byte)
        if nxt is None:
            kernel = [(prod, dot + 1, origin) for mask, prod, dot, origin in state.scans
                      if mask >> byte & 1]
            nxt = state.next[byte] = self._build(kernel)
        return nxt

    def is_accepting(self, state: EarleySet) -> bool:
        return state.accepting

    def can_continue(self, state: EarleySet) -> bool:
        return bool(state.scans)

    def _predict(self, new: EarleySet, n: int, predicted: set) -> None:
        """Add the items predicted by nonterminal ``n`` (and transitively) to ``new``."""
        for m in self.closure[n]:
            if m in predicted:
                continue
            predicted.add(m)
            new.scans.extend((mask, prod, dot, new) for mask, prod, dot in self.scans[m])
            new.bytes_ok |= self.bytes_ok[m]
            waiting = new.waiting
            for sym, prod, dot in self.waits[m]:
                waiting.setdefault(sym, []).append((prod, dot, new))

    def _build(self, kernel) -> EarleySet:
        """Closure of ``kernel`` (items that started in earlier sets) under completion and
        prediction: a new set."""
        new = EarleySet()
        next_sym, terminals, nullable = self.next_sym, self.terminals, self.nullable
        scans, waiting, lhs_of = new.scans, new.waiting, self.lhs_of
        seen, predicted, pending = set(), set(), []  # pending: incomplete items, for the key
        agenda = list(kernel)
        while agenda:
            item = agenda.pop()
            if item in seen:
                continue
            seen.add(item)
            prod, dot, origin = item
            sym = next_sym[prod][dot]
            if sym is None:  # completion: advance the items that waited for lhs in origin
                lhs = lhs_of[prod]
                if lhs == self.start_lhs:  # START appears in no right-hand side
                    new.accepting = True
                for p2, d2, o2 in origin.waiting.get(lhs, ()):
                    agenda.append((p2, d2 + 1, o2))
                continue
            pending.append(item)
            if len(seen) > self.max_items:
                self._too_many_items()
            if sym < 0:
                mask = terminals[~sym]
                scans.append((mask, prod, dot, origin))
                new.bytes_ok |= mask
                continue
            waiting.setdefault(sym, []).append(item)
            if sym not in predicted:
                self._predict(new, sym, predicted)
            if sym in nullable:  # Aycock-Horspool: move past a nullable nonterminal now
                agenda.append((prod, dot + 1, origin))
        # complete items have no future, and predicted items follow from the predicted
        # nonterminals: the key needs only the predicted set and the older incomplete items
        return self._intern(new, predicted, pending)

    def _too_many_items(self):
        raise LimitExceeded(f"one Earley step needed more than {self.max_items} items",
                            "max_items", self.max_items, "make the grammar less ambiguous "
                            "(e.g. avoid x* x* or nested optional repeats) or raise max_items")

    def _intern(self, new: EarleySet, predicted, old_items) -> EarleySet:
        """The canonical set with ``new``'s key (``new`` itself the first time)."""
        key = (new.accepting, frozenset(predicted),
               frozenset((p, d, o.key) for p, d, o in old_items))
        canonical = self._canonical.get(key)
        if canonical is None:
            if len(self._canonical) >= MAX_CANONICAL_STATES:
                self._forget()
            new.key = self._next_key
            self._next_key += 1
            canonical = self._canonical[key] = new
        return canonical

    def _forget(self) -> None:
        """Bound memory: drop the hash-consing table and every memoized transition. States in
        use stay valid (keys are never reused); only sharing starts over."""
        for state in self._canonical.values():
            state.next = {}
        self._canonical.clear()

    def cache_key(self, state: EarleySet) -> int:
        """The interned id of the state: equal ids imply equal futures."""
        return state.key
