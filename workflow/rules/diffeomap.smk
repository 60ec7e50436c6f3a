"""Diffeomap paper (Walder & Schoelkopf 2008): 1-NN table, Figs. 2-4 (included when the
config has a `diffeomap` section; workflow/schemas/diffeomap.schema.yaml holds its defaults).
Headline: the exact method (every point a basis function; `full_set`), whose map is the learned
flow applied to the data; the paper's n = 300 reduced set (`final`) is a second, labelled row.
"""

validate(config["diffeomap"], schema="../schemas/diffeomap.schema.yaml")
DIFFEOMAP = config["diffeomap"]
DIFFEOMAP["table_datasets"] = with_own_datasets(
    "diffeomap", DIFFEOMAP["table_datasets"]
)
for _name in set(DIFFEOMAP["table_datasets"]) - set(DIFFEOMAP["datasets"]):
    DIFFEOMAP["datasets"][_name] = DIFFEOMAP["dataset_defaults"]
PAPER_TARGETS["diffeomap"] = (
    [
        "results/tables/diffeomap_1nn.csv",
        "results/tables/diffeomap_1nn.md",
    ]
    + (
        [
            "results/tables/diffeomap_nips_author_sets.csv",
            "results/tables/diffeomap_nips_author_sets.md",
        ]
        if "nips_text" in DIFFEOMAP["table_datasets"]
        else []
    )
    + expand(
        "results/figures/diffeomap_{fig}.{ext}",
        fig=DIFFEOMAP["figures"],
        ext=["png", "pdf"],
    )
)
# figure -> the dataset whose full-set (exact) flow it shows
DIFFEOMAP_FIGURES = {"fig2": "mocap", "fig3": "vowel", "fig4": "usps"}


include: "diffeomap_helpers.smk"


rule diffeomap_fit:
    """A dataset's fits at a stage: `grid` (stage 1: every (sigma_rel, lam) of its grid at the
    cheap reduced-set grid_settings, the search for the other stages) or `final` (the paper's
    approximation: the stage-1 grid's best point refitted with the paper's reduced set,
    final_settings: n = 300 basis functions, p = 20, 1000 iterations)."""
    input:
        unpack(diffeomap_fit_inputs),
    output:
        npz="results/embeddings/diffeomap/{dataset}/{stage}.npz",
    log:
        "logs/diffeomap/{dataset}/{stage}.log",
    benchmark:
        "logs/benchmarks/diffeomap_fit/diffeomap/{dataset}/{stage}.tsv"
    wildcard_constraints:
        stage="grid|final",
    conda:
        "../envs/embedlab.yaml"
    threads: diffeomap_threads
    resources:
        mem_mb=8000,
        runtime=600,
    params:
        **step_params(
            "diffeomap.fit",
            settings=lambda wc: step_settings("diffeomap.fit", **diffeomap_fit(wc)),
        ),
    script:
        STEP_SCRIPT


# The headline's fits (stage `full_set`), one job per point (each point is an independent fit
# from the same seed, tens of minutes at the paper's settings): the exact method (every point
# a basis function) at point {point} of diffeomap.full_set.grids[dataset], or at the stage-1
# grid's best point (point 0, the only one); diffeomap_full_set joins the points' files.
use rule diffeomap_fit as diffeomap_full_set_point with:
    output:
        npz="results/embeddings/diffeomap/{dataset}/{stage}_points/{point}.npz",
    log:
        "logs/diffeomap/{dataset}/{stage}_points/{point}.log",
    benchmark:
        "logs/benchmarks/diffeomap_full_set_point/diffeomap/{dataset}/{stage}_points/{point}.tsv"
    wildcard_constraints:
        stage="full_set",
        point=r"\d+",


rule diffeomap_full_set:
    """The headline: the points' fits of diffeomap_full_set_point joined into the file one
    fit of the dataset's whole full-set grid writes (the same runs, maps and best point; each
    run's seconds its own job's); a cheap job of reading and writing."""
    input:
        points=diffeomap_full_set_point_files,
    output:
        npz="results/embeddings/diffeomap/{dataset}/full_set.npz",
    log:
        "logs/diffeomap/{dataset}/full_set.log",
    benchmark:
        "logs/benchmarks/diffeomap_full_set/diffeomap/{dataset}/full_set.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params("diffeomap.gather"),
    script:
        STEP_SCRIPT


rule diffeomap_baselines:
    """PCA, Isomap (and t-SNE) maps of a dataset with their 1-NN errors."""
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        npz="results/embeddings/diffeomap/{dataset}/baselines.npz",
    log:
        "logs/diffeomap/{dataset}/baselines.log",
    benchmark:
        "logs/benchmarks/diffeomap_baselines/diffeomap/{dataset}/baselines.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        **step_params(
            "diffeomap.baselines",
            settings=lambda wc: step_settings(
                "diffeomap.baselines", **diffeomap_data(wc)
            ),
        ),
    script:
        STEP_SCRIPT


rule diffeomap_gplvm:
    """A dataset's GP-LVM map through GPy (diffeomap.gplvm: the authors' toolbox settings),
    with its 1-NN errors, laid out as a baselines file."""
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        npz="results/embeddings/diffeomap/{dataset}/gplvm.npz",
    log:
        "logs/diffeomap/{dataset}/gplvm.log",
    benchmark:
        "logs/benchmarks/diffeomap_gplvm/diffeomap/{dataset}/gplvm.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        **step_params(
            "diffeomap.gplvm",
            settings=lambda wc: step_settings(
                "diffeomap.gplvm",
                wc.dataset,
                seed=DIFFEOMAP["seed"],
                **diffeomap_data(wc),
            ),
        ),
    script:
        STEP_SCRIPT


use rule diffeomap_gplvm as diffeomap_bc_gplvm with:
    output:
        npz="results/embeddings/diffeomap/{dataset}/bc_gplvm.npz",
    log:
        "logs/diffeomap/{dataset}/bc_gplvm.log",
    benchmark:
        "logs/benchmarks/diffeomap_bc_gplvm/diffeomap/{dataset}/bc_gplvm.tsv"
    params:
        **step_params(
            "diffeomap.bc_gplvm",
            settings=lambda wc: step_settings(
                "diffeomap.bc_gplvm",
                wc.dataset,
                seed=DIFFEOMAP["seed"],
                **diffeomap_data(wc),
            ),
        ),


rule diffeomap_table:
    """LOO 1-NN errors (vowel) / 1-NN accuracy (NIPS text) beside the paper's numbers; the
    GP-LVM maps of the table datasets that diffeomap.gplvm names are baseline rows."""
    input:
        results=expand(
            "results/embeddings/diffeomap/{dataset}/{stage}.npz",
            dataset=DIFFEOMAP["table_datasets"],
            stage=["full_set", "final", "grid", "baselines"],
        ),
        gplvm_maps=diffeomap_gplvm_files(DIFFEOMAP["table_datasets"]),
        paper="config/paper_values/diffeomap_1nn.csv",
    output:
        csv=report_table(
            "results/tables/diffeomap_1nn.csv",
            caption="../report/diffeomap_1nn.rst",
            category="Diffeomap",
            labels={"table": "1-NN in the 2-D map"},
        ),
        md="results/tables/diffeomap_1nn.md",
    log:
        "logs/diffeomap/table.log",
    benchmark:
        "logs/benchmarks/diffeomap_table/diffeomap/table.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        **step_params(
            "diffeomap.table",
            settings=step_settings("diffeomap.table", left_out=DIFFEOMAP_LEFT_OUT),
        ),
    script:
        STEP_SCRIPT


rule diffeomap_author_sets:
    """NIPS text: 2-D PCA 1-NN accuracy for readings of the paper's author classes."""
    input:
        data=artifact("nips_text"),
    output:
        csv=report_table(
            "results/tables/diffeomap_nips_author_sets.csv",
            caption="../report/diffeomap_author_sets.rst",
            category="Diffeomap",
            labels={"table": "NIPS text author sets"},
        ),
        md="results/tables/diffeomap_nips_author_sets.md",
    log:
        "logs/diffeomap/author_sets.log",
    benchmark:
        "logs/benchmarks/diffeomap_author_sets/diffeomap/author_sets.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        **step_params(
            "diffeomap.author_sets",
            settings=step_settings(
                "diffeomap.author_sets", pca_dims=DIFFEOMAP_NIPS_PCA
            ),
        ),
    script:
        STEP_SCRIPT


rule diffeomap_figure:
    """Figs. 2 (mocap, beside its GP-LVM maps where diffeomap.gplvm names it), 3 (vowel, PCA
    beside Diffeomap), 4 (USPS with thumbnails), each from the dataset's full-set (exact)
    flow."""
    input:
        fits=lambda wc: f"results/embeddings/diffeomap/{DIFFEOMAP_FIGURES[wc.fig]}/full_set.npz",
        baseline_file=lambda wc: f"results/embeddings/diffeomap/{DIFFEOMAP_FIGURES[wc.fig]}/baselines.npz",
        data=lambda wc: artifact(DIFFEOMAP_FIGURES[wc.fig]),
        gplvm_maps=lambda wc: diffeomap_gplvm_files(
            ["mocap"] if wc.fig == "fig2" else []
        ),
    output:
        png=report(
            "results/figures/diffeomap_{fig}.png",
            caption="../report/diffeomap_figure.rst",
            category="Diffeomap",
            labels={"figure": "{fig}"},
        ),
        pdf="results/figures/diffeomap_{fig}.pdf",
    log:
        "logs/diffeomap/{fig}.log",
    benchmark:
        "logs/benchmarks/diffeomap_figure/diffeomap/{fig}.tsv"
    wildcard_constraints:
        fig="fig2|fig3|fig4",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params("diffeomap.figure"),
    script:
        STEP_SCRIPT
