"""Command line: ``python -m embedlab <verb>``, the user's commands: fetch and build a dataset,
an own dataset's entry, the docs pages, the timings of a run, the report check. The
workflow's rules do not call these: each runs a step (:mod:`embedlab.steps`), and the data
verbs call the same functions as the data steps (:mod:`embedlab.datasets.steps`).

Errors for bad input are printed as one line naming what was wrong (exit status 1), without
a traceback; ``--traceback`` shows it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from embedlab import __version__

log = logging.getLogger("embedlab")


def _cmd_timings(args: argparse.Namespace) -> None:
    from embedlab import timings

    timings.write_timings(
        args.benchmarks, args.csv, args.md, args.dry_run, args.critical_path_csv, args.cores
    )


def _cmd_fetch(args: argparse.Namespace) -> None:
    from embedlab.datasets import steps

    mirrors = args.mirror if args.mirror is not None else steps.env_mirrors()
    steps.fetch_registered(args.registry, args.file, args.dest, mirrors, args.offline)


def _cmd_build(args: argparse.Namespace) -> None:
    from embedlab.datasets import steps

    overrides = json.loads(args.params) if args.params else None
    steps.build_registered(args.registry, args.dataset, args.raw_dir, args.out, overrides)


def _own_entry(args: argparse.Namespace) -> dict:
    """The own_datasets entry of a command line: ``--entry`` (JSON), then each entry flag given
    (a flag overrides the same field of the JSON)."""
    entry = json.loads(args.entry) if args.entry else {}
    if not isinstance(entry, dict):
        raise ValueError(f"--entry must be a JSON object, got {args.entry!r}")
    for field in (
        "kind",
        "format",
        "path",
        "url",
        "sha256",
        "description",
        "labels",
        "names",
        "array",
        "n",
        "first_index",
        "directed",
    ):
        value = getattr(args, field)
        if value is not None:
            entry[field] = value
    return entry


def _cmd_build_own(args: argparse.Namespace) -> None:
    from embedlab.datasets import own, steps

    t0 = time.perf_counter()
    art = own.build_own(args.name, _own_entry(args), args.raw, args.labels_file, args.out)
    steps.log_built(args.name, art, t0)


def _cmd_fetch_own(args: argparse.Namespace) -> None:
    from embedlab.datasets import own

    got = own.fetch_entry(args.name, _own_entry(args), args.dest, not args.offline)
    log.info("fetched own dataset %s -> %s (sha256 ok)", args.name, got)


def _add_own_entry_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", required=True, help="the dataset's name (its own_datasets key)")
    p.add_argument("--entry", default=None, help="the own_datasets entry as a JSON object")
    p.add_argument(
        "--kind", default=None, help="vectors, similarity, triplets or cooccurrence"
    )
    p.add_argument("--format", default=None, help="csv, tsv, npy, npz, edges, matrix, triplets")
    p.add_argument("--path", default=None, help="the entry's local raw file")
    p.add_argument("--url", default=None, help="the entry's URL (with --sha256)")
    p.add_argument("--sha256", default=None, help="the raw file's sha256 (checked)")
    p.add_argument("--description", default=None)
    p.add_argument(
        "--labels",
        default=None,
        help="csv/tsv: label column; npz: label array; triplets: labels file",
    )
    p.add_argument("--names", default=None, help="csv/tsv: the item-name column")
    p.add_argument("--array", default=None, help="npz: the array of points (default X)")
    p.add_argument("--n", type=int, default=None, help="triplets: the number of items")
    p.add_argument(
        "--first-index",
        dest="first_index",
        type=int,
        default=None,
        help="triplets: the first index, 0 or 1 (default 0)",
    )
    p.add_argument(
        "--directed",
        default=None,
        action=argparse.BooleanOptionalAction,
        help="edges: read a line i j as i -> j only (default: undirected)",
    )


def _cmd_check_report(args: argparse.Namespace) -> None:
    from embedlab import report_check

    expected = list(args.expect)
    if args.expect_summary:
        summary = Path(args.expect_summary).read_text()
        expected += report_check.expected_from_summary(summary)
    found = report_check.check(args.report, expected, args.browser)
    if found:
        raise RuntimeError(
            f"report {args.report} has {len(found)} problem(s):\n  " + "\n  ".join(found)
        )
    log.info("report %s: all %d expected figures and tables render", args.report, len(expected))


def _cmd_docs(args: argparse.Namespace) -> None:
    from embedlab import docs, docs_snapshot
    from embedlab.docs_layout import check_pages

    if args.section and not args.results:
        raise ValueError("docs: --section replaces a part of the pages with --results': give both")
    if args.results and args.section:
        benchmarks = args.benchmarks or Path(args.results).resolve().parent / "logs" / "benchmarks"
        docs_snapshot.snapshot_section(
            args.results,
            args.data,
            args.out,
            args.templates,
            args.section,
            args.configuration,
            sorted(Path(args.paper_values).glob("*.csv")),
            benchmarks,
        )
    elif args.results:
        docs_snapshot.snapshot(
            args.results, args.data, args.out, args.templates, args.configuration
        )
    if args.resummarize:
        paper_values = sorted(Path(args.paper_values).glob("*.csv"))
        docs_snapshot.write_summary(args.data, docs_snapshot.resummarized(args.data, paper_values))
    pages = docs.render(args.templates, args.data, args.schemas)
    docs.write_pages(pages, args.out)
    readme = Path(args.readme)
    readme.write_text(docs.fill_readme(readme.read_text(), docs.readme_block(args.data)))
    log.info("wrote the pages of %s from %s, and %s's results block", args.out, args.data, readme)
    if problems := check_pages(pages):
        raise docs_snapshot.DocsError(
            f"{len(problems)} place(s) in the pages break their reading rules "
            "(embedlab.docs_layout):\n  " + "\n  ".join(problems)
        )


def build_parser() -> argparse.ArgumentParser:
    """The parser of every verb."""
    parser = argparse.ArgumentParser(prog="embedlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"embedlab {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show tracebacks on error")
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser("fetch", help="fetch one raw file (cache, mirror, URL) and verify it")
    p.add_argument("--registry", required=True)
    p.add_argument("--file", required=True, help="registry path of the raw file")
    p.add_argument("--dest", required=True)
    p.add_argument(
        "--mirror",
        action="append",
        default=None,
        help="mirror folder to read before the URL (repeatable; default: $EMBEDLAB_MIRRORS, "
        "folders separated by the path separator, as the workflow's rules set it)",
    )
    p.add_argument("--offline", action="store_true", help="never download")
    p.set_defaults(func=_cmd_fetch)

    p = sub.add_parser("build", help="build one dataset artifact from its raw files")
    p.add_argument("--registry", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--raw-dir", required=True)
    p.add_argument("--out", required=True, help="artifact folder")
    p.add_argument("--params", default=None, help="JSON object overriding builder params")
    p.set_defaults(func=_cmd_build)

    p = sub.add_parser(
        "build-own-dataset", help="build one own_datasets entry (generic format) into an artifact"
    )
    _add_own_entry_flags(p)
    p.add_argument("--raw", default=None, help="the raw file (default: the entry's path)")
    p.add_argument(
        "--labels-file",
        default=None,
        help="triplets: the labels file (default: the entry's labels)",
    )
    p.add_argument("--out", required=True, help="artifact folder")
    p.set_defaults(func=_cmd_build_own)

    p = sub.add_parser("fetch-own-dataset", help="fetch an own_datasets url entry, verified")
    _add_own_entry_flags(p)
    p.add_argument("--dest", required=True)
    p.add_argument("--offline", action="store_true", help="never download")
    p.set_defaults(func=_cmd_fetch_own)

    p = sub.add_parser("timings", help="where the last run's time went (benchmark files)")
    p.add_argument("--benchmarks", required=True, help="logs/benchmarks")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument(
        "--dry-run",
        help="Snakemake's `--dry-run --forceall` output for the run's config files, its paths "
        "relative to this directory: adds the run's critical path (`make timings` makes it)",
    )
    p.add_argument("--critical-path-csv", help="with --dry-run: the critical path's jobs, as CSV")
    p.add_argument(
        "--cores", type=int, default=2, help="with --dry-run: cores of the one-sitting schedule"
    )
    p.set_defaults(func=_cmd_timings)

    p = sub.add_parser("check-report", help="render the HTML report in headless Chromium")
    p.add_argument("report", help="results/report.html")
    p.add_argument("--expect", nargs="*", default=[], help="figures/tables it must show")
    p.add_argument("--expect-summary", help="`snakemake --summary` output: expect its outputs")
    p.add_argument("--browser", help="Chromium executable (default: found on PATH)")
    p.set_defaults(func=_cmd_check_report)

    p = sub.add_parser("docs", help="the docs pages from templates and a run's tables")
    p.add_argument("--results", help="first snapshot this run's results folder into --data")
    p.add_argument("--configuration", default="", help="the run's configuration (with --results)")
    p.add_argument(
        "--section",
        help="replace only this part of --data with --results': a paper's (its "
        "config section: diffeomap, tste, ...; a paper rerun on its own) or datasets (counts)",
    )
    p.add_argument(
        "--resummarize",
        action="store_true",
        help="make the papers' rows of --data's summary again from its tables and "
        "--paper-values (after a change to the summary's code; the dataset counts' rows kept)",
    )
    p.add_argument(
        "--paper-values", default="config/paper_values", help="with --section or --resummarize"
    )
    p.add_argument(
        "--benchmarks",
        help="with --section: the run's benchmark files "
        "(default: logs/benchmarks beside --results)",
    )
    p.add_argument("--templates", default="docs/templates")
    p.add_argument("--data", default="docs/data")
    p.add_argument("--schemas", default="workflow/schemas")
    p.add_argument("--out", default="docs")
    p.add_argument("--readme", default="README.md")
    p.set_defaults(func=_cmd_docs)

    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        args.func(args)
    except (ValueError, KeyError, FileNotFoundError, RuntimeError) as exc:
        if args.traceback:
            raise
        print(f"embedlab {args.verb}: error: {exc}", file=sys.stderr)
        return 1
    return 0
