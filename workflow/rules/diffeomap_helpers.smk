"""Diffeomap input functions and settings (included by diffeomap.smk)."""

import math

# the keys of a dataset's diffeomap.datasets entry that prepare its data for its fits and
# baselines: the fields of embedlab.experiments.diffeomap.settings.Preparation
DIFFEOMAP_PREPARATION = (
    "subsample",
    "pca_dims",
    "top_authors",
    "author_match",
    "use_labels",
    "centre_frames",
)


def diffeomap_entry(dataset, key):
    """`key` of `dataset`'s diffeomap.datasets entry, None where the entry has none (an
    optional key: no subset, PCA or author classes)."""
    entry = DIFFEOMAP["datasets"][dataset]
    return entry[key] if key in entry else None


def diffeomap_data(wildcards):
    """The derived `preparation` of a fit or baselines job: how its dataset is prepared, its
    entry's values of DIFFEOMAP_PREPARATION."""
    return {
        "preparation": {
            key: diffeomap_entry(wildcards.dataset, key)
            for key in DIFFEOMAP_PREPARATION
        }
    }


def diffeomap_fit(wildcards):
    """The derived settings of a dataset's fits at a stage (step diffeomap.fit): the stage's
    p, n_basis and max_iter (grid_settings, final_settings, or diffeomap.full_set's p and
    max_iter, its by_dataset entry for the dataset replacing them, with every distinct point
    a basis function: n_basis None); the (sigma_rel, lam) grid (the dataset's own for `grid`,
    its diffeomap.full_set.grids entry for `full_set`; None: the stage-1 grid's best point,
    the input `select_from`); the data's preparation."""
    stage, dataset = wildcards.stage, wildcards.dataset
    full_set = DIFFEOMAP["full_set"]
    if stage == "full_set":
        by_dataset = full_set["by_dataset"]
        own = by_dataset[dataset] if dataset in by_dataset else {}
        fit = {"p": full_set["p"], "max_iter": full_set["max_iter"], **own}
        fit["n_basis"] = None
        grid = full_set["grids"][dataset] if dataset in full_set["grids"] else None
    else:
        fit = DIFFEOMAP[f"{stage}_settings"]
        grid = DIFFEOMAP["datasets"][dataset]["grid"] if stage == "grid" else None
    return {**fit, "grid": grid, **diffeomap_data(wildcards)}


def diffeomap_fit_inputs(wildcards):
    """The inputs of a dataset's fits at a stage: its data, and the stage-1 grid's file
    (`select_from`) where they take that grid's best point (no grid of their own), so a
    dataset with its own full-set grid does not wait on stage 1."""
    dataset = wildcards.dataset
    return {
        "data": artifact(dataset),
        **(
            {}
            if diffeomap_fit(wildcards)["grid"] is not None
            else {"select_from": f"results/embeddings/diffeomap/{dataset}/grid.npz"}
        ),
    }


def diffeomap_threads(wildcards):
    """A fit job's threads: its dataset's entry's."""
    return DIFFEOMAP["datasets"][wildcards.dataset]["threads"]


def diffeomap_full_set_point_files(wildcards):
    """The files of a dataset's full-set points: one per point of its own full-set grid (the
    (sigma_rel, lam) product, numbered as the fit step's `point` numbers them), or the one
    stage-1 best point."""
    grids = DIFFEOMAP["full_set"]["grids"]
    dataset = wildcards.dataset
    return expand(
        "results/embeddings/diffeomap/{dataset}/full_set_points/{point}.npz",
        dataset=dataset,
        point=range(
            math.prod(map(len, grids[dataset].values())) if dataset in grids else 1
        ),
    )


def diffeomap_gplvm_files(datasets):
    """The GP-LVM files (one per model of diffeomap.gplvm.methods) of those of `datasets`
    that diffeomap.gplvm.datasets names."""
    gplvm = DIFFEOMAP["gplvm"]
    return expand(
        "results/embeddings/diffeomap/{dataset}/{method}.npz",
        dataset=[name for name in datasets if name in gplvm["datasets"]],
        method=gplvm["methods"],
    )


# the 1-NN table's derived `left_out`: the own datasets the paper leaves out, and why
DIFFEOMAP_LEFT_OUT = left_out_reasons("diffeomap")
# the author sets' derived `pca_dims`: the PCA of nips_text's fits (no entry: no author-sets
# job, as nips_text is not a table dataset)
DIFFEOMAP_NIPS_PCA = (
    diffeomap_entry("nips_text", "pca_dims")
    if "nips_text" in DIFFEOMAP["datasets"]
    else None
)
