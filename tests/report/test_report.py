"""report/: tables as CSV/Markdown/LaTeX, cell formatting, figures saved as PNG + PDF reproducibly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.report.convex_tables import convex_figure
from unlearn_audit.report.figures import new_figure, save_figure
from unlearn_audit.report.tables import format_cell, write_table


def test_write_table_writes_csv_md_and_tex(tmp_path):
    df = pd.DataFrame({"epsilon_lb": [0.123456789, 2.0], "method": ["grad_ascent", "fine tune"]})
    paths = write_table(df, tmp_path / "tables" / "table9", caption="Table 9: a_b test")
    assert [p.name for p in paths] == ["table9.csv", "table9.md", "table9.tex"]
    assert all(p.exists() for p in paths)

    csv = pd.read_csv(paths[0])
    assert list(csv.columns) == ["epsilon_lb", "method"]
    assert csv.epsilon_lb[0] == pytest.approx(0.123456789, abs=1e-12)  # full precision
    assert "0.123456789" in paths[0].read_text()

    md = paths[1].read_text().splitlines()
    assert md[0] == "**Table 9: a_b test**"
    assert md[2] == "| epsilon_lb | method |"
    assert md[3] == "|---|---|"
    assert md[4] == "| 0.1235 | grad_ascent |"
    assert md[5] == "| 2.0000 | fine tune |"
    assert "0.123456789" not in paths[1].read_text()

    tex = paths[2].read_text()
    assert r"\caption{Table 9: a\_b test}" in tex
    assert r"\label{tab:table9}" in tex
    assert r"\begin{tabular}{rl}" in tex
    assert r"epsilon\_lb & method \\" in tex
    assert r"0.1235 & grad\_ascent \\" in tex
    assert "grad_ascent" not in tex and "epsilon_lb" not in tex
    assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")


def test_latex_escapes_special_characters(tmp_path):
    df = pd.DataFrame({"a&b": ["50%", "$x$", "#1", "{y}"]})
    tex = write_table(df, tmp_path / "t")[2].read_text()
    assert r"a\&b \\" in tex
    for cell in (r"50\%", r"\$x\$", r"\#1", r"\{y\}"):
        assert cell + r" \\" in tex


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (float("nan"), ""),
        (None, ""),
        (pd.NA, ""),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (True, "yes"),
        (False, "no"),
        (0.0, "0.0000"),
        (1.23456, "1.2346"),
        (1.5e-5, "1.500e-05"),
        (-2.5e-7, "-2.500e-07"),
        (3.2e7, "3.200e+07"),
        (1e-4, "0.0001"),
        (7, "7"),
        ("table2a", "table2a"),
    ],
)
def test_format_cell(value, expected):
    assert format_cell(value) == expected


def test_format_cell_digits_and_numpy_floats():
    assert format_cell(0.123456, digits=2) == "0.12"
    assert format_cell(np.float64(0.5)) == "0.5000"  # np.float64 is a float
    assert format_cell(np.float64("nan")) == ""


def _summaries() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mechanism": ["perturbed_newton"] * 3 + ["output_perturbation"] * 3,
            "epsilon": [0.1, 5.0, 50.0, 0.5, 2.0, 10.0],
            "epsilon_lb_pairwise": [0.0, 1.2, 6.0, 0.05, 0.9, 3.0],
            "epsilon_lb_joint": [0.0, 0.8, 4.0, 0.0, 0.5, 2.5],
        }
    )


def test_convex_figure_writes_png_pdf_and_the_numbers_it_plots(tmp_path):
    paths = convex_figure(_summaries(), tmp_path / "figures" / "convex_epsilon_lb")
    assert [p.name for p in paths] == ["convex_epsilon_lb.csv", "convex_epsilon_lb.png", "convex_epsilon_lb.pdf"]
    plotted = pd.read_csv(paths[0])
    assert len(plotted) == 12 and set(plotted.auditor) == {"pairwise", "joint"}
    joint = plotted[(plotted.mechanism == "perturbed_newton") & (plotted.auditor == "joint")]
    assert joint.epsilon_lb.tolist() == [0.0, 0.8, 4.0] and joint.plotted.tolist() == [False, True, True]
    png, pdf = (p.read_bytes() for p in paths[1:])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert pdf.startswith(b"%PDF-") and len(pdf) > 1000


def _figure():
    fig, ax = new_figure()
    x = np.linspace(0, 1, 20)
    ax.plot(x, x**2, marker="o", label="x²")
    ax.set_title(r"$\varepsilon_{LB}$ against $r$")
    ax.legend()
    return fig


def test_save_figure_is_byte_reproducible(tmp_path):
    first = save_figure(_figure(), tmp_path / "a" / "fig")
    second = save_figure(_figure(), tmp_path / "b" / "other_name")
    for one, two in zip(first, second):
        assert one.suffix == two.suffix
        assert one.read_bytes() == two.read_bytes(), one.suffix
    pdf = first[1].read_bytes()
    assert b"/CreationDate" not in pdf


def test_saved_png_metadata_has_no_timestamp(tmp_path):
    from PIL import Image

    png = save_figure(_figure(), tmp_path / "fig")[0]
    with Image.open(png) as image:
        info = dict(image.text)
    assert set(info) == {"Software"}
    assert info["Software"].startswith("Matplotlib")
