"""The build's helpers: the steps that ``build.py`` runs in order, each a function of plain data.

- ``files``: the project's folders, the site plan's types, hashed names, packing ``py/``,
  ``weights/``, and writing ``site/``;
- ``errors``: ``BuildError``, the one error a step raises (its message says what to do);
- ``vendor``: Pyodide from ``node_modules``, its NumPy wheel (sha256-checked), the esbuild bundle;
- ``figures``: each lesson's prose figures (``compute_figures`` of its figures module), cached;
- ``plan``: every file of the site in memory, with its hashed path;
- ``render``: the Jinja environment and its filters, the outline of each page, the course map;
- ``texmath`` (with ``katex-mathml.js``): ``\\( \\)`` and ``\\[ \\]`` in the prose become MathML;
- ``cells`` (with ``cellrun.py``, run in a child process): the cells' outputs, precomputed;
- ``notebooks``: one Jupyter notebook per lesson;
- ``devserver``: the development server and the site's Content-Security-Policy.
"""
