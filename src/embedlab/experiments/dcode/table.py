"""Table 2 from the Table 2 jobs' result files (:mod:`.rank`), beside the paper's values.

Per dataset, observation model, subset size and method: the mean over subsets of the
per-subset median rank, its standard error and the number of subsets used (degenerate LLE
embeddings left out and counted); the paired (Wilcoxon signed-rank) tests of the paper's
comparisons over the subsets; and the validated variances with their grids. The paper's corpus
(:data:`PAPER_DATASET`) comes first with the paper's values; each own co-occurrence dataset
(:mod:`.own`) follows with its rows, without a paper value. No method is imported (a table job
loads neither scikit-learn nor numba).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab import tables
from embedlab.evaluate.ranking import PAPER_WORDS
from embedlab.experiments.dcode.fits import FIT_OF, LABEL, METHODS, REFERENCES
from embedlab.experiments.dcode.validation import grid_report

#: labels of the observation models, one block of the table each
OBSERVATION_LABEL = {
    "counts": "count-weighted observations (N_t x eq. 2)",
    "per_token": "per-token reading (eq. 2 as printed: one token per year)",
}
#: the paper's comparisons (section 4.5): D-CODE against its rivals, dynamic against static
CLAIMS = [
    ("dcode", "dcode_mle"),
    ("dcode", "static_dcode"),
    ("dcode", "static_dcode_mle"),
    ("dcode", "dynamic_pca"),
    ("dcode", "lle"),
    ("dcode_mle", "static_dcode_mle"),
]
#: the mean over subsets is reported as precise enough when its standard error is below this
MAX_STANDARD_ERROR = 0.5
#: the corpus of the paper's Table 2, whose rows carry the paper's values
PAPER_DATASET = "nips12"


#: what the table reads of a Table 2 result file (:func:`.rank.rank_size`)
RESULT_KEYS = ("size", "observation", "prediction", "paper_words", "chosen", "validation", "rows")


def _load_results(paper_files, own_files=()) -> tuple[pd.DataFrame, dict]:
    """Every result file's rows, each with its dataset and observation model, and each file's
    contents keyed ``(dataset, observation, authors, words)``: ``paper_files`` are
    :data:`PAPER_DATASET`'s (:mod:`.rank`), ``own_files`` name their dataset (:mod:`.own`). A
    file without one of :data:`RESULT_KEYS` (and, for an own dataset, ``dataset``), or a
    second file of one key, is an error naming the file."""
    rows, meta = [], {}
    files = [(path, False) for path in paper_files] + [(path, True) for path in own_files]
    for path, own in files:
        data = json.loads(Path(path).read_text())
        missing = [key for key in RESULT_KEYS + (("dataset",) if own else ()) if key not in data]
        if missing:
            raise ValueError(f"{path}: not a dcode.rank result (no {', '.join(missing)})")
        dataset = data["dataset"] if own else PAPER_DATASET
        key = (dataset, data["observation"], *data["size"])
        if key in meta:
            raise ValueError(f"{path}: a second result for {key}")
        meta[key] = data
        rows += [
            {**r, "dataset": dataset, "observation": data["observation"]} for r in data["rows"]
        ]
    return pd.DataFrame(rows), meta


def rank_table(
    result_files, paper_csv, own_files=()
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(long table per dataset x observation x size x method, paired tests, the result
    files' meta); ``result_files`` are the paper corpus's, ``own_files`` the own datasets'.

    Ours: the mean over subsets of the per-subset median rank, its standard error, and the
    number of subsets used (degenerate LLE embeddings left out and counted). Paired tests: the
    Wilcoxon signed-rank p-value of each of the paper's comparisons over the subsets both
    methods ranked. Only the paper corpus's count-weighted rows have the paper's values.
    """
    paper = pd.read_csv(paper_csv)
    ref = {
        (int(a), int(w), m): v
        for a, w, m, v in paper[["n_authors", "n_words", "method", "median_rank"]].itertuples(
            index=False
        )
    }
    df, meta = _load_results(result_files, own_files)
    out, tests = [], []
    keys = ["dataset", "observation", "n_authors", "n_words"]
    for (dataset, observation, a, w), g in df.groupby(keys, sort=False):
        wide = g.pivot(index="subset", columns="method", values="median_rank")
        data = meta[(dataset, observation, a, w)]
        paper_block = dataset == PAPER_DATASET and observation == "counts"
        for method in [m for m in METHODS + REFERENCES if m in wide]:
            values = wide[method].dropna()
            mine = g[(g["method"] == method) & g["median_rank"].notna()]
            paper_value = ref.get((a, w, method)) if paper_block else None
            mean = float(values.mean()) if len(values) else np.nan
            sd = float(values.std(ddof=1)) if len(values) > 1 else np.nan
            fit = FIT_OF.get(method)
            out.append(
                {
                    "dataset": dataset,
                    "observation": observation,
                    "subset": f"{a}a,{w}w",
                    "n_authors": a,
                    "n_words": w,
                    "method": method,
                    "label": LABEL[method],
                    "median_rank": round(mean, 2),
                    "standard_error": round(sd / np.sqrt(len(values)), 2),
                    "spread": round(sd, 2),
                    "subsets_ok": len(values),
                    "subsets": len(wide),
                    "mean_rank": round(float(mine["mean_rank"].mean()), 2),
                    **{
                        f"median_rank_{m}": round(float(mine[f"median_rank_{m}"].mean()), 2)
                        for m in PAPER_WORDS
                    },
                    "paper": paper_value,
                    "verdict": tables.verdict(mean, paper_value, tol=1.0, lower_is_better=True),
                    "params": json.dumps(data["chosen"].get(fit, {})) if fit else "",
                    "prediction": data["prediction"] if fit == "dynamic" else "",
                }
            )
        for method, rival in CLAIMS:
            if method in wide and rival in wide:
                test = paired_test(wide, method, rival)
                tests.append(
                    {"dataset": dataset, "observation": observation, "subset": f"{a}a,{w}w",
                     **test}  # fmt: skip
                )
    return pd.DataFrame(out), pd.DataFrame(tests), meta


def paired_test(wide: pd.DataFrame, method: str, rival: str) -> dict:
    """Mean paired difference and Wilcoxon signed-rank p-value of ``method`` vs ``rival``.

    Over the subsets both ranked (lower rank wins); ``p`` is NaN when fewer than two subsets
    or every difference is zero.
    """
    import scipy.stats

    pair = wide[[method, rival]].dropna()
    diff = pair[method] - pair[rival]
    p = np.nan
    if len(pair) >= 2 and diff.any():
        p = float(scipy.stats.wilcoxon(pair[method], pair[rival]).pvalue)
    return {
        "claim": f"{LABEL[method]} < {LABEL[rival]}",
        "mean_difference": round(float(diff.mean()), 2) if len(pair) else np.nan,
        "wins/losses/ties": f"{(diff < 0).sum()}/{(diff > 0).sum()}/{(diff == 0).sum()}",
        "p_wilcoxon": round(p, 4) if np.isfinite(p) else np.nan,
        "holds_ours": bool(diff.mean() < 0) if len(pair) else None,
    }


def _layout(long: pd.DataFrame, paper: bool) -> pd.DataFrame:
    """One row per size, one column per method: ``mean ± s.e. (paper)``."""
    layout = []
    for key, g in long.groupby("subset", sort=False):
        row = {"(authors, words)": key, "subsets": int(g["subsets"].max())}
        for r in g.itertuples():
            text = f"{r.median_rank:.2f} ± {r.standard_error:.2f}"
            if r.subsets_ok < r.subsets:
                text += f" [{r.subsets_ok} subsets]"
            if paper and not pd.isna(r.paper):
                text += f" ({r.paper:g})"
            row[r.label] = text
        layout.append(row)
    return pd.DataFrame(layout)


def validation_note(meta: dict, dataset: str, observation: str) -> tuple[str, int]:
    """Markdown lines: grids and chosen values per size of ``dataset``; and how many sit at a
    grid edge."""
    lines, at_edge = [], 0
    for (name, obs, a, w), data in meta.items():
        if name != dataset or obs != observation or not data["chosen"]:
            continue
        parts = []
        grids = grid_report(data["validation"], data["chosen"])
        for fit, chosen in data["chosen"].items():
            for setting, value in chosen.items():
                report = grids[fit][setting]
                grid = ", ".join(f"{v:g}" for v in report["grid"])
                edge = " **at the grid's edge**" if report["at_edge"] else ""
                at_edge += bool(report["at_edge"])
                parts.append(f"{fit} {setting} = {value:g}{edge} (grid {grid})")
        lines.append(f"- {a}a,{w}w: " + "; ".join(parts))
    return "\n".join(lines), at_edge


def _blocks(long: pd.DataFrame, tests: pd.DataFrame, meta: dict, dataset: str, level: str):
    """Markdown of ``dataset``'s rows: per observation model its table (the paper's values
    beside ours for the paper corpus's count-weighted block), the validated variances and the
    paired tests; headings at ``level`` ("##", "###")."""
    out = []
    rows = long[long["dataset"] == dataset]
    for observation in [o for o in OBSERVATION_LABEL if o in set(rows["observation"])]:
        block = rows[rows["observation"] == observation]
        title = OBSERVATION_LABEL[observation]
        main = dataset == PAPER_DATASET and observation == "counts"
        heading = f"{level} {title[0].upper()}{title[1:]}" + (
            " (the table's reading)" if main else ""
        )
        out += [heading, "", _layout(block, paper=main).to_markdown(index=False), ""]
        worst = block["standard_error"].max()
        if worst >= MAX_STANDARD_ERROR:
            out.append(
                f"The standard error reaches {worst:.2f} rank, above {MAX_STANDARD_ERROR}: "
                "more subsets are needed.\n"
            )
        note, at_edge = validation_note(meta, dataset, observation)
        held_out = "years" if dataset == PAPER_DATASET else "periods"
        out += [
            f"Variances chosen on held-out {held_out} (lowest mean rank of the validation "
            "pairs; log-spaced grids, extended past an edge the best value sat on):",
            "",
            note,
            "",
        ]
        if at_edge:
            out.append(f"{at_edge} chosen value(s) remain at the edge of the extended grid.\n")
        t = tests.iloc[0:0]
        if len(tests):
            chosen = (tests["dataset"] == dataset) & (tests["observation"] == observation)
            t = tests[chosen].drop(columns=["dataset", "observation"])
        if len(t):
            out += [
                "Paired comparisons over the subsets (mean difference of the per-subset "
                "medians, wins/losses/ties of the first method, Wilcoxon signed-rank p):",
                "",
                t.to_markdown(index=False),
                "",
            ]
    return out


def own_markdown(long: pd.DataFrame, tests: pd.DataFrame, meta: dict, left_out: dict) -> str:
    """The own datasets' part of ``dcode_rank.md``: each dataset's protocol in a line, then
    its blocks; the own datasets the table leaves out, and why ('' for none of either)."""
    out = []
    for dataset in [d for d in dict.fromkeys(long["dataset"]) if d != PAPER_DATASET]:
        data = next(v for (name, *_), v in meta.items() if name == dataset)
        periods, (rows, columns) = data["periods"], data["pool"]
        sizes = sorted({(a, w, *v["paper_size"]) for (n, _, a, w), v in meta.items()
                        if n == dataset})  # fmt: skip
        scaled = ", ".join(f"{a}a,{w}w (of {pa}a,{pw}w)" for a, w, pa, pw in sizes)
        out += [
            f"### {dataset}\n",
            f"{periods['count']} periods: embedded {periods['first']} to {periods['fitted']}, "
            f"the documents of {periods['ranked']} ranked (a document: one row item's column "
            f"counts in one period, its author that row item). Pool: {rows} rows and "
            f"{columns} columns; subsets {scaled} of the paper's sizes, the same fractions of "
            "the pool.\n",
            *_blocks(long, tests, meta, dataset, "####"),
        ]
        mine = long[long["dataset"] == dataset]
        unranked = list(dict.fromkeys(mine.loc[mine["subsets_ok"] == 0, "label"]))
        if unranked:
            out.append(
                f"No subset ranked by {', '.join(unranked)}: a degenerate embedding (LLE: no "
                "more rows with counts in the last fitted period than its n_neighbors, "
                "dcode.params.lle) or no document of the subset's rows in the ranked period.\n"
            )
    note = tables.left_out_note(left_out)
    if not out and not note:
        return ""
    intro = (
        "Your own co-occurrence data under Table 2's protocol (no paper value): the last "
        "period is ranked, the ones before it embedded; the variances are validated on the "
        "periods before the ranked one.\n"
    )
    return "\n".join(["## Your own datasets\n", intro, *out, note])


def table_markdown(
    long: pd.DataFrame, tests: pd.DataFrame, meta: dict, left_out: dict | None = None
) -> str:
    """``dcode_rank.md``: the paper corpus's block per observation model with the paired
    tests and the validation, the two readings of a paper; then the own datasets
    (:func:`own_markdown`; ``left_out``: own dataset -> why the table leaves it out)."""
    first = next(v for (name, *_), v in meta.items() if name == PAPER_DATASET)
    predictive = first["prediction"] == "predictive"
    out = [
        "# D-CODE Table 2: median predicted rank of the true authors\n",
        "Median rank of the true authors of NIPS papers of volume 12 (the paper's t = 13, "
        "1999) among the subset's authors, by Naive Bayes on each paper's "
        f"{first['paper_words']} of words, embedding volumes 0-11 (t <= 12). Each cell: the "
        "mean over random subsets of the per-subset median ± its standard error (the paper's "
        "value in brackets). D-CODE ranks with the "
        + (
            "one-step predictive distribution (filtered at t = 12 plus the transition noise)"
            if predictive
            else "filtered distribution at t = 12"
        )
        + "; D-CODE MLE uses the same fit's means, Static D-CODE [MLE] one fit of volume 11. "
        "Chance and Empirical NB (add-one smoothed word frequencies of volumes 0-11, no "
        "embedding) are references, not in the paper.\n",
        *_blocks(long, tests, meta, PAPER_DATASET, "##"),
    ]
    paper_rows = long[(long["dataset"] == PAPER_DATASET) & (long["observation"] == "counts")]
    both = paper_rows[["subset", "label", "median_rank_set", "median_rank_counts", "mean_rank"]]
    out += [
        "## A paper as its set of words or its word counts\n",
        "Both readings from the same fits (count-weighted block, mean over subsets); the "
        "multinomial reading (every occurrence counted) makes Naive Bayes far more decisive.\n",
        both.rename(
            columns={
                "median_rank_set": "median rank, word set",
                "median_rank_counts": "median rank, word counts",
                "mean_rank": "mean rank (table's reading)",
            }
        ).to_markdown(index=False),
        "",
    ]
    own = own_markdown(long, tests, meta, left_out or {})
    return "\n".join(out + ([own] if own else [])) + "\n"
