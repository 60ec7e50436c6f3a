"""D-CODE paper (section 4): Table 2 (author ranking on NIPS) and Figs. 3-5.

Table 2 protocol (paper section 4.5): the *pool* is the 100 most prolific authors (papers in
volumes 0..T-1) and the 500 words they use most (counts summed over those volumes). A subset
of size (a, w) draws a authors and w words from the pool uniformly without replacement (one
numpy Generator per subset, seeded ``seed + index``). Every method embeds the subset's count
matrices up to ``fit_step`` (our 0-based volume 11, the paper's t = 12; nothing of volume 12 is
seen) and ranks, by Naive Bayes with a uniform prior, all subset authors for every paper of
``test_step`` (volume 12 = the paper's t = 13, 1999) with at least one subset author; the
paper's words outside the subset are ignored. A paper enters as its set of distinct words
(``paper_words="set"``, the paper's "set of words"; ``"counts"``, every occurrence, is recorded
beside it). Every true author of a paper is ranked among all candidates (co-authors included,
the paper's "harsh metric"). The metric is the median rank over all (paper, true author) pairs
of a subset (:mod:`embedlab.evaluate.ranking`); the table gives its mean over the subsets.

LLE embeds only authors with counts in the last fitted matrix; the others cannot be placed and
are ranked below every placed author (tied), so LLE is scored on the same candidates and the
same (paper, true author) pairs as the other methods. Degenerate embeddings are dropped (as in
the paper) and counted.

Two reference rows without an embedding put the numbers in scale: ``chance`` (every author
tied: rank (a + 1) / 2) and ``empirical`` (Naive Bayes with the add-one smoothed empirical
``p(w | a)`` of the counts summed over the fitted steps).

``transition_var`` / ``initial_var`` of the D-CODE variants are chosen per subset size on a
validation year: fit up to ``fit_step - 1``, rank the papers of ``fit_step`` (same subsets),
keep the grid point with the lowest mean median rank per variant.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
import scipy.stats

from embedlab import artifacts, tables
from embedlab.evaluate.ranking import (
    PAPER_WORDS,
    median_rank,
    naive_bayes_scores,
    paper_word_weights,
    rank_of,
    true_author_ranks,
)
from embedlab.methods.cooc_lle import CooccurrenceLLE, DegenerateEmbeddingError
from embedlab.methods.dcode import VARIANTS, make_variant
from embedlab.methods.dynamic_pca import DynamicPCA

log = logging.getLogger(__name__)

METHODS = ["dcode", "dcode_mle", "static_dcode", "static_dcode_mle", "dynamic_pca", "lle"]
LABEL = {
    "dcode": "D-CODE",
    "dcode_mle": "D-CODE MLE",
    "static_dcode": "Static D-CODE",
    "static_dcode_mle": "Static D-CODE MLE",
    "dynamic_pca": "Dynamic PCA",
    "lle": "LLE",
    "empirical": "Empirical NB (no embedding)",
    "chance": "Chance",
}
#: reference rows without an embedding (not in the paper's table)
REFERENCES = ["empirical", "chance"]
#: add-one smoothing of the empirical p(w | a) of the ``empirical`` reference
EMPIRICAL_ALPHA = 1.0


# --------------------------------------------------------------------------------------
# data selection


def _items(art, role: str) -> pd.DataFrame:
    items = art.items[art.items["role"] == role]
    return items.sort_values("index").reset_index(drop=True)


def _check_nips(art) -> None:
    if art.kind != "cooccurrence":
        raise ValueError(f"D-CODE needs a cooccurrence artifact, got kind {art.kind!r}")
    for key in ("counts", "paper_step", "paper_words", "paper_authors"):
        if key not in art.arrays:
            raise ValueError(f"cooccurrence artifact lacks array {key!r} (NIPS papers needed)")


def prolific(art, n_authors: int, n_words: int, up_to: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_authors`` authors with most papers in steps <= ``up_to`` and their top words.

    Words are ranked by their total count in those authors' rows of ``counts[0..up_to]``
    (ties broken by index, so the choice is deterministic).
    """
    _check_nips(art)
    steps = np.asarray(art.arrays["paper_step"])
    if not 0 <= up_to < len(art.arrays["counts"]):
        raise ValueError(f"up_to={up_to} outside the {len(art.arrays['counts'])} steps")
    pa = sp.csr_matrix(art.arrays["paper_authors"])
    n_papers = np.asarray(pa[steps <= up_to].sum(axis=0)).ravel()
    if n_authors > np.count_nonzero(n_papers):
        raise ValueError(
            f"only {np.count_nonzero(n_papers)} authors have papers; {n_authors} asked"
        )
    authors = np.lexsort((np.arange(n_papers.size), -n_papers))[:n_authors]
    usage = sum(sp.csr_matrix(art.arrays["counts"][t])[authors] for t in range(up_to + 1))
    usage = np.asarray(usage.sum(axis=0)).ravel()
    if n_words > np.count_nonzero(usage):
        raise ValueError(f"these authors use only {np.count_nonzero(usage)} words; {n_words} asked")
    words = np.lexsort((np.arange(usage.size), -usage))[:n_words]
    return np.sort(authors), np.sort(words)


def sub_counts(art, authors, words, up_to: int) -> list[np.ndarray]:
    """Dense (authors x words) count matrices of steps 0..``up_to``."""
    return [
        sp.csr_matrix(art.arrays["counts"][t])[authors][:, words].toarray()
        for t in range(up_to + 1)
    ]


def test_papers(art, authors, words, step: int):
    """Word counts (papers x words) and true-author lists (subset indices) of ``step``'s papers.

    Only papers with at least one subset author and one subset word are kept.
    """
    steps = np.asarray(art.arrays["paper_step"])
    pw = sp.csr_matrix(art.arrays["paper_words"])[:, words].toarray()
    pa = sp.csr_matrix(art.arrays["paper_authors"])[:, authors].toarray()
    keep = (steps == step) & (pa.sum(axis=1) > 0) & (pw.sum(axis=1) > 0)
    return pw[keep], [np.flatnonzero(row) for row in pa[keep]]


# --------------------------------------------------------------------------------------
# methods


def make_method(method: str, params: dict, seed: int):
    """Estimator of ``method`` (one of :data:`METHODS`); ``params`` are its config entry."""
    if method in VARIANTS:
        return make_variant(method, random_state=seed, **params)
    if method == "dynamic_pca":
        return DynamicPCA(**params)
    if method == "lle":
        return CooccurrenceLLE(random_state=seed, **params)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS + REFERENCES}")


def method_log_p(method, params, counts, seed) -> np.ndarray:
    """``log p(w | a)`` (A, W) of ``method`` fitted on ``counts`` (steps 0..fit_step).

    Every subset author gets a row. LLE places only the authors with counts in the last matrix;
    the others get ``-inf`` rows (ranked below every placed author, tied). References:
    ``chance`` is flat, ``empirical`` the smoothed word frequencies of the summed counts.
    """
    A, W = counts[-1].shape
    if method == "chance":
        return np.full((A, W), -np.log(W))
    if method == "empirical":
        total = np.sum(counts, axis=0) + EMPIRICAL_ALPHA
        return np.log(total / total.sum(axis=1, keepdims=True))
    if method == "lle":  # LLE places only authors active in the last matrix
        active = np.flatnonzero(counts[-1].sum(axis=1) > 0)
        model = make_method(method, params, seed).fit([c[active] for c in counts])
        L = np.full((A, W), -np.inf)
        L[active] = model.log_word_given_author(-1)
        return L
    if method == "dynamic_pca":  # its windows need counts: start at the first non-empty step
        first = next(t for t, c in enumerate(counts) if c.sum() > 0)
        counts = counts[first:]
    return make_method(method, params, seed).fit(counts).log_word_given_author(-1)


def method_ranks(
    method, params, counts, paper_words, paper_authors, seed, words: str = "set"
) -> np.ndarray:
    """Ranks of every (paper, true author) pair of the test papers after fitting ``counts``.

    ``words``: a paper as its set of words or its word counts, or ``"both"`` for a dict
    ``{"set": ranks, "counts": ranks}`` from one fit.
    """
    L = method_log_p(method, params, counts, seed)
    modes = PAPER_WORDS if words == "both" else (words,)
    ranks = {
        mode: true_author_ranks(L, paper_word_weights(paper_words, mode), paper_authors)
        for mode in modes
    }
    return ranks if words == "both" else ranks[words]


def evaluate_subset(
    art, pool, size, index, seed, fit_step, methods, params, words="set"
) -> list[dict]:
    """One random subset: median rank of every method (validation grid handled by caller).

    ``median_rank`` / ``mean_rank`` use ``words``; ``median_rank_set`` and
    ``median_rank_counts`` give both readings of a paper.
    """
    authors, words_idx = draw_subset(pool, size, seed + index)
    counts = sub_counts(art, authors, words_idx, fit_step)
    pw, pa = test_papers(art, authors, words_idx, fit_step + 1)
    rows = []
    for method in methods:
        start = time.perf_counter()
        row = {"n_authors": size[0], "n_words": size[1], "subset": index, "method": method}
        try:
            both = method_ranks(
                method, params.get(method, {}), counts, pw, pa, seed + index, "both"
            )
            ranks = both[words]
            row.update(median_rank=median_rank(ranks), mean_rank=float(ranks.mean()))
            for mode, r in both.items():
                row[f"median_rank_{mode}"] = median_rank(r)
            row.update(pairs=int(ranks.size), candidates=_candidates(method, counts))
            row["status"] = "ok"
        except (DegenerateEmbeddingError, FloatingPointError, ValueError) as err:
            row.update(median_rank=np.nan, mean_rank=np.nan, pairs=0, candidates=0)
            row.update({f"median_rank_{mode}": np.nan for mode in PAPER_WORDS})
            row["status"] = f"failed: {err}"
            log.warning("%s on subset %s/%d: %s", method, size, index, err)
        row["seconds"] = round(time.perf_counter() - start, 3)
        rows.append(row)
    return rows


def _candidates(method: str, counts) -> int:
    """Authors the method could place (LLE: active in the last matrix); all are ranked."""
    if method == "lle":
        return int(np.count_nonzero(counts[-1].sum(axis=1) > 0))
    return int(counts[-1].shape[0])


def draw_subset(pool, size, seed) -> tuple[np.ndarray, np.ndarray]:
    """``size = (a, w)`` random authors and words of ``pool = (authors, words)``."""
    (pool_a, pool_w), (a, w) = pool, size
    if a > len(pool_a) or w > len(pool_w):
        raise ValueError(f"subset {size} larger than the pool ({len(pool_a)}, {len(pool_w)})")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(pool_a, a, replace=False)), np.sort(
        rng.choice(pool_w, w, replace=False)
    )


def validate_dcode(
    art, pool, size, n_subsets, seed, fit_step, grid, base, paper_words="set"
) -> tuple[dict, list]:
    """Choose transition_var / initial_var per D-CODE variant by predicting ``fit_step``.

    Fits up to ``fit_step - 1`` on the same subsets (the test step is never seen); returns
    ({variant: best params}, rows of the whole grid).
    """
    points = [dict(zip(grid, v, strict=True)) for v in itertools.product(*grid.values())]
    rows = []
    for index in range(n_subsets):
        authors, words = draw_subset(pool, size, seed + index)
        counts = sub_counts(art, authors, words, fit_step - 1)
        pw, pa = test_papers(art, authors, words, fit_step)
        for variant in VARIANTS:
            seen = set()
            for point in points:
                if VARIANTS[variant]["static"] and "transition_var" in grid:  # no transitions
                    point = {**point, "transition_var": grid["transition_var"][0]}
                key = tuple(sorted(point.items()))
                if key in seen:
                    continue
                seen.add(key)
                params = {**base.get(variant, {}), **point}
                try:
                    ranks = method_ranks(variant, params, counts, pw, pa, seed + index, paper_words)
                    value = median_rank(ranks)
                except (FloatingPointError, ValueError) as err:
                    log.warning("validation %s %s: %s", variant, point, err)
                    value = np.nan
                rows.append({"variant": variant, **point, "subset": index, "median_rank": value})
    df = pd.DataFrame(rows)
    keys = list(grid)
    mean = df.groupby(["variant", *keys])["median_rank"].mean().reset_index()
    best = {}
    for variant, g in mean.groupby("variant"):
        g = g.dropna()
        if g.empty:
            raise FloatingPointError(f"validation: every grid point failed for {variant}")
        best[variant] = {k: float(g.loc[g["median_rank"].idxmin(), k]) for k in keys}
    return best, rows


def table2_size(
    artifact_dir,
    size,
    out,
    n_subsets,
    seed,
    fit_step,
    pool_size,
    methods,
    params,
    grid,
    val_subsets=2,
    words="set",
    references=(),
) -> pd.DataFrame:
    """Validation + test for one subset size; writes the per-subset rows as JSON to ``out``."""
    art = artifacts.load(artifact_dir)
    pool = prolific(art, pool_size[0], pool_size[1], fit_step)
    params = {m: dict(params.get(m, {})) for m in methods}
    chosen, val_rows = {}, []
    dcode_methods = [m for m in methods if m in VARIANTS]
    if grid and dcode_methods:
        chosen, val_rows = validate_dcode(
            art, pool, size, min(val_subsets, n_subsets), seed, fit_step, grid, params, words
        )
        for m in dcode_methods:
            params[m].update(chosen[m])
        log.info("size %s: validation chose %s", size, chosen)
    rows = []
    for index in range(n_subsets):
        rows += evaluate_subset(
            art, pool, size, index, seed, fit_step, [*methods, *references], params, words
        )
    result = {
        "size": list(size),
        "fit_step": fit_step,
        "paper_words": words,
        "params": params,
        "chosen": chosen,
        "validation": val_rows,
        "rows": rows,
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=1, default=float))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Table 2


def rank_table(result_files, paper_csv) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(long table per size x method, Table 2 layout, claims), ours beside the paper's.

    Ours: mean over non-failed subsets of the median rank, +- its standard deviation, and the
    Wilcoxon signed-rank p-value of each method against D-CODE over the shared subsets. The
    long table also gives the mean rank and both readings of a paper (``median_rank_set``,
    ``median_rank_counts``); ``median_rank`` is the one the result files were run with.
    """
    paper = pd.read_csv(paper_csv)
    ref = {
        (a, w, m): v
        for a, w, m, v in paper[["n_authors", "n_words", "method", "median_rank"]].itertuples(
            index=False
        )
    }
    rows, chosen = [], {}
    for path in result_files:
        data = json.loads(Path(path).read_text())
        rows += data["rows"]
        chosen[tuple(data["size"])] = data["chosen"]
    df = pd.DataFrame(rows)
    out = []
    for (a, w), g in df.groupby(["n_authors", "n_words"], sort=True):
        wide = g.pivot(index="subset", columns="method", values="median_rank")
        for method in [m for m in METHODS + REFERENCES if m in wide]:
            values = wide[method].dropna()
            mine = g[(g["method"] == method) & g["median_rank"].notna()]
            other = {
                f"{col}": round(float(mine[col].mean()), 2) if col in mine else np.nan
                for col in ("mean_rank", *(f"median_rank_{m}" for m in PAPER_WORDS))
            }
            paper_value = ref.get((a, w, method))
            mean = float(values.mean()) if len(values) else np.nan
            out.append(
                {
                    "subset": f"{a}a,{w}w",
                    "n_authors": a,
                    "n_words": w,
                    "method": method,
                    "label": LABEL[method],
                    "median_rank": round(mean, 2),
                    "spread": round(float(values.std(ddof=1)), 2) if len(values) > 1 else np.nan,
                    "subsets_ok": f"{len(values)}/{len(wide)}",
                    **other,
                    "p_vs_dcode": _paired_p(wide, method),
                    "paper": paper_value,
                    "verdict": tables.verdict(mean, paper_value, tol=1.0, lower_is_better=True),
                    "params": json.dumps(chosen.get((a, w), {}).get(method, {})),
                }
            )
    long = pd.DataFrame(out)
    layout = []
    for key, g in long.groupby("subset", sort=False):
        row = {"(authors, words)": key}
        for r in g.itertuples():
            paper_text = "" if pd.isna(r.paper) else f" ({r.paper:g})"
            row[r.label] = f"{r.median_rank:.1f} ± {r.spread:.1f}{paper_text}"
        layout.append(row)
    return long, pd.DataFrame(layout), claims(long)


def _paired_p(wide: pd.DataFrame, method: str) -> float:
    if method == "dcode" or "dcode" not in wide:
        return np.nan
    pair = wide[["dcode", method]].dropna()
    diff = pair["dcode"] - pair[method]
    if len(pair) < 2 or not diff.any():
        return np.nan
    return round(float(scipy.stats.wilcoxon(pair["dcode"], pair[method]).pvalue), 4)


#: the paper's comparisons (section 4.5): D-CODE against its rivals, dynamic against static
CLAIMS = [
    ("dcode", "static_dcode"),
    ("dcode", "static_dcode_mle"),
    ("dcode", "dynamic_pca"),
    ("dcode", "dcode_mle"),
    ("dcode", "lle"),
    ("dcode_mle", "static_dcode_mle"),
]


def claims(long: pd.DataFrame) -> pd.DataFrame:
    """Per size and claim of :data:`CLAIMS` (lower rank wins): holds for us? for the paper?"""
    rows = []
    for key, g in long.groupby("subset", sort=False):
        ours = dict(zip(g["method"], g["median_rank"], strict=True))
        paper = dict(zip(g["method"], g["paper"], strict=True))
        for method, rival in CLAIMS:
            if method not in ours or rival not in ours:
                continue
            rows.append(
                {
                    "subset": key,
                    "claim": f"{LABEL[method]} < {LABEL[rival]}",
                    "ours": f"{ours[method]:.1f} vs {ours[rival]:.1f}",
                    "holds_ours": bool(ours[method] < ours[rival]),
                    "holds_paper": (
                        None
                        if pd.isna(paper[method]) or pd.isna(paper[rival])
                        else bool(paper[method] < paper[rival])
                    ),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# figures


def synthetic_ranks(art, params: dict, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Fig. 3(D): mean Naive-Bayes rank of the X authors given the A words, per step.

    The 'paper' is one occurrence of every word of group A; ranks are among all authors at
    each filtered step t. Returns (table, {variant: fitted model}).
    """
    items_a, items_w = _items(art, "author"), _items(art, "word")
    x = np.flatnonzero(items_a["group"].to_numpy() == "X")
    words = (items_w["group"].to_numpy() == "A").astype(np.float64)
    if x.size == 0 or not words.any():
        raise ValueError("synthetic artifact needs authors of group X and words of group A")
    counts = art.arrays["counts"]
    models, table = {}, {"step": np.arange(len(counts))}
    for variant in ("dcode", "dcode_mle"):
        model = make_variant(variant, random_state=seed, **params).fit(counts)
        models[variant] = model
        ranks = []
        for t in range(len(counts)):
            scores = naive_bayes_scores(model.log_word_given_author(t), words)[0]
            ranks.append(np.mean([rank_of(scores, a) for a in x]))
        table[variant] = ranks
    return pd.DataFrame(table), models


def figure_subset(art, n_authors, n_words, last_step, extra_authors=(), extra_words=()):
    """Fig. 4's entities: the most prolific authors (+ named extras) and their top words."""
    authors, _ = prolific(art, n_authors, 1, last_step)
    names_a = _items(art, "author")["name"].to_numpy()
    names_w = _items(art, "word")["name"].to_numpy()
    for name in extra_authors:
        hit = np.flatnonzero(names_a == name)
        if hit.size == 0:
            raise ValueError(f"author {name!r} is not in the artifact's items")
        authors = np.union1d(authors, hit)
    usage = sum(sp.csr_matrix(art.arrays["counts"][t])[authors] for t in range(last_step + 1))
    usage = np.asarray(usage.sum(axis=0)).ravel()
    words = np.lexsort((np.arange(usage.size), -usage))[:n_words]
    for name in extra_words:
        hit = np.flatnonzero(names_w == name)
        if hit.size == 0:
            raise ValueError(f"word {name!r} is not in the artifact's items")
        words = np.union1d(words, hit)
    return np.sort(authors), np.sort(words), names_a, names_w


def pair_trajectories(art, pairs, n_authors, n_words, dcode_params, pca_params, seed=0):
    """Fig. 5: per (author, word) and step, the rank of the author given the word (D-CODE,
    Dynamic PCA; Naive Bayes, uniform prior, among the embedded authors) and the empirical
    ``p(a | w) = C_t(a, w) / sum_a' C_t(a', w)`` over all authors of the corpus."""
    last = len(art.arrays["counts"]) - 1
    authors, words, names_a, names_w = figure_subset(
        art, n_authors, n_words, last, [a for a, _ in pairs], [w for _, w in pairs]
    )
    counts = sub_counts(art, authors, words, last)
    models = {
        "dcode": make_variant("dcode", random_state=seed, **dcode_params).fit(counts),
        "dynamic_pca": DynamicPCA(**pca_params).fit(counts),
    }
    rows = []
    for author, word in pairs:
        a = int(np.flatnonzero(names_a[authors] == author)[0])
        w = int(np.flatnonzero(names_w[words] == word)[0])
        paper = np.zeros(len(words))
        paper[w] = 1.0
        for t in range(last + 1):
            full = sp.csr_matrix(art.arrays["counts"][t])[:, words[w]].toarray().ravel()
            row = {
                "author": author,
                "word": word,
                "step": t,
                "p_author_given_word": full[authors[a]] / full.sum() if full.sum() else 0.0,
            }
            for name, model in models.items():
                L = model.log_word_given_author(t, p_words=np.full(len(words), 1.0 / len(words)))
                row[f"rank_{name}"] = rank_of(naive_bayes_scores(L, paper)[0], a)
            rows.append(row)
    return pd.DataFrame(rows), len(authors)


def _cmd_table2_size(args):
    size = tuple(int(v) for v in args.size.split(","))
    table2_size(
        args.artifact,
        size,
        args.out,
        args.subsets,
        args.seed,
        args.fit_step,
        tuple(args.pool),
        args.methods,
        json.loads(args.params),
        json.loads(args.grid),
        args.val_subsets,
        args.paper_words,
        args.references,
    )


def _cmd_table(args):
    long, layout, claim = rank_table(args.results, args.paper)
    tables.write_table(long, args.csv, args.md_long, title="D-CODE Table 2 (long form)")
    words = sorted(
        {json.loads(Path(f).read_text()).get("paper_words", "counts") for f in args.results}
    )
    note = (
        "Median predicted rank of the true authors of NIPS papers of volume 12 (the paper's "
        "t = 13, 1999), embedding volumes 0-11 (the paper's t <= 12). Ours: mean ± s.d. over "
        f"random subsets of the per-subset median (paper's value in brackets); a paper enters "
        f"as its {' / '.join(words)} of words. Every subset author is a candidate (LLE: authors "
        "without counts in volume 11 cannot be placed and rank last). D-CODE variances chosen "
        "on predicting volume 11 from volumes <= 10 (column params). Chance and Empirical NB "
        "(add-one smoothed word frequencies of volumes 0-11, no embedding) are references, "
        "not in the paper."
    )
    both = long[["subset", "label", "median_rank_set", "median_rank_counts", "mean_rank"]]
    both = both.rename(
        columns={
            "median_rank_set": "median rank, word set",
            "median_rank_counts": "median rank, word counts",
            "mean_rank": "mean rank (table's reading)",
        }
    )
    md = [
        f"# D-CODE Table 2\n\n{note}\n",
        layout.to_markdown(index=False),
        "",
        "## Claims\n",
        claim.to_markdown(index=False),
        "",
        "## A paper as its set of words or its word counts\n",
        "Both readings from the same fits (mean over subsets); the multinomial reading (every "
        "occurrence counted) makes Naive Bayes far more decisive.\n",
        both.to_markdown(index=False),
        "",
    ]
    Path(args.md).write_text("\n".join(md) + "\n")


def _cmd_figure(args):
    from embedlab.plots import dcode as plots

    cfg = json.loads(args.config)
    art = artifacts.load(args.artifact)
    if args.figure == "fig3":
        table, models = synthetic_ranks(art, cfg.get("params", {}), cfg.get("seed", 0))
        if args.table:
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(args.table, index=False)
        names = _items(art, "author")["name"].tolist() + _items(art, "word")["name"].tolist()
        fig = plots.synthetic_figure(models["dcode"], names, table, cfg.get("epochs", [10, 40, 70]))
    elif args.figure == "fig4":
        last = len(art.arrays["counts"]) - 1
        authors, words, names_a, names_w = figure_subset(
            art, cfg.get("n_authors", 40), cfg.get("n_words", 428), last
        )
        counts = sub_counts(art, authors, words, last)
        model = make_variant("dcode", random_state=cfg.get("seed", 0), **cfg.get("params", {})).fit(
            counts
        )
        if args.table:
            roles = ["author"] * len(authors) + ["word"] * len(words)
            coords = pd.DataFrame(model.means_[-1], columns=["x", "y"])
            coords.insert(0, "name", list(names_a[authors]) + list(names_w[words]))
            coords.insert(1, "role", roles)
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            coords.to_csv(args.table, index=False)
        fig = plots.nips_figure(
            model.means_[-1],
            list(names_a[authors]),
            list(names_w[words]),
            counts[-1],
            art.meta.get("step_names", [""])[-1],
        )
    else:
        pairs = [tuple(p) for p in cfg.get("pairs", [])]
        table, n_emb = pair_trajectories(
            art,
            pairs,
            cfg.get("n_authors", 40),
            cfg.get("n_words", 428),
            cfg.get("params", {}),
            cfg.get("pca", {}),
            cfg.get("seed", 0),
        )
        if args.table:
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(args.table, index=False)
        fig = plots.pairs_figure(table, n_emb)
    plots.save_figure(fig, args.out)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dcode-*`` verbs to the command line."""
    p = sub.add_parser("dcode-rank", help="Table 2 for one subset size (validation + test)")
    p.add_argument("--artifact", required=True, help="nips12 artifact folder")
    p.add_argument("--size", required=True, help="'authors,words', e.g. 20,188")
    p.add_argument("--out", required=True, help="result file (.json)")
    p.add_argument("--subsets", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fit-step", type=int, default=11, help="last step filtered (test = +1)")
    p.add_argument("--pool", type=int, nargs=2, default=[100, 500], metavar=("A", "W"))
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    p.add_argument("--params", default="{}", help="JSON {method: params}")
    p.add_argument("--grid", default="{}", help="JSON validation grid of the D-CODE variants")
    p.add_argument("--val-subsets", type=int, default=2, help="subsets used for validation")
    p.add_argument(
        "--paper-words", default="set", choices=PAPER_WORDS, help="a paper's words: set or counts"
    )
    p.add_argument("--references", nargs="*", default=REFERENCES, choices=REFERENCES)
    p.set_defaults(func=_cmd_table2_size)

    p = sub.add_parser("dcode-table", help="Table 2: ours beside the paper's")
    p.add_argument("--paper", required=True, help="config/paper_values/dcode_table2.csv")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--md-long", required=True)
    p.add_argument("results", nargs="+", help="files written by dcode-rank")
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("dcode-figure", help="Fig. 3, 4 or 5 of the D-CODE paper (png + pdf)")
    p.add_argument("figure", choices=["fig3", "fig4", "fig5"])
    p.add_argument("--artifact", required=True)
    p.add_argument("--out", required=True, help="output path without extension")
    p.add_argument("--table", help="CSV of the plotted trajectories (fig3, fig5)")
    p.add_argument("--config", default="{}", help="JSON figure settings")
    p.set_defaults(func=_cmd_figure)
