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


include: "dcode_helpers.smk"


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
        artifact("nips12"),
    output:
        "results/dcode/rank_{observation}_{a}a_{w}w.json",
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
        code=code_of("dcode-rank"),
        settings=dcode_rank_settings,
    shell:
        "NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m embedlab dcode-rank"
        " --artifact results/datasets/nips12 --size {wildcards.a},{wildcards.w}"
        " --out {output:q} --config {params.settings:q} > {log:q} 2>&1"


rule dcode_table:
    """Table 2: our median ranks (mean ± s.d. over subsets) beside the paper's."""
    input:
        results=DCODE_SIZE_FILES,
        paper="config/paper_values/dcode_table2.csv",
    output:
        csv=report(
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
        code=code_of("dcode-table"),
    shell:
        "python -m embedlab dcode-table --paper {input.paper:q} --csv {output.csv:q}"
        " --md {output.md:q} --md-long {output.md_long:q} {input.results:q} > {log:q} 2>&1"


rule dcode_fig3:
    """Fig. 3 (synthetic): ellipses at three epochs and the rank trajectories (+ their table)."""
    input:
        artifact("dcode_synthetic"),
    output:
        png=report(
            "results/figures/dcode_fig3.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "fig3"},
        ),
        pdf="results/figures/dcode_fig3.pdf",
        table=report(
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
        code=code_of("dcode-figure"),
        stem=subpath(output.pdf, strip_suffix=".pdf"),
        settings=lambda wc: json.dumps(
            {**DCODE["figures"]["fig3"], "seed": DCODE["seed"]}
        ),
    shell:
        "OPENBLAS_NUM_THREADS=1 python -m embedlab dcode-figure fig3"
        " --artifact results/datasets/dcode_synthetic --out {params.stem:q}"
        " --table {output.table:q} --config {params.settings:q} > {log:q} 2>&1"


rule dcode_nips_figure:
    """Fig. 4 (NIPS 1999 embedding; table: coordinates) and Fig. 5 (author-given-word ranks
    over time; table: the trajectories and the empirical p(a | w))."""
    input:
        artifact("nips12"),
    output:
        png=report(
            "results/figures/dcode_{fig}.png",
            caption="../report/dcode_figure.rst",
            category="D-CODE",
            labels={"figure": "{fig}"},
        ),
        pdf="results/figures/dcode_{fig}.pdf",
        table=report(
            "results/tables/dcode_{fig}.csv",
            caption="../report/dcode_figure_data.rst",
            category="D-CODE",
            labels={"table": "{fig} data"},
        ),
    log:
        "logs/dcode/{fig}.log",
    benchmark:
        "logs/benchmarks/dcode_nips_figure/dcode/{fig}.tsv"
    wildcard_constraints:
        fig="fig4|fig5",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code_of("dcode-figure"),
        stem=subpath(output.pdf, strip_suffix=".pdf"),
        settings=lambda wc: json.dumps(
            {**DCODE["figures"][wc.fig], "seed": DCODE["seed"]}
        ),
    shell:
        "OPENBLAS_NUM_THREADS=1 python -m embedlab dcode-figure {wildcards.fig}"
        " --artifact results/datasets/nips12 --out {params.stem:q}"
        " --table {output.table:q} --config {params.settings:q} > {log:q} 2>&1"
