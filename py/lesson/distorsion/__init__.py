"""«Corregir la distorsión» (``distorsion.html``): importance weights and sequential Monte Carlo.

Its cells call the decoding library itself (``from lesson import importance_sample, smc,
convergence, ...``: :mod:`lesson.smc`, :mod:`lesson.smc_views`); this package holds only the
page's prose figures, :mod:`lesson.distorsion.figures` (``compute_figures``, called by the build).
"""
