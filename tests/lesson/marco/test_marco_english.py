"""«Python in the browser» (``templates/en/python.html``) against «Python en el navegador»
(``templates/marco.html``): the English cells are the Spanish computation with English names and
labels, so run in CPython they print the same numbers, written the English way."""
import contextlib
import io
import re
import textwrap

import pytest

import build
from lesson.i18n import set_language

CELL = re.compile(r"{% call cell\((.*?)\) %}\n(.*?){% endcall %}", re.S)
SPANISH = build.ROOT / "templates" / "marco.html"
ENGLISH = build.ROOT / "templates" / "en" / "python.html"


def cells(template):
    """``[(arguments, source)]`` of each cell of ``template``, in order."""
    return [(args, textwrap.dedent(body)) for args, body in CELL.findall(template.read_text())]


def run(template, language):
    """Each cell's printed output, the cells run in order in one namespace (as in the page); a
    cell marked fails=true must raise, and its output is the exception's type."""
    outputs, namespace = [], {}
    shown = []
    namespace["display"] = lambda x: shown.append(x._repr_html_() if hasattr(x, "_repr_html_") else repr(x))
    set_language(language)
    try:
        for args, source in cells(template):
            out = io.StringIO()
            shown.clear()
            last = source.rstrip().split("\n")[-1]
            with contextlib.redirect_stdout(out):
                if "fails=true" in args:
                    with pytest.raises(Exception) as error:
                        exec(source, namespace)
                    outputs.append(error.type.__name__)
                    continue
                exec(source, namespace)
            text = out.getvalue() + "".join(shown)
            # the value of a last line that is a bare expression, as the page shows it
            if re.fullmatch(r"[A-Za-z_]\w*\(\w*\)", last.strip()):
                value = eval(last, namespace)
                text += value._repr_html_() if hasattr(value, "_repr_html_") else repr(value)
            outputs.append(text)
    finally:
        set_language("es")
    return outputs


def numbers(text, language):
    """The numbers ``text`` writes, as floats: Spanish "0,128" and "7,38·10⁻⁵", English "0.128"
    and "7.38×10⁻⁵" (a NumPy array or a list is written the same in both)."""
    if language == "es":
        text = re.sub(r"(?<=\d),(?=\d)", ".", text).replace("·10", "×10")
    superscript = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
    text = re.sub(r"×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "e" + m.group(1).translate(superscript), text)
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)]


@pytest.fixture(scope="module")
def outputs():
    return {"es": run(SPANISH, "es"), "en": run(ENGLISH, "en")}


def test_the_two_editions_have_the_same_cells_with_the_same_flags_and_names():
    def flags(args):
        return re.sub(r'^"[^"]*",?\s*', "", args)  # the label is the only part in a language
    assert [flags(a) for a, _ in cells(SPANISH)] == [flags(a) for a, _ in cells(ENGLISH)]


def test_the_english_cells_print_the_spanish_cells_numbers(outputs):
    assert len(outputs["es"]) == len(outputs["en"])
    for es, en in zip(outputs["es"], outputs["en"]):
        assert numbers(es, "es") == numbers(en, "en"), (es, en)


def test_the_english_cells_print_no_spanish_and_no_decimal_comma(outputs):
    text = "\n".join(outputs["en"])
    # generated text after the prompt «La señora» stays Spanish: leave the quoted strings out
    prose = re.sub(r"'[^']*'", "''", re.sub(r"b'[^']*'", "''", text))
    assert not re.search(r"\d,\d", prose)
    for word in ("probabilidad", "suma", "masa", "piezas", "uniones", "Sigo", "tras la máscara", " y "):
        assert word not in prose, word
    assert "kept mass: 0.336" in text and "512 tokens: 256 bytes and 256 merges" in text


def test_the_english_cells_use_english_names_and_number_formats():
    source = "\n".join(body for _, body in cells(ENGLISH))
    assert "es_" not in source and "en_decimal" in source and "en_sci" in source
    for name in ("permitidos", "siguientes", "Barras", "enmascarados", "empieza_por_espacio"):
        assert name not in source, name
