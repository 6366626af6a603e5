"""«La máscara» (``mascara.html``), the central lesson.

Its cells call the decoding library itself (``from lesson import generate, enumerate_paths, ...``);
this package holds only the page's prose figures, :mod:`lesson.mascara.figures`
(``compute_figures``, called by the build).
"""
