"""D-CODE paper (Sarkar, Siddiqi & Gordon 2007): Table 2 (section 4.5) and Figs. 3-5."""

validate(config["dcode"], schema="../schemas/dcode.schema.yaml")
DCODE = config["dcode"]
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
)


# one Table 2 result file per observation model and subset size ("20,188" -> 20a_188w)
DCODE_SIZE_FILES = [
    "results/dcode/rank_{}_{}a_{}w.json".format(observation, *size.split(","))
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
        step="dcode.rank",
        code=step_code("dcode.rank"),
        settings=step_settings("dcode.rank"),
    script:
        STEP_SCRIPT


rule dcode_table:
    """Table 2: our median ranks (mean ± s.e. over subsets) beside the paper's."""
    input:
        results=DCODE_SIZE_FILES,
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
        step="dcode.table",
        code=step_code("dcode.table"),
        settings={},
    script:
        STEP_SCRIPT


# The figures' fits run on one thread, as the Table 2 fits do: the order of the likelihood
# kernel's parallel sums, hence the last digits of the fitted positions (Fig. 4's
# coordinates), follows the thread count, so a fixed count gives the same figures on every
# machine and under any --cores.


rule dcode_fig3:
    """Fig. 3 (synthetic): ellipses at three epochs and the rank trajectories (+ their table)."""
    input:
        corpus=artifact("dcode_synthetic"),
    output:
        png=report(
            "results/figures/dcode_fig3.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig3"},
        ),
        pdf="results/figures/dcode_fig3.pdf",
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
        step="dcode.synthetic",
        code=step_code("dcode.synthetic"),
        settings=lambda wc: step_settings("dcode.synthetic", seed=DCODE["seed"]),
    script:
        STEP_SCRIPT


rule dcode_fig4:
    """Fig. 4: the NIPS 1999 embedding of the most prolific authors and their words (table:
    the coordinates)."""
    input:
        corpus=artifact("nips12"),
    output:
        png=report(
            "results/figures/dcode_fig4.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig4"},
        ),
        pdf="results/figures/dcode_fig4.pdf",
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
        step="dcode.embedding",
        code=step_code("dcode.embedding"),
        settings=lambda wc: step_settings("dcode.embedding", seed=DCODE["seed"]),
    script:
        STEP_SCRIPT


rule dcode_fig5:
    """Fig. 5: author-given-word ranks over time (table: the trajectories and the empirical
    p(a | w))."""
    input:
        corpus=artifact("nips12"),
    output:
        png=report(
            "results/figures/dcode_fig5.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig5"},
        ),
        pdf="results/figures/dcode_fig5.pdf",
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
        step="dcode.pairs",
        code=step_code("dcode.pairs"),
        settings=lambda wc: step_settings("dcode.pairs", seed=DCODE["seed"]),
    script:
        STEP_SCRIPT
