"""Diffeomap paper (Walder & Schoelkopf 2008): 1-NN table, Figs. 2-4 (included when the
config has a `diffeomap` section; workflow/schemas/diffeomap.schema.yaml holds its defaults).
Headline: the exact method (every point a basis function; `full_set`), whose map is the learned
flow applied to the data; the paper's n = 300 reduced set (`final`) is a second, labelled row.
"""

import math

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


# command-line options describing how a dataset is prepared (subset, PCA, classes)
DIFFEOMAP_DATA_KEYS = ("subsample", "pca_dims", "top_authors", "author_match")
diffeomap_data_args = lambda wc: " ".join(
    [f"--seed {DIFFEOMAP['seed']}"]
    + [
        f"--{key.replace('_', '-')} {value}"
        for key, value in DIFFEOMAP["datasets"][wc.dataset].items()
        if key in DIFFEOMAP_DATA_KEYS
    ]
    + ([] if DIFFEOMAP["datasets"][wc.dataset]["use_labels"] else ["--no-labels"])
    + (
        ["--centre-frames"]
        if DIFFEOMAP["datasets"][wc.dataset]["centre_frames"]
        else []
    )
)
# --p/--n-basis/--max-iter of a stage: grid, final, or full_set (n = every distinct point;
# p and max_iter from diffeomap.full_set, or its by_dataset entry for that dataset)
diffeomap_settings = lambda stage, dataset=None: (
    "--p {p} --n-basis {n_basis} --max-iter {max_iter}".format(
        **(
            {
                "p": DIFFEOMAP["full_set"]["p"],
                "max_iter": DIFFEOMAP["full_set"]["max_iter"],
                **{
                    key: value
                    for name, settings in DIFFEOMAP["full_set"]["by_dataset"].items()
                    if name == dataset
                    for key, value in settings.items()
                },
                "n_basis": "all",
            }
            if stage == "full_set"
            else DIFFEOMAP[f"{stage}_settings"]
        )
    )
    + f" --eps {DIFFEOMAP['eps']} --optimizer {DIFFEOMAP['optimizer']}"
    + f" --formulation {DIFFEOMAP['formulation']}"
)
diffeomap_threads = lambda wc: DIFFEOMAP["datasets"][wc.dataset]["threads"]
# the inputs of a full-set job: the stage-1 grid's file only where it reads that grid's
# best point, so a dataset with its own full-set grid does not wait on stage 1
diffeomap_full_set_inputs = lambda wc: {
    "data": artifact(wc.dataset),
    **(
        {}
        if wc.dataset in DIFFEOMAP["full_set"]["grids"]
        else {"grid": f"results/embeddings/diffeomap/{wc.dataset}/grid.npz"}
    ),
}
# the (sigma_rel, lam) grid of a dataset's full-set jobs: its own (diffeomap.full_set.grids),
# or the stage-1 grid's best point
diffeomap_full_set_points = lambda wc, input: (
    # JSON of numbers has no single quote; the grid file's path no shell metacharacter
    f"--grid '{json.dumps(DIFFEOMAP['full_set']['grids'][wc.dataset])}'"
    if wc.dataset in DIFFEOMAP["full_set"]["grids"]
    else f"--select-from {input.grid}"
)
# the files of a dataset's full-set points: one per point of its full-set grid (the
# (sigma_rel, lam) product, numbered as diffeomap-embed --point numbers them), or the one
# stage-1 best point
diffeomap_full_set_point_files = lambda wc: expand(
    "results/embeddings/diffeomap/{dataset}/full_set_points/{point}.npz",
    dataset=wc.dataset,
    point=range(
        math.prod(map(len, DIFFEOMAP["full_set"]["grids"][wc.dataset].values()))
        if wc.dataset in DIFFEOMAP["full_set"]["grids"]
        else 1
    ),
)


rule diffeomap_grid:
    """Stage 1: every (sigma_rel, lam) of the dataset's grid at the cheap reduced-set
    settings (the search for the full-set and final fits)."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/embeddings/diffeomap/{dataset}/{stage}.npz",
    log:
        "logs/diffeomap/{dataset}/{stage}.log",
    benchmark:
        "logs/benchmarks/diffeomap_grid/diffeomap/{dataset}/{stage}.tsv"
    wildcard_constraints:
        stage="grid",
    conda:
        "../envs/embedlab.yaml"
    threads: diffeomap_threads
    resources:
        mem_mb=8000,
        runtime=600,
    params:
        code=code_of("diffeomap-embed"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        data=diffeomap_data_args,
        grid=lambda wc: json.dumps(DIFFEOMAP["datasets"][wc.dataset]["grid"]),
        settings=lambda wc: diffeomap_settings(wc.stage),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads}"
        " python -m embedlab diffeomap-embed --artifact {params.folder:q}"
        " --dataset {wildcards.dataset} --out {output:q} --grid {params.grid:q}"
        " --stage {wildcards.stage} {params.settings} {params.data} > {log:q} 2>&1"


rule diffeomap_full_set_point:
    """The headline's fits, one job per point (each point is an independent fit from the same
    seed, tens of minutes at the paper's settings): the exact method (every point a basis
    function) at point {point} of diffeomap.full_set.grids[dataset], or at the stage-1 grid's
    best point (point 0, the only one)."""
    input:
        unpack(diffeomap_full_set_inputs),
    output:
        "results/embeddings/diffeomap/{dataset}/full_set_points/{point}.npz",
    log:
        "logs/diffeomap/{dataset}/full_set_points/{point}.log",
    benchmark:
        "logs/benchmarks/diffeomap_full_set_point/diffeomap/{dataset}/full_set_points/{point}.tsv"
    wildcard_constraints:
        point=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: diffeomap_threads
    resources:
        mem_mb=8000,
        runtime=600,
    params:
        code=code_of("diffeomap-embed"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        data=diffeomap_data_args,
        points=diffeomap_full_set_points,
        settings=lambda wc: diffeomap_settings("full_set", wc.dataset),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads}"
        " python -m embedlab diffeomap-embed --artifact {params.folder:q}"
        " --dataset {wildcards.dataset} --out {output:q} {params.points}"
        " --point {wildcards.point} --stage full_set {params.settings} {params.data}"
        " > {log:q} 2>&1"


rule diffeomap_full_set:
    """The headline: the points' fits of diffeomap_full_set_point joined into the file one
    diffeomap-embed of the dataset's whole full-set grid writes (the same runs, maps and best
    point; each run's seconds its own job's); a cheap job of reading and writing."""
    input:
        diffeomap_full_set_point_files,
    output:
        "results/embeddings/diffeomap/{dataset}/full_set.npz",
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
        code=code_of("diffeomap-gather"),
    shell:
        "python -m embedlab diffeomap-gather --out {output:q} {input:q} > {log:q} 2>&1"


rule diffeomap_final:
    """The paper's approximation: the stage-1 grid's best point refitted with the paper's
    reduced set (final_settings: n = 300 basis functions, p = 20, 1000 iterations)."""
    input:
        data=lambda wc: artifact(wc.dataset),
        grid="results/embeddings/diffeomap/{dataset}/grid.npz",
    output:
        "results/embeddings/diffeomap/{dataset}/final.npz",
    log:
        "logs/diffeomap/{dataset}/final.log",
    benchmark:
        "logs/benchmarks/diffeomap_final/diffeomap/{dataset}/final.tsv"
    conda:
        "../envs/embedlab.yaml"
    threads: diffeomap_threads
    resources:
        mem_mb=8000,
        runtime=600,
    params:
        code=code_of("diffeomap-embed"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        data=diffeomap_data_args,
        settings=lambda wc: diffeomap_settings("final"),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads}"
        " python -m embedlab diffeomap-embed --artifact {params.folder:q}"
        " --dataset {wildcards.dataset} --out {output:q} --select-from {input.grid:q}"
        " --stage final {params.settings} {params.data} > {log:q} 2>&1"


rule diffeomap_baselines:
    """PCA, Isomap (and t-SNE) maps of a dataset with their 1-NN errors."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/embeddings/diffeomap/{dataset}/baselines.npz",
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
        code=code_of("diffeomap-baselines"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        data=diffeomap_data_args,
        methods=DIFFEOMAP["baselines"],
        neighbors=DIFFEOMAP["isomap_neighbors"],
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads}"
        " python -m embedlab diffeomap-baselines --artifact {params.folder:q}"
        " --dataset {wildcards.dataset} --out {output:q} --methods {params.methods}"
        " --n-neighbors {params.neighbors} {params.data} > {log:q} 2>&1"


rule diffeomap_table:
    """LOO 1-NN errors (vowel) / 1-NN accuracy (NIPS text) beside the paper's numbers."""
    input:
        files=expand(
            "results/embeddings/diffeomap/{dataset}/{stage}.npz",
            dataset=DIFFEOMAP["table_datasets"],
            stage=["full_set", "final", "grid", "baselines"],
        ),
        paper="config/paper_values/diffeomap_1nn.csv",
    output:
        csv=report(
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
        code=code_of("diffeomap-table"),
        left_out=left_out_of("diffeomap"),
    shell:
        "python -m embedlab diffeomap-table --paper {input.paper:q} --csv {output.csv:q}"
        " --md {output.md:q} {input.files:q} --left-out {params.left_out:q} > {log:q} 2>&1"


rule diffeomap_author_sets:
    """NIPS text: 2-D PCA 1-NN accuracy for readings of the paper's author classes."""
    input:
        artifact("nips_text"),
    output:
        csv=report(
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
        code=code_of("diffeomap-author-sets"),
        pca=lambda wc: (
            f"--pca-dims {DIFFEOMAP['datasets']['nips_text']['pca_dims']}"
            if "pca_dims" in DIFFEOMAP["datasets"]["nips_text"]
            else ""
        ),
        seed=DIFFEOMAP["seed"],
    shell:
        "OPENBLAS_NUM_THREADS=1 python -m embedlab diffeomap-author-sets"
        " --artifact results/datasets/nips_text {params.pca} --seed {params.seed}"
        " --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule diffeomap_figure:
    """Figs. 2 (mocap), 3 (vowel, PCA beside Diffeomap), 4 (USPS with thumbnails), each from
    the dataset's full-set (exact) flow."""
    input:
        runs=lambda wc: f"results/embeddings/diffeomap/{DIFFEOMAP_FIGURES[wc.fig]}/full_set.npz",
        baselines=lambda wc: f"results/embeddings/diffeomap/{DIFFEOMAP_FIGURES[wc.fig]}/baselines.npz",
        data=lambda wc: artifact(DIFFEOMAP_FIGURES[wc.fig]),
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
        code=code_of("diffeomap-figure"),
        folder=lambda wc: f"results/datasets/{DIFFEOMAP_FIGURES[wc.fig]}",
        stem=subpath(output.pdf, strip_suffix=".pdf"),
    shell:
        "python -m embedlab diffeomap-figure {wildcards.fig} --runs {input.runs:q}"
        " --artifact {params.folder:q} --baselines {input.baselines:q}"
        " --out {params.stem:q} > {log:q} 2>&1"
