"""D-CODE paper (Sarkar, Siddiqi & Gordon 2007): Table 2 (section 4.5) and Figs. 3-5."""

validate(config["dcode"], schema="../schemas/dcode.schema.yaml")
DCODE = config["dcode"]
# own co-occurrence datasets: Table 2's protocol (rows of the rank table) and, where Fig. 4 is
# drawn, its map of their last period (experiments/dcode/own.py); those with too few periods
# or items are left out with the reason (OWN_PLACES)
DCODE_OWN = with_own_datasets("dcode", [], val_steps=DCODE["val_steps"])
DCODE_OWN_MAPS = DCODE_OWN if "fig4" in DCODE["figures"] else []
PAPER_TARGETS["dcode"] = (
    [
        "results/tables/dcode_rank.csv",
        "results/tables/dcode_rank.md",
        "results/tables/dcode_synthetic_rank.csv",
    ]
    + expand(
        "results/figures/dcode_{fig}.{ext}",
        fig=list(DCODE["figures"]),
        ext=["png", "pdf"],
    )
    + [f"results/tables/dcode_{fig}.csv" for fig in DCODE["figures"] if fig != "fig3"]
    + expand(
        "results/figures/dcode_map_{dataset}.{ext}",
        dataset=DCODE_OWN_MAPS,
        ext=["png", "pdf"],
    )
    + [f"results/tables/dcode_map_{dataset}.csv" for dataset in DCODE_OWN_MAPS]
)


# one Table 2 result file per observation model and subset size ("20,188" -> 20a_188w)
DCODE_SIZE_FILES = [
    "results/dcode/rank_{}_{}a_{}w.json".format(observation, *size.split(","))
    for observation in DCODE["observations"]
    for size in DCODE["sizes"]
]
# the same per own dataset, each size scaled to the dataset's pool (the file keeps the
# paper's size it scales)
DCODE_OWN_FILES = [
    "results/dcode/own/{}/rank_{}_{}a_{}w.json".format(
        dataset, observation, *size.split(",")
    )
    for dataset in DCODE_OWN
    for observation in DCODE["observations"]
    for size in DCODE["sizes"]
]


rule dcode_rank:
    """Table 2 for one observation model and subset size: validation of the D-CODE
    variances on held-out years, then every method on the test year."""
    input:
        corpus=artifact("nips12"),
    output:
        result="results/dcode/rank_{observation}_{a}a_{w}w.json",
    log:
        "logs/dcode/rank_{observation}_{a}a_{w}w.log",
    benchmark:
        "logs/benchmarks/dcode_rank/dcode/rank_{observation}_{a}a_{w}w.tsv"
    wildcard_constraints:
        observation="counts|per_token",
        a=r"\d+",
        w=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=3000,
        runtime=90,
    params:
        **step_params("dcode.rank", settings=step_settings("dcode.rank")),
    script:
        STEP_SCRIPT


rule dcode_own_rank:
    """Table 2's protocol on an own co-occurrence dataset for one observation model and one
    of the paper's subset sizes, scaled to the dataset's pool: validation of the D-CODE
    variances on the periods before the last, then every method on the last period."""
    input:
        corpus=lambda wc: artifact(wc.dataset),
    output:
        result="results/dcode/own/{dataset}/rank_{observation}_{a}a_{w}w.json",
    log:
        "logs/dcode/own/{dataset}/rank_{observation}_{a}a_{w}w.log",
    benchmark:
        "logs/benchmarks/dcode_own_rank/dcode/own/{dataset}/rank_{observation}_{a}a_{w}w.tsv"
    wildcard_constraints:
        dataset="|".join(DCODE_OWN) or "(?!)",
        observation="counts|per_token",
        a=r"\d+",
        w=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=3000,
        runtime=90,
    params:
        **step_params("dcode.own_rank", settings=step_settings("dcode.own_rank")),
    script:
        STEP_SCRIPT


rule dcode_table:
    """Table 2: our median ranks (mean ± s.e. over subsets) beside the paper's, then the own
    datasets' rows (and those the table leaves out, with the reason)."""
    input:
        results=DCODE_SIZE_FILES,
        own_results=DCODE_OWN_FILES,
        paper="config/paper_values/dcode_table2.csv",
    output:
        csv=report_table(
            "results/tables/dcode_rank.csv",
            caption="../report/dcode_rank.rst",
            category="D-CODE",
            labels={"table": "Table 2: median author rank"},
        ),
        md="results/tables/dcode_rank.md",
        md_long="results/tables/dcode_rank_long.md",
    log:
        "logs/dcode/table.log",
    benchmark:
        "logs/benchmarks/dcode_table/dcode/table.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params(
            "dcode.table",
            settings=step_settings("dcode.table", left_out=left_out_reasons("dcode")),
        ),
    script:
        STEP_SCRIPT


# The figures' fits run on one thread, as the Table 2 fits do: the order of the likelihood
# kernel's parallel sums, hence the last digits of the fitted positions (Fig. 4's
# coordinates), follows the thread count, so a fixed count gives the same figures on every
# machine and under any --cores.
#
# Each figure is two jobs: its rule (dcode_fig3 ...) fits, publishes the figure's table and
# writes what the drawing needs to results/dcode/figures/<figure>.npz; its _figure rule draws
# that file alone, so an edit to a plot reruns the drawing only
# (embedlab/experiments/dcode/steps.py).


rule dcode_fig3:
    """Fig. 3 (synthetic): the rank trajectories (table) and the data of the figure (the
    ellipses at three epochs)."""
    input:
        corpus=artifact("dcode_synthetic"),
    output:
        drawn="results/dcode/figures/fig3.npz",
        ranks=report_table(
            "results/tables/dcode_synthetic_rank.csv",
            caption="../report/dcode_figure_data.rst",
            category="D-CODE",
            labels={"table": "fig3 data: synthetic ranks"},
        ),
    log:
        "logs/dcode/fig3.log",
    benchmark:
        "logs/benchmarks/dcode_fig3/dcode/fig3.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        **step_params(
            "dcode.synthetic",
            settings=lambda wc: step_settings("dcode.synthetic", seed=DCODE["seed"]),
        ),
    script:
        STEP_SCRIPT


rule dcode_fig3_figure:
    """Fig. 3 drawn from its data file: ellipses at three epochs and the rank trajectories."""
    input:
        drawn="results/dcode/figures/fig3.npz",
    output:
        png=report(
            "results/figures/dcode_fig3.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig3"},
        ),
        pdf="results/figures/dcode_fig3.pdf",
    log:
        "logs/dcode/fig3_figure.log",
    benchmark:
        "logs/benchmarks/dcode_fig3_figure/dcode/fig3_figure.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("dcode.synthetic_figure"),
    script:
        STEP_SCRIPT


rule dcode_fig4:
    """Fig. 4: the NIPS 1999 embedding of the most prolific authors and their words (table:
    the coordinates) and the data of the figure."""
    input:
        corpus=artifact("nips12"),
    output:
        drawn="results/dcode/figures/fig4.npz",
        coordinates=report_table(
            "results/tables/dcode_fig4.csv",
            caption="../report/dcode_figure_data.rst",
            category="D-CODE",
            labels={"table": "fig4 data"},
        ),
    log:
        "logs/dcode/fig4.log",
    benchmark:
        "logs/benchmarks/dcode_fig4/dcode/fig4.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params(
            "dcode.embedding",
            settings=lambda wc: step_settings("dcode.embedding", seed=DCODE["seed"]),
        ),
    script:
        STEP_SCRIPT


rule dcode_fig4_figure:
    """Fig. 4 drawn from its data file: authors and words, labels placed without overlap."""
    input:
        drawn="results/dcode/figures/fig4.npz",
    output:
        png=report(
            "results/figures/dcode_fig4.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig4"},
        ),
        pdf="results/figures/dcode_fig4.pdf",
    log:
        "logs/dcode/fig4_figure.log",
    benchmark:
        "logs/benchmarks/dcode_fig4_figure/dcode/fig4_figure.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("dcode.embedding_figure"),
    script:
        STEP_SCRIPT


rule dcode_fig5:
    """Fig. 5: author-given-word ranks over time (table: the trajectories and the empirical
    p(a | w)) and the data of the figure."""
    input:
        corpus=artifact("nips12"),
    output:
        drawn="results/dcode/figures/fig5.npz",
        trajectories=report_table(
            "results/tables/dcode_fig5.csv",
            caption="../report/dcode_figure_data.rst",
            category="D-CODE",
            labels={"table": "fig5 data"},
        ),
    log:
        "logs/dcode/fig5.log",
    benchmark:
        "logs/benchmarks/dcode_fig5/dcode/fig5.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params(
            "dcode.pairs",
            settings=lambda wc: step_settings("dcode.pairs", seed=DCODE["seed"]),
        ),
    script:
        STEP_SCRIPT


rule dcode_fig5_figure:
    """Fig. 5 drawn from its data file: each pair's ranks and p(a | w) over time."""
    input:
        drawn="results/dcode/figures/fig5.npz",
    output:
        png=report(
            "results/figures/dcode_fig5.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig5"},
        ),
        pdf="results/figures/dcode_fig5.pdf",
    log:
        "logs/dcode/fig5_figure.log",
    benchmark:
        "logs/benchmarks/dcode_fig5_figure/dcode/fig5_figure.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("dcode.pairs_figure"),
    script:
        STEP_SCRIPT


rule dcode_own_map:
    """Fig. 4's map of an own co-occurrence dataset: D-CODE of its rows and columns over every
    period, the last period's means (table: the coordinates) and the figure's data."""
    input:
        corpus=lambda wc: artifact(wc.dataset),
    output:
        drawn="results/dcode/figures/map_{dataset}.npz",
        coordinates=report_table(
            "results/tables/dcode_map_{dataset}.csv",
            caption="../report/dcode_own_map.rst",
            category="D-CODE",
            labels={"table": "map {dataset} data"},
        ),
    log:
        "logs/dcode/map_{dataset}.log",
    benchmark:
        "logs/benchmarks/dcode_own_map/dcode/map_{dataset}.tsv"
    wildcard_constraints:
        dataset="|".join(DCODE_OWN) or "(?!)",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params(
            "dcode.own_map",
            settings=lambda wc: step_settings("dcode.own_map", seed=DCODE["seed"]),
        ),
    script:
        STEP_SCRIPT


rule dcode_own_map_figure:
    """An own dataset's map drawn from its data file, as Fig. 4."""
    input:
        drawn="results/dcode/figures/map_{dataset}.npz",
    output:
        png=report(
            "results/figures/dcode_map_{dataset}.png",
            caption="../report/dcode_own_map.rst",
            category="D-CODE",
            labels={"figure": "map {dataset}"},
        ),
        pdf="results/figures/dcode_map_{dataset}.pdf",
    log:
        "logs/dcode/map_{dataset}_figure.log",
    benchmark:
        "logs/benchmarks/dcode_own_map_figure/dcode/map_{dataset}_figure.tsv"
    wildcard_constraints:
        dataset="|".join(DCODE_OWN) or "(?!)",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("dcode.own_map_figure"),
    script:
        STEP_SCRIPT
