"""The Snakemake report in a real browser: the shared run's ``results/report.html`` (every section,
``snakemake --report``) opened in headless Chromium, which runs the report's own JavaScript.

The page is checked twice: as it is (``--dump-dom`` of the rendered page: the menu lists every
category), and walked the way a reader clicks through it: a copy of the report with a script
appended that, after the page has loaded, clicks every category, every subcategory, every
file's "information" button (its caption, with the table itself for CSV files) and every
figure's "view" button (the image in the content pane), and writes what the page showed into a
hidden element, read back from ``--dump-dom``.  Each file is listed by its labels (the rules'
``report(..., labels=...)``), not by its path.  ``--screenshot`` of the walk's last view (a
figure beside a table's caption) is kept as ``report.png``.

Chromium comes from ``ci/chromium_up.sh`` (Debian package ``chromium``); without it the test
is skipped with that reason.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from report_data import report_results

CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable") if shutil.which(name)),
    None,
)
WINDOW = (1600, 1000)

# Where files of the run must appear in the report: (category, subcategory), as the rules' report()
# outputs group them, and facts of the run its caption must state.  Every other table and figure of
# the run must be there too, with a caption, its table or its image.
EXPECTED = {
    "results/tables/attainable_bounds.csv": (
        "Statistics (App. F)", "Attainable bounds (App. F.1, F.3)",
        ["App. F.1 and F.3", "L = 10 runs", "ζ = 0.05", "δ = 0", "(m = 6, r = 6)", "(m = 100, r = 60)", "seed 20260707"],
    ),
    "results/tables/table2a.csv": (
        "Convex audits (Table 2)", "Table 2a",
        ["Table 2a", "Γ = 50", "2L = 2000", "m = r = 2", "ζ = 0.05", "cubic_newton", "certified ε ∈ {0.1, 800}",
         "certified δ = 0.01", "seed 20260707"],
    ),
    "results/tables/table2b.csv": (
        "Convex audits (Table 2)", "Table 2b",
        ["Table 2b", "Γ = 50", "2L = 2000", "m = r = 2", "output_perturbation", "certified ε ∈ {1, 100}", "certified δ = 0.01"],
    ),
    "results/convex/table2a_details.csv": (
        "Convex audits (Table 2)", "Table 2a",
        ["every number behind table2a", "true_mu", "Γ = 50", "2L = 2000", "cubic_newton", "certified ε ∈ {0.1, 800}"],
    ),
    "results/convex/table2b_details.csv": (
        "Convex audits (Table 2)", "Table 2b",
        ["every number behind table2b", "Γ = 50", "2L = 2000", "output_perturbation", "certified ε ∈ {1, 100}"],
    ),
    "results/figures/tradeoff_convex.png": (
        "Trade-off curves (mu-GDP)", "Convex audits (Table 2)",
        ["Convex audits (Table 2) in the μ-GDP view", "not μ-GDP for any μ < μ_LB", "ζ = 0.05", "Clopper–Pearson",
         "Γ = 50", "2L = 2000"],
    ),
    "results/provenance.json": (
        "Provenance", "Checkout, software and devices",
        ["Provenance of this run", "config_sha256", "torch_capability", "results/config.yaml"],
    ),
    "results/figures/convex_epsilon_lb.png": (
        "Convex audits (Table 2)", "Figure: lower bound vs certified epsilon",
        ["diagonal", "Γ = 50", "2L = 2000", "m = r = 2", "ζ = 0.05", "cubic_newton", "output_perturbation", "seed 20260707"],
    ),
}

# Appended to a copy of the report: clicks through the rendered page after it has loaded.
WALK = r"""
<script>
(function () {
  const walk = {menu: [], views: [], final: null, errors: []};
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const nav = () => document.querySelector("nav");
  const links = () => (nav() ? Array.from(nav().querySelectorAll("ul li a")) : []);
  const link = (text) => {
    const found = links().find((a) => a.innerText.trim() === text);
    if (!found) throw new Error("no menu entry " + JSON.stringify(text) + " in " + JSON.stringify(nav().innerText));
    return found;
  };
  const rows = () => Array.from(nav().querySelectorAll("table tbody tr")).filter((tr) => !tr.closest("table.docutils"));
  const GENERAL = ["Workflow", "Statistics", "About"];
  async function openCategory(name) {
    app.setView({navbarMode: "menu"});
    await sleep(100);
    link(name).click();
    await sleep(100);
  }
  async function openSubcategory(category, subcategory) {
    await openCategory(category);
    if (app.state.navbarMode !== "subcategory") {
      link(subcategory).click();
      await sleep(100);
    }
  }
  function buttons(row) {
    const cells = Array.from(row.querySelectorAll("td"));
    const label = cells.slice(0, -1).map((td) => td.innerText.trim()).join(" ");
    const [view, info] = Array.from(cells[cells.length - 1].querySelectorAll("a"));
    return {label, view, info};
  }
  async function shownImage() {
    const img = Array.from(document.querySelectorAll("img")).find((i) => !i.closest("nav") && i.src.startsWith("data:image/png"));
    if (!img) return null;
    for (let i = 0; i < 100 && !(img.complete && img.naturalWidth); i++) await sleep(50);
    return {width: img.naturalWidth, height: img.naturalHeight, shown_width: img.getBoundingClientRect().width};
  }
  async function run() {
    for (let i = 0; i < 200 && !(nav() && links().length); i++) await sleep(50);  // React's first render
    walk.menu = links().map((a) => a.innerText.trim());
    let figure = null, table = null;
    for (const category of walk.menu.filter((text) => !GENERAL.includes(text))) {
      await openCategory(category);
      const subcategories = app.state.navbarMode === "subcategory" ? [app.state.subcategory] : links().map((a) => a.innerText.trim());
      for (const subcategory of subcategories) {
        await openSubcategory(category, subcategory);
        const n = rows().length;
        for (let i = 0; i < n; i++) {
          await openSubcategory(category, subcategory);
          const entry = {category, subcategory};
          let {label, view, info} = buttons(rows()[i]);
          entry.label = label;
          entry.view_href = (view.getAttribute("href") || "").slice(0, 30);
          if (view.getAttribute("href") === "#") {
            view.click();
            await sleep(300);
            entry.image = await shownImage();
            if (!figure) figure = {category, subcategory, i};
            await openSubcategory(category, subcategory);
            ({info} = buttons(rows()[i]));
          }
          info.click();
          await sleep(200);
          entry.path = app.state.resultPath;
          if (!table && entry.path.includes("/tables/")) table = {category, subcategory, i};
          entry.info = nav().innerText;
          entry.caption_tables = Array.from(nav().querySelectorAll("table.docutils")).map((t) => ({
            caption: (t.querySelector("caption") || {innerText: ""}).innerText.trim(),
            header: Array.from(t.querySelectorAll("thead th")).map((th) => th.innerText.trim()),
            rows: Array.from(t.querySelectorAll("tbody tr")).map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.innerText.trim())),
          }));
          walk.views.push(entry);
        }
      }
    }
    // the last view, for the screenshot: a figure in the content pane, a table's caption beside it
    if (figure) {
      await openSubcategory(figure.category, figure.subcategory);
      buttons(rows()[figure.i]).view.click();
      await sleep(300);
    }
    if (table) {
      await openSubcategory(table.category, table.subcategory);
      buttons(rows()[table.i]).info.click();
      await sleep(300);
    }
    walk.final = {image: await shownImage(), nav: nav().innerText, mode: app.state.navbarMode};
  }
  function report() {
    const out = document.createElement("pre");
    out.id = "report-walk";
    out.hidden = true;
    out.textContent = JSON.stringify(walk);
    document.body.appendChild(out);
  }
  window.addEventListener("load", () => {
    run().catch((error) => walk.errors.push(String((error && error.stack) || error))).finally(report);
  });
})();
</script>
"""


def _chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--virtual-time-budget=60000", *args, page.as_uri(),
    ]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)


class _Text(HTMLParser):
    """Visible text inside the element with id ``root`` (scripts and styles left out), and the
    inline style of every element with an id."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})

    def __init__(self, root: str):
        super().__init__()
        self.root, self.depth, self.skip, self.parts, self.styles = root, 0, 0, [], {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.styles[attrs["id"]] = attrs.get("style") or ""
        if tag in self.VOID:
            return
        if self.depth or attrs.get("id") == self.root:
            self.depth += 1
            self.skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        if self.depth and tag not in self.VOID:
            self.depth -= 1
            self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.parts).split())


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary (chromium, chromium-browser, google-chrome) on PATH; ci/chromium_up.sh installs it")
def test_report_shows_every_table_and_figure_in_a_browser(shared_run, shared_report, tmp_path):
    report, root = shared_report, shared_run.workdir
    assert report.stat().st_size > 100_000

    # every table and figure of the run, from what it wrote
    produced = sorted(
        p.relative_to(root).as_posix()
        for p in [
            *(root / "results" / "tables").glob("*.csv"),
            *(root / "results" / "convex").glob("*_details.csv"),
            *(root / "results" / "figures").glob("*.png"),
            root / "results" / "provenance.json",
        ]
    )
    every_section = {"results/tables/table1a.csv", "results/tables/table1b.csv", "results/tables/table6.csv",
                     "results/figures/figure1a.png", "results/figures/gaussian_unlearning_ged_vs_p.png"}
    assert set(EXPECTED) | every_section <= set(produced), produced

    # 1. the page as it opens: the report's JavaScript ran and its menu lists every category
    opened = _chromium(report, tmp_path / "profile", "--dump-dom")
    assert opened.returncode == 0, opened.stderr[-3000:]
    page = _Text("app")
    page.feed(opened.stdout)
    assert "display: none" in page.styles.get("loading-screen", ""), "the report's scripts did not run to the end"
    assert "Snakemake Report" in page.text and "Results" in page.text, page.text[:2000]
    for category in {c for c, _, _ in EXPECTED.values()} | {"Neural-network audits", "Certified unlearning audits", "Gaussian certified unlearning"}:
        assert category in page.text, f"category {category!r} is not in the rendered menu: {page.text[:2000]}"
    # its landing page lists the run's header (report_metadata.yaml, given as --report-metadata), each
    # key beside its value, not the docutils parts Snakemake 9.27.1 would show (workflow/rules/report_header.smk)
    header = yaml.safe_load((root / "results" / "report_metadata.yaml").read_text())
    assert {"Workflow", "Commit", "Root seed", "Machine"} <= set(header), header
    for key, value in header.items():
        assert f"{key} {value}" in page.text, f"the landing page does not show {key}: {value}: {page.text[:3000]}"
    assert "encoding utf-8" not in page.text and "errors strict" not in page.text, page.text[:3000]

    # 2. clicked through: every file under its category and subcategory, with its caption
    driven = tmp_path / "report_walk.html"
    head, body_end, tail = report.read_text().rpartition("</body>")
    assert body_end, "the report has no </body>"
    driven.write_text(head + WALK + body_end + tail)
    walked = _chromium(driven, tmp_path / "profile", "--dump-dom")
    assert walked.returncode == 0, walked.stderr[-3000:]
    found = re.search(r'<pre id="report-walk" hidden="">(.*?)</pre>', walked.stdout, flags=re.DOTALL)
    assert found, "the walk wrote no result: " + walked.stdout[-2000:]
    walk = json.loads(html.unescape(found.group(1)))
    assert walk["errors"] == [], walk["errors"]

    views = {v["path"]: v for v in walk["views"]}
    assert len(views) == len(walk["views"]), "a file is listed twice"
    assert sorted(views) == produced, f"the report lists {sorted(views)}"
    labels = {path: result["labels"] for path, result in report_results(report).items()}
    for path in produced:
        view = views[path]
        assert view["label"] == " ".join(labels[path].values()), f"{path}: listed as {view['label']!r}, its labels are {labels[path]}"
        category, subcategory, facts = EXPECTED.get(path, (view["category"], view["subcategory"], []))
        assert category and subcategory and (view["category"], view["subcategory"]) == (category, subcategory), path
        caption = " ".join(view["info"].split())
        assert "DESCRIPTION" in caption.upper(), f"{path}: no caption shown"  # a heading, upper-cased by CSS
        for fact in facts:
            assert fact in caption, f"{path}: the caption does not say {fact!r}: {caption[:1500]}"
        if path.endswith(".json"):
            # the provenance record: its JSON, verbatim, in its caption; the view button downloads it
            record = json.loads((root / path).read_text())
            assert f'"commit": {json.dumps(record["workflow"]["commit"])}' in view["info"], view["info"][:3000]
            assert record["config_sha256"] in caption and "torch_capability" in caption, caption[:3000]
            assert view["view_href"].startswith("data:application/json"), view["view_href"]
        elif path.endswith(".csv"):
            # the table itself, in its caption: the CSV's header and every row
            with open(root / path, newline="") as handle:
                header, *rows = list(csv.reader(handle))
            assert len(view["caption_tables"]) == 1, f"{path}: {view['caption_tables']}"
            shown = view["caption_tables"][0]
            assert shown["caption"] == path and shown["header"] == header, f"{path}: {shown}"
            assert shown["rows"] == rows, f"{path}: the table shows {shown['rows']}, the file has {rows}"
            assert view["view_href"].startswith("data:text/csv"), view["view_href"]  # the download button
        else:
            width, height = _png_size(root / path)
            assert view["image"] is not None, f"{path}: the view button showed no image"
            assert (view["image"]["width"], view["image"]["height"]) == (width, height), f"{path}: {view['image']}"
            assert view["image"]["shown_width"] > 300, f"{path}: {view['image']}"

    # 3. a screenshot of the last view: the figure, and table 2a's caption with the table
    final = walk["final"]
    assert final["mode"] == "resultinfo" and final["image"] is not None
    assert "/tables/" in final["nav"]
    png = tmp_path / "report.png"
    shot = _chromium(driven, tmp_path / "profile", f"--screenshot={png}")
    assert shot.returncode == 0, shot.stderr[-3000:]
    assert _png_size(png) == WINDOW
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) blank"
