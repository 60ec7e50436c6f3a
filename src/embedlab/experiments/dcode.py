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
of a subset (:mod:`embedlab.evaluate.ranking`); the table gives its mean over the subsets, with
the standard error of that mean and paired (Wilcoxon signed-rank) tests over the subsets.

D-CODE fits: one dynamic fit per subset serves D-CODE (posterior distributions) and D-CODE MLE
(its means); one static fit (the last matrix only) serves Static D-CODE and Static D-CODE MLE.
The observation model is one of :data:`embedlab.methods.dcode.LIKELIHOODS` (``observation``):
``counts`` (N_t x eq. 2, the table's reading) or ``per_token`` (eq. 2 as printed), each a block
of the table. D-CODE ranks the next year's papers with the one-step predictive distribution
(``prediction="predictive"``: filtered at t = 12 plus the transition noise) or, as a labelled
option, the filtered one (``"filtered"``; the paper: "the filtering distribution ... can be used
to calculate expected probabilities for prediction").

``transition_var`` / ``initial_var`` are chosen per subset size on held-out years: the dynamic
fit on volumes ``<= fit_step - 1`` predicts each of the last ``val_steps`` volumes up to
``fit_step`` from the filtered state of the year before (the test year is never seen); the
static fit embeds the year before each of them. The criterion is the mean rank over all
validation (paper, true author) pairs of D-CODE (dynamic fit) and Static D-CODE (static fit).
The grid is log-spaced; where the best value lies on an edge of the grid, the grid is extended
by its own ratio beyond that edge (at most ``grid_extensions`` times), so a chosen value at an
edge is reported, not hidden.

LLE embeds only authors with counts in the last fitted matrix; the others cannot be placed and
are ranked below every placed author (tied), so LLE is scored on the same candidates and the
same (paper, true author) pairs as the other methods. Degenerate LLE embeddings are left out
(as in the paper) and counted in the table; any other failure of a method is an error.

Two reference rows without an embedding put the numbers in scale: ``chance`` (every author
tied: rank (a + 1) / 2) and ``empirical`` (Naive Bayes with the add-one smoothed empirical
``p(w | a)`` of the counts summed over the fitted steps).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab import artifacts, tables
from embedlab.evaluate.ranking import (
    PAPER_WORDS,
    median_rank,
    naive_bayes_scores,
    paper_word_weights,
    rank_of,
    true_author_ranks,
)

if TYPE_CHECKING:
    from embedlab.methods.dcode import DCODE

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


#: the D-CODE fits and the variants each serves (section 4.1)
FITS = {"dynamic": ("dcode", "dcode_mle"), "static": ("static_dcode", "static_dcode_mle")}
#: how D-CODE ranks the next year's papers (see the module docstring)
PREDICTIONS = ("predictive", "filtered")


def _fit_of(variant: str) -> str:
    from embedlab.methods.dcode import VARIANTS

    return "static" if VARIANTS[variant]["static"] else "dynamic"


def fit_dcode(fit: str, params: dict, counts, seed: int) -> DCODE:
    """The ``fit`` ("dynamic" or "static") D-CODE model of ``counts`` (steps 0..fit_step)."""
    from embedlab.methods.dcode import DCODE

    return DCODE(static=fit == "static", random_state=seed, **params).fit(counts)


def dcode_log_p(model: DCODE, variant: str, prediction: str, t: int = -1) -> np.ndarray:
    """``log p(w | a)`` of ``variant`` for the step after ``t`` from a fitted model.

    ``prediction="predictive"`` uses the one-step predictive distribution of a dynamic model
    (the static model has no transition: its filtered distribution is its prediction).
    """
    from embedlab.methods.dcode import VARIANTS

    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    horizon = int(prediction == "predictive" and not model.static)
    return model.log_word_given_author(t, mode=VARIANTS[variant]["mode"], horizon=horizon)


def method_log_p(method, params, counts, seed) -> np.ndarray:
    """``log p(w | a)`` (A, W) of a method other than the D-CODE variants, fitted on ``counts``.

    Every subset author gets a row. LLE places only the authors with counts in the last matrix;
    the others get ``-inf`` rows (ranked below every placed author, tied); with no more
    active authors than ``n_neighbors`` it cannot embed (counted as degenerate). References:
    ``chance`` is flat, ``empirical`` the smoothed word frequencies of the summed counts.
    """
    from embedlab.methods.cooc_lle import CooccurrenceLLE, DegenerateEmbeddingError
    from embedlab.methods.dynamic_pca import DynamicPCA

    A, W = counts[-1].shape
    if method == "chance":
        return np.full((A, W), -np.log(W))
    if method == "empirical":
        total = np.sum(counts, axis=0) + EMPIRICAL_ALPHA
        return np.log(total / total.sum(axis=1, keepdims=True))
    if method == "lle":  # LLE places only authors active in the last matrix
        active = np.flatnonzero(counts[-1].sum(axis=1) > 0)
        if active.size <= params["n_neighbors"]:  # counted with the degenerate embeddings
            raise DegenerateEmbeddingError(
                f"{active.size} authors active in the last year, n_neighbors "
                f"{params['n_neighbors']}: LLE cannot embed them"
            )
        model = CooccurrenceLLE(random_state=seed, **params).fit([c[active] for c in counts])
        L = np.full((A, W), -np.inf)
        L[active] = model.log_word_given_author(-1)
        return L
    if method == "dynamic_pca":  # its windows need counts: start at the first non-empty step
        first = next(t for t, c in enumerate(counts) if c.sum() > 0)
        return DynamicPCA(**params).fit(counts[first:]).log_word_given_author(-1)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS + REFERENCES}")


def subset_log_ps(methods, params, counts, seed, observation, prediction) -> dict:
    """``{method: log p(w | a)}`` for one subset; D-CODE variants share their fit.

    ``params``: ``{"dcode": {...}}`` (both D-CODE fits, e.g. the validated variances; a
    ``"static"`` entry overrides them for the static fit) and ``{method: {...}}`` for the
    others. A degenerate LLE embedding gives ``None``.
    """
    from embedlab.methods.cooc_lle import DegenerateEmbeddingError
    from embedlab.methods.dcode import VARIANTS

    out, models = {}, {}
    for method in methods:
        if method in VARIANTS:
            fit = _fit_of(method)
            if fit not in models:
                models[fit] = fit_dcode(
                    fit, {**dcode_params(params, fit), "likelihood": observation}, counts, seed
                )
            out[method] = dcode_log_p(models[fit], method, prediction)
            continue
        try:
            out[method] = method_log_p(method, params.get(method, {}), counts, seed)
        except DegenerateEmbeddingError as err:
            log.warning("%s: degenerate embedding: %s", method, err)
            out[method] = None
    return out


def dcode_params(params: dict, fit: str) -> dict:
    """Settings of the ``fit`` D-CODE model: ``params["dcode"]``, then ``params["static"]``."""
    base = dict(params.get("dcode", {}))
    return {**base, **params.get("static", {})} if fit == "static" else base


@dataclass(frozen=True)
class RankSetup:
    """What every fit of one Table 2 job shares: data, subset size and the protocol's reading."""

    art: object
    pool: tuple[np.ndarray, np.ndarray]
    size: tuple[int, int]
    seed: int
    fit_step: int
    observation: str
    prediction: str
    words: str = "set"

    def subset(self, index: int, up_to: int):
        """Authors, words (pool indices) and count matrices of steps 0..``up_to`` of subset
        ``index``."""
        authors, words = draw_subset(self.pool, self.size, self.seed + index)
        return authors, words, sub_counts(self.art, authors, words, up_to)


def evaluate_subset(setup: RankSetup, index: int, methods, params) -> list[dict]:
    """One random subset: the median rank of every method (and both readings of a paper).

    ``median_rank`` / ``mean_rank`` use ``setup.words``; ``median_rank_set`` and
    ``median_rank_counts`` give both readings of a paper. A degenerate LLE embedding, or a
    subset none of whose authors wrote a paper of the test year, gives rows without a rank
    (``status`` says which; the table counts the subsets used); other failures raise.
    """
    authors, words_idx, counts = setup.subset(index, setup.fit_step)
    pw, pa = test_papers(setup.art, authors, words_idx, setup.fit_step + 1)
    start = time.perf_counter()
    log_ps = subset_log_ps(
        methods, params, counts, setup.seed + index, setup.observation, setup.prediction
    )
    seconds = round(time.perf_counter() - start, 3)
    rows = []
    for method, L in log_ps.items():
        row = {"n_authors": setup.size[0], "n_words": setup.size[1], "subset": index}
        row["method"] = method
        if L is None or not pa:
            status = "no test paper" if not pa else "degenerate"
            row.update(median_rank=np.nan, mean_rank=np.nan, pairs=0, status=status)
            row.update({f"median_rank_{mode}": np.nan for mode in PAPER_WORDS})
        else:
            both = {m: true_author_ranks(L, paper_word_weights(pw, m), pa) for m in PAPER_WORDS}
            ranks = both[setup.words]
            row.update(median_rank=median_rank(ranks), mean_rank=float(ranks.mean()))
            row.update({f"median_rank_{m}": median_rank(r) for m, r in both.items()})
            row.update(pairs=int(ranks.size), status="ok")
        row["candidates"] = _candidates(method, counts)
        rows.append(row)
    rows[0]["seconds"] = seconds  # time of the whole subset, on its first row
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


# --------------------------------------------------------------------------------------
# validation of the D-CODE variances


@dataclass
class ValidationSubset:
    """One subset's validation data, drawn once for every grid point: its authors, words and
    counts up to ``fit_step - 1``, and the papers of each held-out year."""

    index: int
    authors: list
    words_idx: np.ndarray
    counts: list
    held_out: list  # (step, paper word weights, true authors) per held-out year with papers


def validation_subset(setup: RankSetup, index: int, val_steps: int) -> ValidationSubset:
    """Held-out years ``fit_step - val_steps + 1 .. fit_step`` of subset ``index``."""
    authors, words_idx, counts = setup.subset(index, setup.fit_step - 1)
    held_out = []
    for step in range(setup.fit_step - val_steps + 1, setup.fit_step + 1):
        pw, pa = test_papers(setup.art, authors, words_idx, step)
        if pa:
            held_out.append((step, paper_word_weights(pw, setup.words), pa))
    if not held_out:
        raise ValueError(f"subset {setup.size}/{index}: no papers in the held-out years")
    return ValidationSubset(index, authors, words_idx, counts, held_out)


def validation_ranks(setup: RankSetup, data: ValidationSubset, fit: str, params):
    """Ranks of every validation (paper, true author) pair of one subset for one grid point.

    Each held-out year is predicted from the year before: the dynamic fit filters volumes
    ``<= fit_step - 1`` once; the static fit embeds the year before each held-out year. Ranked
    with D-CODE (dynamic) / Static D-CODE (static).
    """
    variant, seed = FITS[fit][0], setup.seed + data.index
    settings = {**params, "likelihood": setup.observation}
    dynamic = fit_dcode("dynamic", settings, data.counts, seed) if fit == "dynamic" else None
    ranks = []
    for step, weights, pa in data.held_out:
        if fit == "dynamic":
            L = dcode_log_p(dynamic, variant, setup.prediction, t=step - 1)
        else:
            static = fit_dcode("static", settings, data.counts[:step], seed)
            L = dcode_log_p(static, variant, setup.prediction)
        ranks.append(true_author_ranks(L, weights, pa))
    return np.concatenate(ranks)


def _extend(values: list[float], best: float) -> list[float] | None:
    """One more log-spaced point beyond the edge of ``values`` that ``best`` sits on."""
    values = sorted(values)
    if len(values) < 2 or best not in (values[0], values[-1]):
        return None
    if best == values[0]:
        return [values[0] * values[0] / values[1]]
    return [values[-1] * values[-1] / values[-2]]


def validate_dcode(setup: RankSetup, n_subsets, val_steps, grid, params, extensions=2):
    """Choose ``transition_var`` / ``initial_var`` of the dynamic and the static D-CODE fit.

    Returns ``({fit: best params}, rows of every grid point evaluated)``; the criterion is the
    mean rank of the pooled validation pairs of the first ``n_subsets`` subsets (lower is
    better; ties go to the smaller values). The grid grows only where another pass evaluates
    the new points, so the rows hold the whole grid searched (see :func:`grid_report`).
    """
    chosen, rows = {}, []
    subsets = [validation_subset(setup, i, val_steps) for i in range(n_subsets)]
    for fit in FITS:
        axes = {k: sorted(float(v) for v in grid[k]) for k in grid}
        if fit == "static":  # no transitions in the static model
            axes.pop("transition_var", None)
        scores = {}
        for extension in range(extensions + 1):
            for point in itertools.product(*axes.values()):
                if point in scores:
                    continue
                values = dict(zip(axes, point, strict=True))
                settings = {**dcode_params(params, fit), **values}
                ranks = np.concatenate([validation_ranks(setup, d, fit, settings) for d in subsets])
                scores[point] = float(ranks.mean())
                rows.append({"fit": fit, **values, "mean_rank": scores[point]})
            best = min(scores, key=lambda p: (scores[p], p))
            grown = {name: _extend(axes[name], best[i]) for i, name in enumerate(axes)}
            if extension == extensions or not any(grown.values()):
                break
            for name, more in grown.items():
                axes[name] = sorted(axes[name] + (more or []))
        chosen[fit] = dict(zip(axes, best, strict=True))
        log.info("validation %s: chose %s (mean rank %.3f)", fit, chosen[fit], scores[best])
    return chosen, rows


def grid_report(validation_rows, chosen) -> dict:
    """``{fit: {parameter: {"grid": values evaluated, "at_edge": bool}}}`` of a validation."""
    report = {}
    for fit, values in chosen.items():
        rows = [r for r in validation_rows if r["fit"] == fit]
        report[fit] = {}
        for name, value in values.items():
            grid = sorted({r[name] for r in rows})
            report[fit][name] = {"grid": grid, "at_edge": value in (grid[0], grid[-1])}
    return report


def table2_size(artifact_dir, size, out, config: dict) -> pd.DataFrame:
    """Validation + test for one subset size and observation model; writes JSON to ``out``.

    ``config`` is the rule's settings, all required: ``observation``, ``prediction``,
    ``paper_words``, ``subsets``, ``seed``, ``fit_step``, ``pool``, ``methods``, ``params``,
    ``grid``, ``val_subsets``, ``val_steps``, ``grid_extensions``.
    """
    from embedlab.methods.dcode import VARIANTS

    cfg = config
    art = artifacts.load(artifact_dir)
    setup = RankSetup(
        art,
        prolific(art, cfg["pool"][0], cfg["pool"][1], cfg["fit_step"]),
        tuple(size),
        cfg["seed"],
        cfg["fit_step"],
        cfg["observation"],
        cfg["prediction"],
        cfg["paper_words"],
    )
    params = {m: dict(v) for m, v in cfg["params"].items()}
    chosen, val_rows = {}, []
    if any(m in VARIANTS for m in cfg["methods"]):
        n_val = min(cfg["val_subsets"], cfg["subsets"])
        chosen, val_rows = validate_dcode(
            setup, n_val, cfg["val_steps"], cfg["grid"], params, cfg["grid_extensions"]
        )
        params["dcode"] = {**params.get("dcode", {}), **chosen["dynamic"]}
        params["static"] = chosen["static"]
    rows = []
    for index in range(cfg["subsets"]):
        rows += evaluate_subset(setup, index, cfg["methods"], params)
    result = {
        "size": list(size),
        "observation": setup.observation,
        "prediction": setup.prediction,
        "fit_step": setup.fit_step,
        "paper_words": setup.words,
        "params": params,
        "chosen": chosen,
        "validation": val_rows,
        "rows": rows,
    }
    artifacts.write_text_atomic(out, json.dumps(result, indent=1, default=float))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Table 2

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


def _load_results(result_files) -> tuple[pd.DataFrame, dict]:
    rows, meta = [], {}
    for path in result_files:
        data = json.loads(Path(path).read_text())
        key = (data["observation"], *data["size"])
        if key in meta:
            raise ValueError(f"{path}: a second result for {key}")
        meta[key] = data
        rows += [{**r, "observation": data["observation"]} for r in data["rows"]]
    return pd.DataFrame(rows), meta


def rank_table(result_files, paper_csv) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(long table per observation x size x method, paired tests, the result files' meta).

    Ours: the mean over subsets of the per-subset median rank, its standard error, and the
    number of subsets used (degenerate LLE embeddings left out and counted). Paired tests: the
    Wilcoxon signed-rank p-value of each of the paper's comparisons over the subsets both
    methods ranked.
    """
    # each variant's fit from FITS, which names the same fits as the methods' VARIANTS: the
    # table job imports no method (scikit-learn, numba)
    fit_of = {variant: fit for fit, variants in FITS.items() for variant in variants}
    paper = pd.read_csv(paper_csv)
    ref = {
        (int(a), int(w), m): v
        for a, w, m, v in paper[["n_authors", "n_words", "method", "median_rank"]].itertuples(
            index=False
        )
    }
    df, meta = _load_results(result_files)
    out, tests = [], []
    for (observation, a, w), g in df.groupby(["observation", "n_authors", "n_words"], sort=False):
        wide = g.pivot(index="subset", columns="method", values="median_rank")
        data = meta[(observation, a, w)]
        for method in [m for m in METHODS + REFERENCES if m in wide]:
            values = wide[method].dropna()
            mine = g[(g["method"] == method) & g["median_rank"].notna()]
            paper_value = ref.get((a, w, method)) if observation == "counts" else None
            mean = float(values.mean()) if len(values) else np.nan
            sd = float(values.std(ddof=1)) if len(values) > 1 else np.nan
            fit = fit_of.get(method)
            out.append(
                {
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
                tests.append({"observation": observation, "subset": f"{a}a,{w}w", **test})
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


def validation_note(meta: dict, observation: str) -> tuple[str, int]:
    """Markdown lines: grids and chosen values per size; and how many sit at a grid edge."""
    lines, at_edge = [], 0
    for (obs, a, w), data in meta.items():
        if obs != observation or not data["chosen"]:
            continue
        parts = []
        grids = grid_report(data["validation"], data["chosen"])
        for fit, chosen in data["chosen"].items():
            for name, value in chosen.items():
                report = grids[fit][name]
                grid = ", ".join(f"{v:g}" for v in report["grid"])
                edge = " **at the grid's edge**" if report["at_edge"] else ""
                at_edge += bool(report["at_edge"])
                parts.append(f"{fit} {name} = {value:g}{edge} (grid {grid})")
        lines.append(f"- {a}a,{w}w: " + "; ".join(parts))
    return "\n".join(lines), at_edge


def table_markdown(long: pd.DataFrame, tests: pd.DataFrame, meta: dict) -> str:
    """``dcode_rank.md``: one block per observation model, the paired tests, validation."""
    first = next(iter(meta.values()))
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
    ]
    for observation in [o for o in OBSERVATION_LABEL if o in set(long["observation"])]:
        block = long[long["observation"] == observation]
        title = OBSERVATION_LABEL[observation]
        main = observation == "counts"
        heading = f"## {title[0].upper()}{title[1:]}" + (" (the table's reading)" if main else "")
        out += [heading, "", _layout(block, paper=main).to_markdown(index=False), ""]
        worst = block["standard_error"].max()
        if worst >= MAX_STANDARD_ERROR:
            out.append(
                f"The standard error reaches {worst:.2f} rank, above {MAX_STANDARD_ERROR}: "
                "more subsets are needed.\n"
            )
        note, at_edge = validation_note(meta, observation)
        out += [
            "Variances chosen on held-out years (lowest mean rank of the validation pairs; "
            "log-spaced grids, extended past an edge the best value sat on):",
            "",
            note,
            "",
        ]
        if at_edge:
            out.append(f"{at_edge} chosen value(s) remain at the edge of the extended grid.\n")
        t = tests[tests["observation"] == observation].drop(columns="observation")
        if len(t):
            out += [
                "Paired comparisons over the subsets (mean difference of the per-subset "
                "medians, wins/losses/ties of the first method, Wilcoxon signed-rank p):",
                "",
                t.to_markdown(index=False),
                "",
            ]
    both = long[long["observation"] == "counts"][
        ["subset", "label", "median_rank_set", "median_rank_counts", "mean_rank"]
    ]
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
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------
# figures


def synthetic_ranks(art, params: dict, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Fig. 3(D): mean Naive-Bayes rank of the X authors given the A words, per step.

    The 'paper' is one occurrence of every word of group A; ranks are among all authors at
    each filtered step t (D-CODE and D-CODE MLE from one fit). Returns (table, fitted model).
    """
    from embedlab.methods.dcode import VARIANTS

    items_a, items_w = _items(art, "author"), _items(art, "word")
    x = np.flatnonzero(items_a["group"].to_numpy() == "X")
    words = (items_w["group"].to_numpy() == "A").astype(np.float64)
    if x.size == 0 or not words.any():
        raise ValueError("synthetic artifact needs authors of group X and words of group A")
    counts = art.arrays["counts"]
    model = fit_dcode("dynamic", params, counts, seed)
    table = {"step": np.arange(len(counts))}
    for variant in FITS["dynamic"]:
        ranks = []
        for t in range(len(counts)):
            L = model.log_word_given_author(t, mode=VARIANTS[variant]["mode"])
            scores = naive_bayes_scores(L, words)[0]
            ranks.append(np.mean([rank_of(scores, a) for a in x]))
        table[variant] = ranks
    return pd.DataFrame(table), model


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
    from embedlab.methods.dynamic_pca import DynamicPCA

    last = len(art.arrays["counts"]) - 1
    authors, words, names_a, names_w = figure_subset(
        art, n_authors, n_words, last, [a for a, _ in pairs], [w for _, w in pairs]
    )
    counts = sub_counts(art, authors, words, last)
    models = {
        "dcode": fit_dcode("dynamic", dcode_params, counts, seed),
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
    table2_size(args.artifact, size, args.out, json.loads(args.config))


def _cmd_table(args):
    long, tests, meta = rank_table(args.results, args.paper)
    tables.write_table(
        long, args.csv, args.md_long, measured=(), title="D-CODE Table 2 (long form)"
    )
    artifacts.write_text_atomic(args.md, table_markdown(long, tests, meta))


def _cmd_figure(args):
    from embedlab.plots import dcode as plots
    from embedlab.plots.common import save_figure

    cfg = json.loads(args.config)
    art = artifacts.load(args.artifact)
    if args.figure == "fig3":
        table, model = synthetic_ranks(art, cfg["params"], cfg["seed"])
        if args.table:
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            tables.write_csv(table, args.table, measured=())
        names = _items(art, "author")["name"].tolist() + _items(art, "word")["name"].tolist()
        fig = plots.synthetic_figure(model, names, table, cfg["epochs"])
    elif args.figure == "fig4":
        last = len(art.arrays["counts"]) - 1
        authors, words, names_a, names_w = figure_subset(
            art, cfg["n_authors"], cfg["n_words"], last
        )
        counts = sub_counts(art, authors, words, last)
        model = fit_dcode("dynamic", cfg["params"], counts, cfg["seed"])
        if args.table:
            roles = ["author"] * len(authors) + ["word"] * len(words)
            coords = pd.DataFrame(model.means_[-1], columns=["x", "y"])
            coords.insert(0, "name", list(names_a[authors]) + list(names_w[words]))
            coords.insert(1, "role", roles)
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            tables.write_csv(coords, args.table, measured=())
        fig = plots.nips_figure(
            model.means_[-1],
            list(names_a[authors]),
            list(names_w[words]),
            counts[-1],
            art.meta.get("step_names", [""])[-1],
        )
    else:
        pairs = [tuple(p) for p in cfg["pairs"]]
        table, n_emb = pair_trajectories(
            art,
            pairs,
            cfg["n_authors"],
            cfg["n_words"],
            cfg["params"],
            cfg["pca"],
            cfg["seed"],
        )
        if args.table:
            Path(args.table).parent.mkdir(parents=True, exist_ok=True)
            tables.write_csv(table, args.table, measured=())
        fig = plots.pairs_figure(table, n_emb)
    save_figure(fig, args.out)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dcode-*`` verbs to the command line."""
    p = sub.add_parser("dcode-rank", help="Table 2 for one size and observation model")
    p.add_argument("--artifact", required=True, help="nips12 artifact folder")
    p.add_argument("--size", required=True, help="'authors,words', e.g. 20,188")
    p.add_argument("--out", required=True, help="result file (.json)")
    p.add_argument(
        "--config",
        required=True,
        help="JSON settings: observation, subsets, seed, fit_step, pool, methods, params, grid, "
        "val_subsets, val_steps, grid_extensions, prediction, paper_words (see table2_size)",
    )
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
    p.add_argument("--config", required=True, help="JSON figure settings (with the seed)")
    p.set_defaults(func=_cmd_figure)
