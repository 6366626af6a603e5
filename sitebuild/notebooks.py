"""The Jupyter notebooks: one per lesson, made from the outline its page recorded while rendering."""
from __future__ import annotations

import nbformat

from .files import Asset, Page

NOTEBOOK_SETUP = {"es": """\
# Este cuaderno usa el mismo paquete de Python (py/) y los mismos pesos (weights/) que la página:
# ábrelo desde la carpeta del proyecto (un clon del repositorio) o cambia PROYECTO.
import os
import sys

PROYECTO = os.path.abspath(".")
if not os.path.isdir(os.path.join(PROYECTO, "py", "lesson")):
    raise FileNotFoundError(f"{PROYECTO} no es la carpeta del proyecto: falta py/lesson. "
                            "Abre el cuaderno desde un clon del repositorio o cambia PROYECTO.")
sys.path.insert(0, os.path.join(PROYECTO, "py"))
from minigpt.bpe import weights_dir  # PROYECTO/weights, junto a py/ (o $MINIGPT_WEIGHTS, si existe)

print("Paquete:", os.path.join(PROYECTO, "py"), "· pesos:", weights_dir())""", "en": """\
# This notebook uses the same Python package (py/) and the same weights (weights/) as the page:
# open it from the project's folder (a clone of the repository) or change PROJECT.
import os
import sys

PROJECT = os.path.abspath(".")
if not os.path.isdir(os.path.join(PROJECT, "py", "lesson")):
    raise FileNotFoundError(f"{PROJECT} is not the project's folder: py/lesson is missing. "
                            "Open the notebook from a clone of the repository or change PROJECT.")
sys.path.insert(0, os.path.join(PROJECT, "py"))
from minigpt.bpe import weights_dir  # PROJECT/weights, beside py/ (or $MINIGPT_WEIGHTS, if set)
from lesson import i18n

i18n.set_language("en")  # the views' labels and numbers in English, as on the page
print("Package:", os.path.join(PROJECT, "py"), "· weights:", weights_dir())"""}

NOTEBOOK_INTRO = {
    "es": ("Las celdas de la lección «{title}». Cada una se ejecuta en orden, como en la página. "
           "La página usa una copia de los pesos redondeada a float16 (la mitad de descarga); este "
           "cuaderno, los de weights/ en float32, así que un número puede diferir a partir de su "
           "tercera cifra significativa, y dos tokens casi empatados pueden cambiar de puesto."),
    "en": ("The cells of the lesson “{title}”. Run them in order, as on the page. The page runs a "
           "copy of the weights rounded to float16 (half the download); this notebook runs the "
           "float32 weights in weights/, so a figure may differ from its third significant digit on, "
           "and two nearly tied tokens may swap ranks."),
}


def page_notebook(outline: list[tuple[str, str]], title: str, language: str = "es") -> bytes:
    """A Jupyter notebook (nbformat 4) of a page's ``outline`` (see ``PageOutline``): its headings
    as Markdown and its cells' sources as code cells, in page order.

    A title cell and a setup cell come first: the setup puts the project's ``py/`` on the import
    path (``minigpt`` then finds ``weights/`` beside it, see ``minigpt.bpe.weights_dir``); the
    page's cells follow unchanged, so the same objects render through ``_repr_html_`` in Jupyter.
    Cell ids are numbered, so the same page gives the same bytes. An English notebook's setup
    also makes the lesson code write in English (``lesson.i18n.set_language``).
    """
    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n" + NOTEBOOK_INTRO[language].format(title=title)),
             nbformat.v4.new_code_cell(NOTEBOOK_SETUP[language])]
    for kind, text in outline:
        cells.append(nbformat.v4.new_code_cell(text) if kind == "code"
                     else nbformat.v4.new_markdown_cell(f"{'#' * int(kind[1:])} {text}"))
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number}"
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(notebook)
    return nbformat.writes(notebook).encode()


def notebooks(specs, pages: list[Page]) -> list[Asset]:
    """One notebook per entry of ``specs`` (the page table, ``build.PAGES``) that names one (key
    ``notebook``), from the outline of its rendered page in ``pages``."""
    by_path = {page.path: page for page in pages}
    return [Asset(spec["notebook"], page_notebook(by_path[spec["out"]].outline, spec["title"],
                                                  spec.get("lang", "es")))
            for spec in specs if spec.get("notebook") and spec["out"] in by_path]
