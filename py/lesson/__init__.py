"""The computations and views of the lesson «La máscara» (CPython and Pyodide alike).

- :class:`FiniteGrammar`: a finite set of texts and its allowed sets over the token vocabulary;
- :func:`generate`: sampling with or without the mask, recording every position;
- :func:`enumerate_paths`: every token path that spells a text of G, with p(G|x), the conditional
  and the masked distributions.
Results render as HTML in a page cell or in Jupyter (``_repr_html_``).
"""

from .enumeration import Enumeration, count_paths, count_positions, enumerate_paths
from .grammar import FiniteGrammar, GrammarError
from .rejection import Rejection, rejection_sample
from .sampling import Generation, Position, generate
from .views import PositionsView, SampleTable, token_label

__all__ = ["Enumeration", "FiniteGrammar", "Generation", "GrammarError", "Position", "PositionsView", "Rejection",
           "SampleTable", "count_paths", "count_positions", "enumerate_paths", "generate", "rejection_sample", "token_label"]
