"""The decoding library of the lessons (CPython and Pyodide alike), on the masker's grammars.

The modules directly in this package are the library: every loop over the model and the masker
is written here once, and none of them imports a page. Each page has its own package here, named
as the page (``lesson.mascara``, ``lesson.niveles``, ``lesson.automata``, ``lesson.trampas``,
``lesson.distorsion``, ``lesson.laboratorio``), with what only that page computes and its prose
figures (``figures.compute_figures``); :mod:`lesson.course` holds the facts they share (the
prompt, the names, ``answer``). Cells import from here or from their page's package.

Every function takes a masker ``Grammar`` (``compile_choice``, ``compile_regex``,
``compile_json_schema``, ``compile_cfg``) and drives it through its matcher only:

- :func:`generate`: sampling with or without the mask (temperature, top-k, top-p, a token budget),
  recording every position;
- :func:`sample_batch`: many answers at once (one model call per position for the whole batch);
- :func:`enumerate_paths`: every token path that spells a text of a finite grammar, with p(G|x),
  the conditional and the masked distributions; :func:`count_language` counts them first;
- :func:`rejection_sample`: whole unmasked answers until enough are texts of the grammar;
  :func:`sample_until_invalid`, the unmasked loop under it: each answer stops as soon as it can
  no longer be a text of the grammar;
- :func:`importance_sample`, :func:`smc`, :func:`convergence`: the mask as a proposal, corrected by
  importance weights or by sequential Monte Carlo.
Results render as HTML in a page cell or in Jupyter (``_repr_html_``).
"""

from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex

from .batch import sample_batch
from .early_abort import EarlyAbort, sample_until_invalid
from .enumeration import Enumeration, enumerate_paths
from .token_language import LanguageCounts, LanguageTooLarge, count_language, count_paths, count_positions
from .rejection import Rejection, rejection_sample
from .sampling import Generation, Position, generate
from .smc import Convergence, Particles, convergence, importance_sample, smc
from .smc_views import PathsView, WeightsView
from .views import PositionsView, SampleTable, token_label

__all__ = ["Convergence", "EarlyAbort", "Particles", "PathsView", "WeightsView", "convergence", "importance_sample", "smc",
           "Enumeration", "Generation", "LanguageCounts", "LanguageTooLarge", "Position", "PositionsView",
           "Rejection", "SampleTable", "compile_cfg", "compile_choice", "compile_json_schema",
           "compile_regex", "count_language", "count_paths", "count_positions", "enumerate_paths",
           "generate", "rejection_sample", "sample_batch", "sample_until_invalid", "token_label"]
