"""«Python en el navegador» (``marco.html``): its cells use NumPy, the tokenizer and the model
directly; this package holds only the page's prose figures, :mod:`lesson.marco.figures`."""
