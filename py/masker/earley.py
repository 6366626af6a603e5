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

Lexemes: a nonterminal may stand for a regular part of the grammar recognized by a DFA
(``cfg_lowering``: a JSON string with its quotes, a number). A set holds one item (n, DFA state,
origin) for it, not the items of its productions; the item moves with the DFA, and where the
DFA accepts, the lexeme also completes. This is the third idea of XGrammar's and llguidance's
speed (regular sub-grammars as automata inside the parser); the second is the split of tokens
that the lexeme decides alone from those that need the parser (``allowed_tokens``).

Bytes that every terminal and lexeme treats alike (inside a JSON string, every letter) form
one *byte class*: they move a set to the same next set, so ``step`` builds it once per class
and the memo (``EarleySet.next``) is keyed by class.

Work limit: ``max_items`` items per set (one byte of input). Past it ``step`` raises
LimitExceeded rather than freezing the page; highly ambiguous grammars are the usual cause.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .automaton import Automaton, too_many_steps
from .trie import LazyRows
from .errors import LimitExceeded

DEFAULT_MAX_ITEMS = 20_000
INSIDE_CACHE = 4096  # lexeme walks kept per trie (``EarleyAutomaton._inside``)
MAX_CANONICAL_STATES = 50_000  # hash-consing table size; it restarts empty when full


def byte_classes(terminals, partitions=()) -> list[int]:
    """``cls[b]`` for each byte 0..255: bytes with equal classes are in exactly the same
    terminals (int byte masks) and in the same class of every lexeme DFA (``partitions``: its
    ``byte_class``), so they step every Earley set to the same set. Partition refinement: one
    split per distinct multi-byte mask and per partition; a one-byte mask gives its byte a
    class of its own."""
    cls, singles = [0] * 256, set()
    for part in partitions:
        table: dict = {}
        cls = [table.setdefault((cls[b], part[b]), len(table)) for b in range(256)]
    for mask in set(terminals):
        if mask & (mask - 1) == 0:
            singles.add(mask.bit_length() - 1)
            continue
        table: dict = {}
        cls = [table.setdefault((cls[b], mask >> b & 1), len(table)) for b in range(256)]
    top = max(cls) + 1
    for b in sorted(singles - {-1}):
        cls[b], top = top, top + 1
    return cls


@lru_cache(maxsize=1024)
def _bits_array(bits: int) -> np.ndarray:
    """An int byte mask (bit b = byte b) as a bool array of 256 entries (shared: read only)."""
    return np.array([bits >> b & 1 for b in range(256)], dtype=bool)


class EarleySet:
    """Items after some prefix. ``scans``: (byte mask, prod, dot, origin) for items before a
    terminal; ``waiting[n]``: items before nonterminal n; ``accepting``: the start rule is done."""

    __slots__ = ("scans", "lexes", "bytes_ok", "waiting", "accepting", "key", "next")

    def __init__(self):
        self.scans: list = []
        self.lexes: list = []       # (lexeme nonterminal, its DFA state, origin)
        self.bytes_ok = 0           # bytes some scan or lexeme item takes: dead bytes fail fast
        self.waiting: dict[int, list] = {}
        self.accepting = False
        self.key = -1                # interned id; equal ids -> equal futures
        # memoized step results, by byte class; and (n, t): the set where lexeme n, predicted
        # here, reaches the accepting DFA state t (``EarleyAutomaton._lexeme_end``)
        self.next: dict = {}


class EarleyAutomaton(Automaton):
    """The automaton interface (``automaton.py``) over a grammar in production form; masks walk
    the token trie with one memoized ``step`` per edge, except inside lexemes
    (``allowed_tokens``).

    ``prods``: list of ``(lhs, rhs)``; rhs symbols >= 0 are nonterminals, a negative symbol ``~t``
    is terminal t whose byte set is the int bitmask ``terminals[t]`` (bit b set = byte b allowed).
    Production 0 is the start production ``START -> root``. ``nullable``: the nonterminals that
    derive the empty text. ``lexemes``: nonterminal -> ``dfa.Dfa`` for the nonterminals that
    have no productions and whose texts are the DFA's (``cfg_lowering.Lowering``).
    """

    def __init__(self, prods, terminals, nullable, max_items: int = DEFAULT_MAX_ITEMS,
                 lexemes: dict | None = None):
        self.prods, self.terminals, self.nullable = prods, terminals, nullable
        self.max_items = max_items
        self._lexemes(lexemes or {})
        self.start_lhs = prods[0][0]
        # next_sym[prod][dot]: the symbol after the dot, or None when the item is complete
        self.next_sym = [tuple(rhs) + (None,) for _, rhs in prods]
        self.lhs_of = [lhs for lhs, _ in prods]
        self.byte_class = byte_classes(terminals, [dfa.byte_class for dfa in self.lexemes.values()])
        self._precompute_predictions()
        self._canonical: dict[tuple, EarleySet] = {}
        self._next_key = 0
        self._start = EarleySet()
        predicted: set[int] = set()
        self._predict(self._start, self.start_lhs, predicted)
        self._start.accepting = self.start_lhs in nullable
        self._start = self._intern(self._start, predicted, ())

    def _lexemes(self, lexemes: dict) -> None:
        """Per lexeme nonterminal n (``cfg_lowering``): ``lex_move[n][q][c]``, its DFA's state
        after a byte of class ``lex_class[n][b]`` = c from state q (-1: dead); ``lex_ok[n][q]``,
        the bytes that keep state q alive (an int mask); ``lex_end[n][q]``, q accepting."""
        self.lexemes = lexemes
        self.lex_move, self.lex_class, self.lex_ok, self.lex_end = {}, {}, {}, {}
        self._inside_cache: dict[int, tuple] = {}  # id(trie) -> (trie, {(n, q, node): walk})
        self._lex_np: dict[int, tuple] = {}
        self._rows: dict = {}  # id(trie) -> (trie, LazyRows) for the vectorized walk
        self._scan_parts: dict[int, EarleySet] = {}  # set key -> its scan items alone
        for n, dfa in lexemes.items():
            classes = dfa.byte_class[:256]
            bits = [0] * (max(classes) + 1)
            for b, c in enumerate(classes):
                bits[c] |= 1 << b
            self.lex_move[n], self.lex_class[n] = dfa.table, classes
            self.lex_ok[n] = [sum(bits[c] for c, t in enumerate(row) if t >= 0 and c < len(bits))
                              for row in dfa.table]
            self.lex_end[n] = dfa.accepting

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
        for n in self.lexemes:
            self.scans[n], self.waits[n], self.bytes_ok[n] = [], [], self.lex_ok[n][0]
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
        cls = self.byte_class[byte]
        nxt = state.next.get(cls)
        if nxt is None:
            kernel = [(prod, dot + 1, origin) for mask, prod, dot, origin in state.scans
                      if mask >> byte & 1]
            carried = []
            for n, q, origin in state.lexes:
                q = self.lex_move[n][q][self.lex_class[n][byte]]
                if q < 0:
                    continue
                if self.lex_end[n][q]:  # the lexeme may end here: complete n
                    kernel.extend((p, d + 1, o) for p, d, o in origin.waiting.get(n, ()))
                if self.lex_ok[n][q]:
                    carried.append((n, q, origin))
            nxt = state.next[cls] = self._build(kernel, carried)
        return nxt

    def allowed_tokens(self, state: EarleySet, trie, max_steps: int) -> list[int]:
        """The generic trie walk (``Automaton.allowed_tokens``: the same tokens, and the same
        ``max_steps`` count outside lexemes), faster in three ways:

        - it visits only the children whose byte the set can scan (``bytes_ok``): by their bits
          when they are few (a root with 256 children and one byte allowed costs one look-up),
          else by the children list; a byte in ``bytes_ok`` always steps to a live set, so a
          child without children of its own needs no step at all;
        - memoized steps are read without a call;
        - inside a lexeme (a set whose only item is a lexeme item (n, q, origin), as inside a
          JSON string) the tokens that stay inside the lexeme do not depend on the items
          around it: they are computed once per DFA state q and vocabulary (``_inside``, as
          XGrammar's context-independent tokens), and only the trie nodes where the lexeme may
          end are walked on, from the set where it ends (``_lexeme_end``).
        An id may appear more than once in the result.

        On a large vocabulary (``trie.vectorized``) the walk is ``_vector_tokens`` and returns an
        int32 array.
        """
        if trie.vectorized:
            return self._vector_tokens(state, trie)
        allowed: list[int] = []
        children, tokens, child_at, child_bits = (trie.children, trie.tokens, trie.child_at,
                                                  trie.child_bits)
        byte_class, step = self.byte_class, self.step
        stack = [(0, state)]
        steps = 0
        while stack:
            node, st = stack.pop()
            if not st.scans and len(st.lexes) == 1:
                n, q, origin = st.lexes[0]
                inside, ends = self._inside(trie, n, q, node)
                allowed.extend(inside)
                for child, t in ends:
                    stack.append((child, origin.next.get((n, t)) or
                                  self._lexeme_end(n, t, origin)))
                continue
            kids = children[node]
            steps += len(kids)
            if steps > max_steps:
                too_many_steps(max_steps)
            ok, memo = st.bytes_ok, st.next
            common = ok & child_bits[node]
            if common.bit_count() * 4 < len(kids):
                at, pairs = child_at[node], []
                while common:
                    low = common & -common
                    common ^= low
                    byte = low.bit_length() - 1
                    pairs.append((byte, at[byte]))
            else:
                pairs = [(byte, child) for byte, child in kids if ok >> byte & 1]
            for byte, child in pairs:
                allowed.extend(tokens[child])
                if children[child]:
                    stack.append((child, memo.get(byte_class[byte]) or step(st, byte)))
        return allowed

    def _vector_tokens(self, state: EarleySet, trie) -> np.ndarray:
        """``allowed_tokens`` on a large vocabulary, a trie level at a time (NumPy). A set's
        language is the union of its items' (Earley's closure distributes over the kernel), so
        the set is split:

        - each lexeme item (n, q, origin) (inside a JSON string, or a free key): the tokens
          that stay inside the lexeme come from its DFA's walk alone, kept per DFA state as a
          mask (``_inside``, ``_inside_mask``: XGrammar's context-independent tokens); at the
          nodes where the lexeme may end, the set where it ends (without the lexeme item, whose
          own walk went on below: ``_lexeme_end(..., leave=True)``) takes the next byte for all
          those nodes at once (``TrieArrays.children_of``: usually the closing quote alone);
        - the scan items, as a set of their own (``_scans_only``), and every set met from there
          on: ``TrieArrays.walk_rows``, where the Earley sets met are numbered and each (set,
          byte class) step is made once and kept for later masks (``LazyRows``).
        Returns the mask, a new bool array of ``len(trie.vocab)``."""
        arrays, byte_class, step = trie.arrays, self.byte_class, self.step
        rows = LazyRows.of(self._rows, trie,
                           lambda: LazyRows(self, byte_class, lambda st: st.key))
        rows.start(state)
        mask, ids = None, []
        from_nodes, from_states = [], []
        for n, q, origin in state.lexes:
            inside, (nodes, states) = self._inside(trie, n, q, 0)
            inside_mask = self._inside_mask(trie, n, q, inside)
            if mask is None:
                mask = inside_mask.copy()
            else:
                mask |= inside_mask
            for t in np.unique(states).tolist():
                leave = (origin.next.get((n, t, "leave")) or
                         self._lexeme_end(n, t, origin, leave=True))
                if not leave.bytes_ok:
                    continue
                kids = arrays.children_of(nodes[states == t], _bits_array(leave.bytes_ok))
                ids.append(arrays.token_ids(kids))
                inner = kids[arrays.count[kids] > 0]
                for child, byte in zip(inner.tolist(), arrays.edge[inner].tolist()):
                    from_nodes.append(child)
                    from_states.append(rows.id_of(leave.next.get(byte_class[byte]) or
                                                  step(leave, byte)))
        if state.scans:
            from_nodes.append(0)
            from_states.append(rows.id_of(self._scans_only(state) if state.lexes else state))
        if from_nodes:
            ids.append(arrays.walk_rows(rows, from_nodes, from_states))
        if mask is None:
            mask = np.zeros(len(trie.vocab), dtype=bool)
        for part in ids:
            mask[part] = True
        return mask

    def _scans_only(self, st: EarleySet) -> EarleySet:
        """A set with ``st``'s scan items and none of its lexeme items (``waiting`` shared), under
        a key of its own: the rest of ``st`` once its lexeme items are walked apart. Kept per
        set; its steps are built and interned as usual."""
        found = self._scan_parts.get(st.key)
        if found is None:
            found = EarleySet()
            found.scans, found.waiting = st.scans, st.waiting
            for mask, _, _, _ in st.scans:
                found.bytes_ok |= mask
            found.key = self._next_key
            self._next_key += 1
            if len(self._scan_parts) >= MAX_CANONICAL_STATES:
                self._scan_parts.clear()
            self._scan_parts[st.key] = found
        return found

    def _inside_mask(self, trie, n: int, q: int, inside: np.ndarray) -> np.ndarray:
        """The bool mask (``len(trie.vocab)``) of the tokens that stay inside lexeme n from
        DFA state q at the root (``inside``), kept per (trie, n, q): inside a JSON string, a
        new string's first mask copies it (a memory copy) instead of setting ~200,000 ids."""
        cache = self._inside_cache[id(trie)][1]
        found = cache.get((n, q, "mask"))
        if found is None:
            found = np.zeros(len(trie.vocab), dtype=bool)
            found[inside] = True
            cache[(n, q, "mask")] = found
        return found

    def _inside(self, trie, n: int, q: int, node: int) -> tuple:
        """The walk of lexeme n's DFA alone from state q over the subtrie at ``node``:
        (ids of the tokens below ``node`` that keep the DFA alive, [(trie node, accepting
        state t)] where the lexeme may end with more bytes below). Computed once per trie,
        lexeme, state and node (the cache holds the trie, so its id stays valid). On a
        vectorized trie: (int32 array of ids, (int32 array of nodes, int32 array of t)).
        The cache keeps at most ``INSIDE_CACHE`` walks per trie (emptied when full): one walk
        holds up to a vocabulary of ids."""
        cache = self._inside_cache.get(id(trie))
        if cache is None:
            cache = self._inside_cache[id(trie)] = (trie, {})
        found = cache[1].get((n, q, node))
        if found is not None:
            return found
        if len(cache[1]) >= INSIDE_CACHE:
            cache[1].clear()
        if trie.vectorized:  # the same walk, a trie level at a time (``TrieArrays.walk_dfa``)
            dfa = self.lexemes[n]
            ids, (nodes, states) = trie.arrays.walk_dfa(
                dfa.np_table, self.lex_class[n], q, node, accepting=self._lex_arrays(n)[0],
                alive=self._lex_arrays(n)[1], rows=dfa.table)
            found = cache[1][(n, q, node)] = (ids, (nodes, states))
            return found
        children, tokens = trie.children, trie.tokens
        move, classes = self.lex_move[n], self.lex_class[n]
        ends, oks = self.lex_end[n], self.lex_ok[n]
        inside, exits, stack = [], [], [(node, q)]
        while stack:
            at, s = stack.pop()
            row = move[s]
            for byte, child in children[at]:
                t = row[classes[byte]]
                if t < 0:
                    continue
                inside.extend(tokens[child])
                if children[child]:
                    if ends[t]:
                        exits.append((child, t))
                    if oks[t]:
                        stack.append((child, t))
        found = cache[1][(n, q, node)] = (inside, exits)
        return found

    def _lex_arrays(self, n: int):
        """Lexeme n's DFA states as two bool arrays: accepting (``lex_end``) and able to go on
        (``lex_ok`` not empty), for the vectorized walk."""
        found = self._lex_np.get(n)
        if found is None:
            found = self._lex_np[n] = (np.array(self.lex_end[n], dtype=bool),
                                       np.array([ok != 0 for ok in self.lex_ok[n]], dtype=bool))
        return found

    def _lexeme_end(self, n: int, t: int, origin: EarleySet, leave: bool = False) -> EarleySet:
        """The set after a byte that takes lexeme n (predicted in ``origin``) from a set that
        holds only its item to the accepting DFA state t: the items waiting for n in
        ``origin`` move on, and the lexeme item stays if t can continue. The same set
        ``step`` builds from there; memoized in ``origin.next`` under (n, t).

        ``leave``: without the lexeme item (memoized under (n, t, "leave")), for a walk that
        follows the lexeme's own texts apart (``TrieArrays.walk_dfa`` goes on below the node):
        keeping it would walk each subtree again at every node where the lexeme may end."""
        kernel = [(p, d + 1, o) for p, d, o in origin.waiting.get(n, ())]
        if leave:
            nxt = origin.next[(n, t, "leave")] = self._build(kernel, [])
            return nxt
        carried = [(n, t, origin)] if self.lex_ok[n][t] else []
        nxt = origin.next[(n, t)] = self._build(kernel, carried)
        return nxt

    def is_accepting(self, state: EarleySet) -> bool:
        return state.accepting

    def can_continue(self, state: EarleySet) -> bool:
        return bool(state.scans or state.lexes)

    def _predict(self, new: EarleySet, n: int, predicted: set) -> None:
        """Add the items predicted by nonterminal ``n`` (and transitively) to ``new``."""
        for m in self.closure[n]:
            if m in predicted:
                continue
            predicted.add(m)
            new.scans.extend((mask, prod, dot, new) for mask, prod, dot in self.scans[m])
            new.bytes_ok |= self.bytes_ok[m]
            if m in self.lexemes:
                new.lexes.append((m, 0, new))
            waiting = new.waiting
            for sym, prod, dot in self.waits[m]:
                waiting.setdefault(sym, []).append((prod, dot, new))

    def _build(self, kernel, carried=()) -> EarleySet:
        """Closure of ``kernel`` (items that started in earlier sets) under completion and
        prediction: a new set. ``carried``: lexeme items (n, DFA state, origin) still inside
        their lexeme after the byte."""
        new = EarleySet()
        next_sym, terminals, nullable = self.next_sym, self.terminals, self.nullable
        scans, waiting, lhs_of = new.scans, new.waiting, self.lhs_of
        seen, predicted = set(), set()
        new.lexes.extend(dict.fromkeys(carried))
        for n, q, _ in new.lexes:
            new.bytes_ok |= self.lex_ok[n][q]
        # incomplete older items, for the key; a lexeme item as (~n, q, origin), never a prod
        pending = [(~n, q, o) for n, q, o in new.lexes]
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
                            "(e.g. avoid x* x* or nested optional repeats) or raise max_items",
                            code="limit.earley_items", most=self.max_items)

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
        self._scan_parts.clear()

    def items(self, state: EarleySet) -> int:
        """How many items ``state`` holds (scan, lexeme and waiting items): the work of each step
        from it grows with this, and with an ambiguous grammar it grows with the text."""
        return len(state.scans) + len(state.lexes) + sum(len(w) for w in state.waiting.values())

    def cache_key(self, state: EarleySet) -> int:
        """The interned id of the state: equal ids imply equal futures."""
        return state.key
