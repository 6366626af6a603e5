"""«Corregir la distorsión» (``distorsion.html``): importance weights and sequential Monte Carlo.

Its cells call the decoding library itself (``from lesson import importance_sample, smc,
convergence, ...``: :mod:`lesson.smc`, :mod:`lesson.smc_views`); this package holds what only the
page computes: its prose figures, :mod:`lesson.distorsion.figures` (``compute_figures``, called by
the build), the log-weight picture, :mod:`lesson.distorsion.curves`, and the checker of the
systematic-resampling exercise, :mod:`lesson.distorsion.exercise` (``comprobar_remuestreo``, and
``check_resampling``, its English name, for the English page's cell), and what one SMC run's
resamplings did to the key's token splits, :mod:`lesson.distorsion.trap` (``split_trap``).
"""

from .curves import WeightSources, name_mean_ess
from .exercise import check_resampling, comprobar_remuestreo
from .trap import lineages, split_trap

__all__ = ["comprobar_remuestreo", "check_resampling", "lineages", "split_trap", "WeightSources", "name_mean_ess"]
