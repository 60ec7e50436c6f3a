"""Every map measured alike (exact KL with the method's output kernel, 10-NN preservation,
leave-one-out 1-NN error), the table of every map, and the issue's targets read from it."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables
from embedlab.experiments.scale.affinities import load_affinities

log = logging.getLogger(__name__)

#: output kernel of the exact KL and the number of time columns, per method
KERNELS = {
    "tsne": ("tsne", 0),
    "snest": ("snest", 1),
    "ee": ("sne", 0),
    "opentsne": ("tsne", 0),
    "tsne3": ("tsne", 0),
}
NEIGHBOURS = 10  # the k of the neighbourhood preservation
COLUMNS = [
    "method",
    "label",
    "n",
    "repulsion",
    "wall_s",
    "epochs",
    "exact_kl",
    "kl_kernel",
    "knn10_preservation",
    "nn1_error",
]


def measure(P, neighbours: np.ndarray, labels: np.ndarray, method: str, Y: np.ndarray) -> dict:
    """Exact KL with the method's kernel, 10-NN preservation, leave-one-out 1-NN error."""
    from embedlab.evaluate.kl import kl_divergence
    from embedlab.evaluate.knn import knn_preservation, loo_1nn_error_rate

    kernel, n_time = KERNELS[method]
    space = Y[:, : Y.shape[1] - n_time]
    return {
        "exact_kl": kl_divergence(P, Y, kernel, n_time),
        "kl_kernel": kernel,
        "knn10_preservation": knn_preservation(neighbours, space, NEIGHBOURS),
        "nn1_error": loo_1nn_error_rate(space, labels),
    }


def scale_table(affinities_file, map_files) -> tuple[pd.DataFrame, dict]:
    """One row per map (COLUMNS), and the affinity step's info."""
    arrays, info = load_affinities(affinities_file)
    rows = []
    for path in map_files:
        maps, meta = runs.load_npz(path)
        row = {k: meta[k] for k in ("method", "label", "n", "repulsion", "epochs")}
        row["wall_s"] = meta["seconds"]
        row.update(
            measure(
                arrays["P"],
                arrays["neighbours"],
                arrays["labels"],
                meta["method"],
                maps["embedding"],
            )
        )
        rows.append(row)
        log.info("%s", row)
    return pd.DataFrame(rows, columns=COLUMNS), info


def direction(ratio: float) -> str:
    """'3.6 % lower' / '0.2 % higher' for a ratio of 0.964 / 1.002."""
    return f"{abs(ratio - 1) * 100:.1f} % {'lower' if ratio < 1 else 'higher'}"


def targets(df: pd.DataFrame) -> list[str]:
    """The issue's targets, each as a sentence with its measured ratio (where both runs are in
    the table): t-SNE's time <= openTSNE's and exact KL within 1 %; SNEST R^{2,1} <= 2x
    t-SNE's time; SNEST R^{2,1}'s exact KL below t-SNE R^3's (the SNEST paper's claim)."""
    by = df.set_index("method")
    out = []
    if {"tsne", "opentsne"} <= set(by.index):
        time_ratio = by.loc["tsne", "wall_s"] / by.loc["opentsne", "wall_s"]
        kl_ratio = by.loc["tsne", "exact_kl"] / by.loc["opentsne", "exact_kl"]
        out.append(
            f"t-SNE (ours) / openTSNE: wall time x{time_ratio:.2f} (target <= 1: "
            f"{'met' if time_ratio <= 1 else 'not met'}), exact KL x{kl_ratio:.4f} "
            f"({direction(kl_ratio)}; target within 1 %: "
            f"{'met' if abs(kl_ratio - 1) <= 0.01 else 'not met'})"
        )
    if {"tsne", "snest"} <= set(by.index):
        ratio = by.loc["snest", "wall_s"] / by.loc["tsne", "wall_s"]
        out.append(
            f"SNEST R^{{2,1}} / t-SNE R^2 (ours): wall time x{ratio:.2f} (target <= 2: "
            f"{'met' if ratio <= 2 else 'not met'})"
        )
    if {"tsne3", "snest"} <= set(by.index):
        ratio = by.loc["snest", "exact_kl"] / by.loc["tsne3", "exact_kl"]
        out.append(
            f"SNEST R^{{2,1}} / t-SNE R^3 (ours): exact KL x{ratio:.4f} ({direction(ratio)}; "
            f"the SNEST paper's claim, lower: {'holds' if ratio < 1 else 'does not hold'})"
        )
    elif "snest" in by.index:
        out.append(
            "SNEST R^{2,1} against t-SNE R^3: not run (add tsne3 to scale.methods; its "
            "epochs run the exact kernel)"
        )
    return out


def write_scale_table(df: pd.DataFrame, info: dict, csv, md) -> None:
    """The table (csv, wall_s measured) and its markdown with the P's provenance and the
    targets."""
    tables.write_csv(df, csv, measured=["wall_s"])
    title = (
        f"Scale: {info['dataset']}, n = {info['n']}, one sparse P (perplexity "
        f"{info['perplexity']:g}, k = {info['k']} neighbours by {info['knn_method']} in "
        f"PCA-{info['pca_dims']})"
    )
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in info["seconds"].items())
    notes = [
        f"P built in {seconds}; exact KL with each method's output kernel (EE: exp(-d^2)); "
        f"neighbour measures in the space coordinates; wall_s: the fit alone.",
        *targets(df),
    ]
    shown = df.astype(object).where(df.notna(), "")
    text = "\n".join(
        [
            f"# {title}",
            "",
            *(f"- {line}" for line in notes),
            "",
            shown.to_markdown(index=False, floatfmt="g"),
            "",
        ]
    )
    artifacts.write_text_atomic(md, text)
