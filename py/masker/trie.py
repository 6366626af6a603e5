"""Token trie and the two mask routines: the fast trie walk and its brute-force twin.

A vocabulary is a list of ``bytes`` (token id = index). The trie stores every token's bytes once;
tokens that share a prefix share nodes, so the automaton steps each shared prefix once, and a
dead state prunes a whole subtree (llguidance's toktrie and lm-format-enforcer's prefix tree work
the same way). ``trie_mask`` asks the automaton for the walk (``Automaton.allowed_tokens``: one
``step`` per trie edge, or a DFA's table look-ups), so it depends on the automaton interface
only. ``brute_force_mask`` runs the automaton over every token's bytes separately; it is the
reference the trie walk is tested against.

A token is allowed when every byte of it keeps the automaton alive (the state after it can still
reach a complete text). An empty token (``b""``) is never allowed: it would not advance.
"""

from __future__ import annotations

import numpy as np

from .automaton import Automaton

DEFAULT_MAX_TRIE_STEPS = 200_000


VECTOR_MIN_TOKENS = 8192  # vocabularies at least this large walk DFAs with NumPy (TrieArrays)
SMALL_LEVEL = 256  # a level of the NumPy walk with at most this many edges is stepped in Python


class TokenTrie:
    """Byte trie over a vocabulary, its nodes numbered breadth first.

    ``children[node]``: tuple of ``(byte, child)``; ``tokens[node]``: ids of the tokens that end
    at ``node``; node 0 is the root (the empty prefix). ``n_nodes`` is at most 1 + total bytes.
    ``child_at[node]``: dict byte -> child, and ``child_bits[node]``: int whose bit b is set when
    byte b has a child, for walks that visit only the bytes a state allows (``earley.py``).
    Breadth-first numbering puts every node's children at consecutive numbers, which is what the
    level-by-level NumPy walk reads (``arrays``).

    ``vectorized``: whether DFA walks over this trie use ``TrieArrays`` (NumPy, level by level)
    rather than the Python walk; True from ``VECTOR_MIN_TOKENS`` tokens up. Both give the same
    tokens (``tests/masker/test_vector_walk.py``); a test may set it either way.

    Build once per vocabulary with ``TokenTrie.shared(vocab)``: every grammar's matchers share it.
    Raises TypeError when an entry is not bytes.
    """

    _shared: dict[tuple, "TokenTrie"] = {}
    SHARED_KEEP = 4  # vocabularies whose trie the process keeps (the oldest goes first)

    def __init__(self, vocab: list[bytes]):
        for i, tok in enumerate(vocab):
            if not isinstance(tok, (bytes, bytearray)):
                raise TypeError(f"vocab[{i}] must be bytes, got {type(tok).__name__}")
        self.vocab = [bytes(t) for t in vocab]
        self.longest = max(map(len, self.vocab), default=0)  # bytes of the longest token
        self.vectorized = len(self.vocab) >= VECTOR_MIN_TOKENS
        self._arrays: TrieArrays | None = None
        self._lists: tuple | None = None
        if self.vectorized:  # the arrays first, with NumPy; the Python lists only if asked for
            self._arrays = TrieArrays.from_vocab(self.vocab)
        else:
            self._lists = self._python_lists()

    def _python_lists(self) -> tuple:
        """(children, tokens, child_at, child_bits) built in Python from the vocabulary: a dict
        per node, then renumbered breadth first with children in byte order."""
        maps: list[dict[int, int]] = [{}]
        ends: dict[int, list[int]] = {}
        for token_id, tok in enumerate(self.vocab):
            node = 0
            for b in tok:
                nxt = maps[node].get(b)
                if nxt is None:
                    nxt = maps[node][b] = len(maps)
                    maps.append({})
                node = nxt
            if tok:
                ends.setdefault(node, []).append(token_id)
        order, new_of = [0], {0: 0}
        for old in order:
            for b in sorted(maps[old]):
                new_of[maps[old][b]] = len(order)
                order.append(maps[old][b])
        child_at = [{b: new_of[c] for b, c in sorted(maps[old].items())} for old in order]
        return ([tuple(m.items()) for m in child_at], [tuple(ends.get(old, ())) for old in order],
                child_at, [sum(1 << b for b in m) for m in child_at])

    def _lists_from_arrays(self) -> tuple:
        """The same lists read off the arrays (a large vocabulary's Python walks: budgets, the
        tests' reference walk)."""
        a = self._arrays
        edge, first, count = a.edge.tolist(), a.first.tolist(), a.count.tolist()
        extra: dict[int, list[int]] = {}
        for node, i in zip(a.extra_nodes.tolist(), a.extra_ids.tolist()):
            extra.setdefault(node, []).append(i)
        children = [tuple((edge[c], c) for c in range(f, f + k)) if k else ()
                    for f, k in zip(first, count)]
        tokens = [((t,) + tuple(extra.get(node, ()))) if t >= 0 else ()
                  for node, t in enumerate(a.token.tolist())]
        child_at = [dict(kids) for kids in children]
        return children, tokens, child_at, [sum(1 << b for b, _ in kids) for kids in children]

    def _get_lists(self) -> tuple:
        if self._lists is None:
            self._lists = self._lists_from_arrays()
        return self._lists

    children = property(lambda self: self._get_lists()[0])
    tokens = property(lambda self: self._get_lists()[1])
    child_at = property(lambda self: self._get_lists()[2])
    child_bits = property(lambda self: self._get_lists()[3])

    @classmethod
    def shared(cls, vocab) -> "TokenTrie":
        """The trie of ``vocab`` (a list or tuple of bytes), built at the first call and kept for
        the next ones (the last ``SHARED_KEEP`` vocabularies), so a new grammar on a vocabulary
        already seen builds nothing. Raises TypeError as the constructor."""
        key = tuple(vocab)
        trie = cls._shared.get(key)
        if trie is None:
            trie = cls(key)
            while len(cls._shared) >= cls.SHARED_KEEP:
                del cls._shared[next(iter(cls._shared))]
            cls._shared[key] = trie
        return trie

    @property
    def n_nodes(self) -> int:
        return len(self._arrays.count) if self._arrays is not None else len(self.children)

    @property
    def arrays(self) -> "TrieArrays":
        """The trie as NumPy arrays (``TrieArrays``), built at the first use."""
        if self._arrays is None:
            self._arrays = TrieArrays(self)
        return self._arrays


class TrieArrays:
    """A ``TokenTrie`` as flat arrays, for walks that step a whole level of the trie at once.

    With ``N`` nodes (breadth-first numbers, as in the trie):

    - ``first[N]`` int32: the first child of each node (its children are ``first .. first +
      count - 1``); ``count[N]`` int32: how many children it has;
    - ``edge[N]`` uint8: the byte on the edge into each node (0 for the root);
    - ``token[N]`` int32: the id of the token that ends at the node, or -1; ``extra_nodes`` and
      ``extra_ids`` (int32) list the ids of the further tokens of the nodes where a vocabulary
      holds the same bytes twice.

    ``nbytes`` is what the arrays take in memory: 13 bytes per node.
    """

    def __init__(self, trie: TokenTrie):
        n = trie.n_nodes
        self.count = np.fromiter(map(len, trie.children), dtype=np.int32, count=n)
        self.first = np.ones(n, dtype=np.int32)  # 1 + the children of every node before
        self.first[1:] += np.cumsum(self.count[:-1], dtype=np.int32)
        self.edge = np.zeros(n, dtype=np.uint8)
        self.token = np.full(n, -1, dtype=np.int32)
        extra_nodes, extra_ids = [], []
        for node, (kids, ids) in enumerate(zip(trie.children, trie.tokens)):
            if kids:
                self.edge[kids[0][1]:kids[-1][1] + 1] = [b for b, _ in kids]
            if ids:
                self.token[node] = ids[0]
                extra_nodes += [node] * (len(ids) - 1)
                extra_ids += ids[1:]
        self.extra_nodes = np.array(extra_nodes, dtype=np.int32)
        self.extra_ids = np.array(extra_ids, dtype=np.int32)
        self._classes: dict[tuple, np.ndarray] = {}
        self._lists: tuple | None = None

    @classmethod
    def from_vocab(cls, vocab: list[bytes]) -> "TrieArrays":
        """The arrays built straight from the vocabulary with NumPy, no Python trie: sort the
        tokens; a token's new nodes are its prefixes longer than its longest common prefix
        with the token before it (``lcp``); at each depth d the tokens that make a node
        (``lcp < d <= length``), in sorted order, are that depth's nodes in breadth-first
        order, and a node's parent is the node of depth d - 1 made by the last such token at
        or before it (``np.searchsorted``). Equal to the arrays of the Python trie
        (``tests/masker/test_vector_walk.py``). Memory: a ``(len(vocab), longest)`` uint8 table
        while it runs (26 MB for ``o200k_base``)."""
        self = cls.__new__(cls)
        n = len(vocab)
        order = sorted(range(n), key=vocab.__getitem__)
        # np.intp: np.repeat takes its counts as the platform's index type (int32 in Pyodide)
        lengths = np.fromiter((len(vocab[i]) for i in order), dtype=np.intp, count=n)
        width = int(lengths.max()) if n else 0
        table = np.zeros((n, max(width, 1)), dtype=np.uint8)
        flat = np.frombuffer(b"".join(vocab[i] for i in order), dtype=np.uint8)
        rows = np.repeat(np.arange(n), lengths)
        cols = np.arange(flat.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        table[rows, cols] = flat
        lcp = np.zeros(n, dtype=np.intp)
        if n > 1:
            differ = table[1:] != table[:-1]
            first_diff = np.where(differ.any(axis=1), differ.argmax(axis=1), width)
            lcp[1:] = np.minimum(first_diff, np.minimum(lengths[1:], lengths[:-1]))
        makers, bases, total = [], [], 1  # per depth: sorted ranks of the tokens making a node
        for d in range(1, width + 1):
            makers.append(np.flatnonzero((lcp < d) & (lengths >= d)))
            bases.append(total)
            total += makers[-1].size
        count = np.zeros(total, dtype=np.intp)
        edge = np.zeros(total, dtype=np.uint8)
        token = np.full(total, -1, dtype=np.int32)
        for d in range(1, width + 1):
            made, base = makers[d - 1], bases[d - 1]
            edge[base:base + made.size] = table[made, d - 1]
            if d == 1:
                count[0] = made.size
            else:
                parents = bases[d - 2] + np.searchsorted(makers[d - 2], made, side="right") - 1
                count += np.bincount(parents, minlength=total)
        ids = np.asarray(order, dtype=np.intp)
        nonempty = np.flatnonzero(lengths > 0)
        ends = np.empty(nonempty.size, dtype=np.intp)
        for d in range(1, width + 1):
            at = nonempty[lengths[nonempty] == d]
            where = np.flatnonzero(lengths[nonempty] == d)
            ends[where] = bases[d - 1] + np.searchsorted(makers[d - 1], at, side="right") - 1
        end_ids = ids[nonempty]
        by_node = np.lexsort((end_ids, ends))  # per node, its ids in increasing order
        ends, end_ids = ends[by_node], end_ids[by_node]
        lead = np.ones(ends.size, dtype=bool)
        lead[1:] = ends[1:] != ends[:-1]
        token[ends[lead]] = end_ids[lead]
        self.count = count.astype(np.int32)
        self.first = np.ones(total, dtype=np.int32)
        self.first[1:] += np.cumsum(self.count[:-1], dtype=np.int32)
        self.edge, self.token = edge, token
        self.extra_nodes = ends[~lead].astype(np.int32)
        self.extra_ids = end_ids[~lead].astype(np.int32)
        self._classes = {}
        self._lists = None
        return self

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.first, self.count, self.edge, self.token,
                                      self.extra_nodes, self.extra_ids))

    def edge_classes(self, byte_class) -> np.ndarray:
        """``byte_class[edge]`` for every node (int32), kept per byte-class map (a DFA's classes
        of the 256 bytes): the column of the DFA table each node's edge reads."""
        key = tuple(byte_class[:256])
        found = self._classes.get(key)
        if found is None:
            if len(self._classes) >= 64:
                self._classes.clear()
            found = self._classes[key] = np.asarray(key, dtype=np.int32)[self.edge]
        return found

    def token_ids(self, nodes: np.ndarray) -> np.ndarray:
        """The ids (int32) of every token that ends at one of ``nodes`` (int array)."""
        ids = self.token[nodes]
        ids = ids[ids >= 0]
        if self.extra_nodes.size:
            ids = np.concatenate([ids, self.extra_ids[np.isin(self.extra_nodes, nodes)]])
        return ids

    def expand(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every child of ``nodes`` (int array), node after node: ``(children, counts)``, the
        children (int32, each node's in byte order) and how many each node has (to repeat a
        per-node value, such as its state, once per child)."""
        cnt = self.count[nodes]
        starts = np.repeat(self.first[nodes] - (np.cumsum(cnt) - cnt), cnt)
        return starts + np.arange(starts.size, dtype=np.int32), cnt

    def children_of(self, nodes: np.ndarray, byte_ok: np.ndarray) -> np.ndarray:
        """The children (int32) of ``nodes`` whose edge byte is allowed by ``byte_ok`` (bool per
        byte, 256 entries), all levels of ``nodes`` at once."""
        child, _ = self.expand(nodes)
        return child[byte_ok[self.edge[child]]]

    def walk_rows(self, rows: "LazyRows", nodes, states) -> np.ndarray:
        """The tokens below ``nodes`` (int array) allowed from the states ``states`` (ids in
        ``rows``, one per node), walked a trie level at a time as ``walk_dfa``, with the table's
        entries made as the walk first needs them (``LazyRows.fill``): for automata whose
        states are not numbered in advance (counted repetitions, Earley sets). A node met with
        a state has that state only (a walk is deterministic), so the work is one look-up per
        trie edge visited plus one ``step`` per new (state, byte class) pair. Returns int32 ids,
        each once per node."""
        count = self.count
        classes = self.edge_classes(rows.byte_class)
        nodes = np.asarray(nodes, dtype=np.int32)
        states = np.asarray(states, dtype=np.int32)
        found = []
        while nodes.size:
            child, cnt = self.expand(nodes)
            if not child.size:
                break
            st, cls = np.repeat(states, cnt), classes[child]
            nxt = rows.table[st, cls]
            todo = nxt == -2
            if todo.any():  # (state, class) pairs met for the first time
                rows.fill(st[todo], cls[todo])
                nxt = rows.table[st, cls]
            keep = nxt >= 0
            child, nxt = child[keep], nxt[keep]
            found.append(child)
            inner = count[child] > 0
            nodes, states = child[inner], nxt[inner]
        if not found:
            return np.zeros(0, dtype=np.int32)
        return self.token_ids(np.concatenate(found))

    def lists(self) -> tuple:
        """``(first, count, edge, token)`` as Python lists, made at the first call (about 30 MB
        for ``o200k_base``): what the walk's small levels read, one element at a time."""
        if self._lists is None:
            self._lists = (self.first.tolist(), self.count.tolist(), self.edge.tolist(),
                           self.token.tolist())
        return self._lists

    def walk_dfa(self, table: np.ndarray, byte_class, state: int, node: int = 0,
                 accepting: np.ndarray | None = None, alive: np.ndarray | None = None,
                 stats: list | None = None, rows: list | None = None,
                 small_level: int | None = None):
        """The tokens below ``node`` whose every byte keeps a DFA alive from ``state``, walked
        one trie level at a time: at each level, every (node, state) pair of the frontier steps
        all its children with one table look-up (NumPy), and the dead ones drop out.

        ``table``: int32 ``(n_states, n_classes)``, the next state or -1; ``byte_class``: the
        class of each byte (a sequence of at least 256 ints). Returns ``(ids, exits)``: ``ids``,
        int32 ids of the allowed tokens, each once (for the nodes' first token; a duplicate
        token's id follows); ``exits``, when ``accepting`` (bool per state) is given, the
        ``(nodes, states)`` int32 pairs below ``node`` where the DFA is accepting and the node
        has children (``earley.py``: where a lexeme may end and the walk goes on outside it),
        else None. ``alive`` (bool per state): a pair whose state cannot continue leaves the
        frontier (default: every state may continue). Work: one look-up per trie edge visited,
        in about twenty NumPy calls per level (the longest token's bytes, at most). ``stats``: a
        list that gets, per level, the number of edges stepped there (the lesson prints it).

        While a level has at most ``small_level`` edges, and ``rows`` (the table as a list of
        lists, the DFA's own) is given, the level is stepped in Python instead (the NumPy calls'
        fixed cost would dominate: a literal key, a date's few live branches); from the first
        larger level on, NumPy. ``small_level``: default ``SMALL_LEVEL``; 0: NumPy at every level.
        """
        if small_level is None:
            small_level = SMALL_LEVEL
        count = self.count
        classes = self.edge_classes(byte_class)
        n_classes = table.shape[1]
        flat = table.ravel()
        found, exit_nodes, exit_states = [], [], []
        frontier = [(node, state)]
        if rows is not None and small_level > 0:
            frontier = self._small_levels(frontier, rows, byte_class, small_level, accepting,
                                          alive, stats, found, exit_nodes, exit_states)
        nodes = np.array([n for n, _ in frontier], dtype=np.int32)
        states = np.array([s for _, s in frontier], dtype=np.int32)
        while nodes.size:
            child, cnt = self.expand(nodes)
            if not child.size:
                break
            if stats is not None:
                stats.append(child.size)
            nxt = flat[np.repeat(states, cnt) * n_classes + classes[child]]
            keep = nxt >= 0
            child, nxt = child[keep], nxt[keep]
            found.append(child)
            inner = count[child] > 0
            if accepting is not None:
                out = inner & accepting[nxt]
                exit_nodes.append(child[out])
                exit_states.append(nxt[out])
            if alive is not None:
                inner &= alive[nxt]
            nodes, states = child[inner], nxt[inner]
        nodes = (np.concatenate([np.asarray(f, dtype=np.int32) for f in found]) if found
                 else np.zeros(0, dtype=np.int32))
        exits = None
        if accepting is not None:
            exits = (np.concatenate([np.asarray(e, dtype=np.int32) for e in exit_nodes])
                     if exit_nodes else nodes[:0],
                     np.concatenate([np.asarray(e, dtype=np.int32) for e in exit_states])
                     if exit_states else nodes[:0])
        return self.token_ids(nodes), exits

    def _small_levels(self, frontier, rows, byte_class, small_level, accepting, alive, stats,
                      found, exit_nodes, exit_states) -> list:
        """``walk_dfa``'s levels of at most ``small_level`` edges, in Python over ``lists()``;
        appends to the walk's lists as the NumPy levels do and returns the frontier left (the
        (node, state) pairs of the first larger level, or none)."""
        first, count, edge, _ = self.lists()
        accepting = accepting.tolist() if accepting is not None else None
        alive = alive.tolist() if alive is not None else None
        while frontier:
            total = sum(count[n] for n, _ in frontier)
            if not total or total > small_level:
                return frontier if total else []
            if stats is not None:
                stats.append(total)
            kept, ends, end_states, nxt_frontier = [], [], [], []
            for n, s in frontier:
                row = rows[s]
                start = first[n]
                for child in range(start, start + count[n]):
                    nxt = row[byte_class[edge[child]]]
                    if nxt < 0:
                        continue
                    kept.append(child)
                    if count[child]:
                        if accepting is not None and accepting[nxt]:
                            ends.append(child)
                            end_states.append(nxt)
                        if alive is None or alive[nxt]:
                            nxt_frontier.append((child, nxt))
            found.append(kept)
            if accepting is not None:
                exit_nodes.append(ends)
                exit_states.append(end_states)
            frontier = nxt_frontier
        return []


def trie_mask(automaton: Automaton, state: object, trie: TokenTrie,
              max_steps: int = DEFAULT_MAX_TRIE_STEPS) -> np.ndarray:
    """Allowed tokens after ``state``: ``bool (len(vocab),)``, by a depth-first walk of the trie
    (``automaton.allowed_tokens``).

    The generic walk costs one ``automaton.step`` per trie edge and raises LimitExceeded after
    ``max_steps`` steps (only reachable with an automaton whose step is itself limited, e.g.
    Earley); a DFA's walk is bounded by the trie size and needs no limit.
    """
    allowed = automaton.allowed_tokens(state, trie, max_steps)
    if isinstance(allowed, np.ndarray) and allowed.dtype == bool:
        return allowed  # a walk that built the mask itself (a new array)
    mask = np.zeros(len(trie.vocab), dtype=bool)
    mask[allowed] = True
    return mask


def brute_force_mask(automaton: Automaton, state: object, vocab: list[bytes]) -> np.ndarray:
    """Reference twin of ``trie_mask``: run the automaton over each token's bytes on its own.
    Returns ``bool (len(vocab),)``; passes on what ``automaton.step`` raises."""
    mask = np.zeros(len(vocab), dtype=bool)
    for token_id, tok in enumerate(vocab):
        st = state
        for b in tok:
            st = automaton.step(st, b)
            if st is None:
                break
        else:
            mask[token_id] = len(tok) > 0
    return mask


class LazyRows:
    """The transition table of an automaton whose states are met one by one (``walk_rows``):
    each state met gets a number, and its row (the next state's number for each byte class,
    -1 when dead) is made by ``automaton.step`` on one byte of the class, entry by entry, the
    first time a walk needs it. ``byte_class``: 256 ints, bytes of one class step every state alike; ``key``:
    a state -> a hashable key (equal keys, equal states). Rows are kept across walks, so a
    walk that meets known states costs NumPy only; past ``max_states`` numbered states every
    number is forgotten and the table starts over (``reset``; walks in progress finish with
    the numbers they hold, since ``reset`` is only called between walks, by ``start``).
    """

    def __init__(self, automaton, byte_class, key, max_states: int = 50_000):
        self.automaton, self.key, self.max_states = automaton, key, max_states
        renumber: dict[int, int] = {}
        self.byte_class = [renumber.setdefault(c, len(renumber)) for c in byte_class[:256]]
        self.n_classes = len(renumber)
        self.reps = [self.byte_class.index(c) for c in range(self.n_classes)]
        self.reset()

    @staticmethod
    def of(owner: dict, trie: "TokenTrie", make) -> "LazyRows":
        """The ``LazyRows`` kept in ``owner`` (a dict of an automaton) for ``trie``, made by
        ``make()`` the first time; the entry holds the trie, so its id stays valid."""
        found = owner.get(id(trie))
        if found is None:
            found = owner[id(trie)] = (trie, make())
        return found[1]

    def reset(self) -> None:
        self.ids: dict = {}
        self.states: list = []
        self.table = np.full((256, self.n_classes), -2, dtype=np.int32)  # -2: not made yet

    def start(self, state) -> int:
        """The number of ``state``, first forgetting every number when there are too many."""
        if len(self.states) >= self.max_states:
            self.reset()
        return self.id_of(state)

    def id_of(self, state) -> int:
        key = self.key(state)
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.states)
            self.states.append(state)
            if found >= len(self.table):
                grown = np.full((2 * len(self.table), self.n_classes), -2, dtype=np.int32)
                grown[:len(self.table)] = self.table
                self.table = grown
        return found

    def fill(self, ids: np.ndarray, classes: np.ndarray) -> None:
        """Make the table's entries for the pairs (state ``ids[k]``, byte class
        ``classes[k]``) (int arrays), each pair once."""
        step, reps, states = self.automaton.step, self.reps, self.states
        pairs = np.unique(ids.astype(np.int64) * self.n_classes + classes)
        made = []
        for pair in pairs.tolist():
            i, c = divmod(pair, self.n_classes)
            nxt = step(states[i], reps[c])
            made.append(-1 if nxt is None else self.id_of(nxt))
        self.table.ravel()[pairs] = made  # after id_of, which may grow the table
