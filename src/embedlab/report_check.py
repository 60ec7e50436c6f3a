"""Check the HTML report (``snakemake --report``) in a real headless browser.

The report is a single-page React app with every result embedded as a data URI. We load a copy
of it, with one extra script at the end, in headless Chromium (``--dump-dom``). The script waits
for the app to mount, then for every embedded result: decodes it in the browser (a figure must
load as an image with non-zero size; a table's page must hold an HTML table with a header and
at least one row), checks its caption is not empty, and opens it with the app's own view
button, as a reader would: a result the app offers only as a download (a CSV: the app shows
images, HTML and PDF inline and nothing else) is a table the reader cannot see, and one it
opens must then be what the content pane shows. Then it walks the app's own navigation (each
category, each subcategory, clicked as a reader would) and checks that every result is listed
there. It writes what it found as JSON into the page, which Chromium prints; :func:`check`
compares that with the figures and tables the workflow made (``expected``: a table
``results/tables/<name>.csv`` is expected as its page ``results/report/<name>.html``) and
returns the problems (an empty list: the report is good).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: the outputs a reader expects in the report: every figure and every table
EXPECTED = re.compile(r"^results/(figures/[^/\s]+\.png|tables/[^/\s]+\.csv)$")
#: a table (CSV) and its page, which the report shows (the workflow's report_table)
TABLE, PAGE = re.compile(r"^results/tables/([^/\s]+)\.csv$"), "results/report/{}.html"

PROBE = r"""
<script id="embedlab-probe">
(async () => {
  const out = {errors: [], items: {}, listed: {}, mounted: false};
  window.addEventListener("error", (ev) => out.errors.push(String(ev.message)));
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  try {
    for (let i = 0; i < 50 && typeof app === "undefined"; i++) await pause(100);
    await pause(300);
    out.mounted = typeof app !== "undefined" && document.querySelector("#app").innerText.length > 0;
    for (const [path, res] of Object.entries(results)) {
      const caption = (res.caption || "").replace(/<[^>]*>/g, "").trim();
      const item = {mime: res.mime_type, caption: caption.length};
      if (res.mime_type.startsWith("image/")) {
        const size = await new Promise((r) => {
          const img = new Image();
          img.onload = () => r([img.naturalWidth, img.naturalHeight]);
          img.onerror = () => r([0, 0]);
          img.src = res.data_uri;
        });
        item.width = size[0]; item.height = size[1];
      } else if (res.mime_type === "text/html") {
        // the page's tables: those with a header cell and at least one row of data cells
        const text = await (await fetch(res.data_uri)).text();
        const page = new DOMParser().parseFromString(text, "text/html");
        const rows = [...page.querySelectorAll("table")]
          .filter((t) => t.querySelector("th"))
          .map((t) => [...t.querySelectorAll("tr")].filter((r) => r.querySelector("td")).length);
        item.tables = rows.filter((n) => n > 0).length;
        item.rows = Math.max(0, ...rows);
      }
      // open it with the app's own view button: a download link, or a view of the content pane
      const button = new ButtonViewManager(app).handleSelectedResult(path);
      item.download = Boolean(button.props.download);
      if (!item.download && button.props.onClick) {
        button.props.onClick();
        await pause(100);
        item.shown = [...document.querySelectorAll("#app iframe, #app img")]
          .some((el) => el.getAttribute("src") === res.data_uri);
      }
      out.items[path] = item;
    }
    // walk the menu as a reader would: click a category (and a subcategory), read the list
    const shown = () => navbar().innerText;
    // the menu is the app's <nav> (the content pane beside it shows e.g. the description)
    const navbar = () => document.querySelector("#app nav");
    const click = (text) => {
      const all = [...navbar().querySelectorAll("*")].reverse();
      const el = all.find((e) => e.innerText && e.innerText.trim() === text);
      if (el) el.click();
      return Boolean(el);
    };
    for (const [cat, subcats] of Object.entries(categories)) {
      for (const [sub, paths] of Object.entries(subcats)) {
        app.setView({navbarMode: "menu"});
        await pause(200);
        const opened = click(cat) && (await pause(200), true) &&
          (Object.keys(subcats).length === 1 || (click(sub) && (await pause(200), true)));
        const text = opened ? shown() : "";
        for (const path of paths) {
          const labels = Object.values(results[path].labels || {});
          const names = labels.length ? labels : [results[path].filename];
          out.listed[path] = names.every((n) => text.includes(String(n)));
        }
      }
    }
  } catch (err) {
    out.errors.push(String(err));
  }
  const pre = document.createElement("pre");
  pre.id = "embedlab-probe-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

RESULT = re.compile(r'<pre id="embedlab-probe-result">(.*?)</pre>', re.S)


def find_browser() -> str | None:
    """The first Chromium-like browser on PATH (Debian's package installs ``chromium``)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


def page_of(table: str) -> str:
    """The report's page of ``table`` (``results/tables/<name>.csv``); any other path as it is."""
    found = TABLE.match(table)
    return PAGE.format(found.group(1)) if found else table


def expected_from_summary(summary: str) -> list[str]:
    """What the report must show of the output files that ``snakemake --summary`` lists: each
    figure, and each table as its page."""
    files = (line.split("\t")[0].strip() for line in summary.splitlines()[1:])
    return sorted({page_of(f) for f in files if EXPECTED.match(f)})


def probe(report: str | Path, browser: str, timeout: float = 300) -> dict:
    """Load ``report`` in headless ``browser`` and return what the probe script found."""
    report = Path(report)
    if not report.exists():
        raise FileNotFoundError(f"report {report} does not exist")
    html = report.read_text(encoding="utf-8")
    head, body_end, tail = html.rpartition("</body>")  # the last one: scripts quote the tag
    if not body_end:
        raise ValueError(f"report {report} has no </body>: not a Snakemake HTML report")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(head + PROBE + body_end + tail, encoding="utf-8")
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={Path(tmp) / 'profile'}",
            "--virtual-time-budget=120000",
            "--dump-dom",
            page.as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    found = RESULT.search(proc.stdout)
    if found is None:
        raise RuntimeError(
            f"{browser} did not run the report's probe (exit {proc.returncode}): "
            f"{proc.stderr.strip()[-2000:]}"
        )
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    return json.loads(text.replace("&amp;", "&"))


def problems(found: dict, expected: Iterable[str]) -> list[str]:
    """Everything wrong with the probed report, one line each."""
    out = [f"JavaScript error in the report: {e}" for e in found["errors"]]
    if not found["mounted"]:
        out.append("the report app did not render")
    items = found["items"]
    for path in expected:
        if path not in items:
            out.append(f"{path}: missing from the report")
    for path, item in sorted(items.items()):
        if item["mime"].startswith("image/") and min(item["width"], item["height"]) <= 0:
            out.append(f"{path}: the image does not load in the browser")
        if item["download"]:
            out.append(
                f"{path}: only a download in the report ({item['mime']}), not shown: "
                "the report shows a table as its HTML page (report_table in common.smk)"
            )
        elif not item.get("shown", False):
            out.append(f"{path}: opened in the report, it is not what the report shows")
        if item["mime"] == "text/html" and item["tables"] < 1:
            out.append(f"{path}: the page holds no HTML table with a header and rows")
        if item["caption"] == 0:
            out.append(f"{path}: no caption")
        if not found["listed"].get(path, False):
            out.append(f"{path}: not listed in its category of the report's menu")
    return out


def check(report: str | Path, expected: Iterable[str], browser: str | None = None) -> list[str]:
    """Problems of ``report`` against the ``expected`` figures and tables (empty: all good)."""
    browser = browser or find_browser()
    if browser is None:
        raise FileNotFoundError(
            "no Chromium on PATH (Debian: apt-get install chromium); needed to check the report"
        )
    return problems(probe(report, browser), list(expected))
