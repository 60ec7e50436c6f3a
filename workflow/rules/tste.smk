"""t-STE paper (section 4 of design/EXPERIMENTS.md)."""


include: "tste_setup.smk"


rule tste_evaluate:
    """Fig. 2 protocol for one (dataset, method): all dimensions x folds, validation.
    The K forms' eigen-decompositions use one BLAS thread (two stall on a shared machine);
    the numba triplet kernels use {threads}."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/metrics/tste/{dataset}/{method}.csv",
    log:
        "logs/tste/{dataset}/{method}.log",
    wildcard_constraints:
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        dims=TSTE.get("dims", []),
        folds=TSTE.get("n_folds", 10),
        grid=lambda wc: json.dumps(TSTE.get("grids", {}).get(wc.method, {})),
        seed=TSTE.get("seed", 0),
        max_iter=TSTE.get("max_iter", 1000),
        subset=lambda wc: (
            f"--max-triplets {TSTE['max_triplets'][wc.dataset]}"
            if wc.dataset in TSTE.get("max_triplets", {})
            else ""
        ),
        folds_used=lambda wc: (
            f"--folds-used {TSTE['folds_used'][wc.dataset][wc.method]}"
            if wc.method in TSTE.get("folds_used", {}).get(wc.dataset, {})
            else ""
        ),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-evaluate --artifact {params.folder:q}"
        " --method {wildcards.method} --dims {params.dims} --folds {params.folds}"
        " --grid {params.grid:q} --seed {params.seed} --max-iter {params.max_iter}"
        " {params.subset} {params.folds_used} --out {output:q} > {log:q} 2>&1"


rule tste_table:
    """Fig. 2 as a table: mean errors over folds, rows = dimension, columns = methods."""
    input:
        lambda wc: tste_metrics(wc.dataset),
    output:
        csv=report(
            "results/tables/tste_{dataset}.csv",
            caption="../report/tste_table.rst",
            category="t-STE",
            labels={"table": "Fig. 2: {dataset}"},
        ),
        md="results/tables/tste_{dataset}.md",
    log:
        "logs/tste/table_{dataset}.log",
    wildcard_constraints:
        dataset=r"(?!claims)[A-Za-z0-9_]+",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m embedlab tste-table --dataset {wildcards.dataset} --csv {output.csv:q}"
        " --md {output.md:q} {input:q} > {log:q} 2>&1"


rule tste_claims:
    """The paper's textual claims about Fig. 2, checked on our tables."""
    input:
        tables=expand(
            "results/tables/tste_{dataset}.csv", dataset=TSTE.get("datasets", [])
        ),
        paper="config/paper_values/tste_claims.csv",
    output:
        md="results/tables/tste_claims.md",
        csv=report(
            "results/tables/tste_claims.csv",
            caption="../report/tste_claims.rst",
            category="t-STE",
            labels={"table": "claims"},
        ),
    log:
        "logs/tste/claims.log",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m embedlab tste-claims --paper {input.paper:q} --csv {output.csv:q}"
        " --md {output.md:q} {input.tables:q} > {log:q} 2>&1"


rule tste_map:
    """A 2-D embedding of all triplets of one dataset (Figs. 3 and 4)."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/embeddings/tste/{dataset}/{method}-2d.npz",
    log:
        "logs/tste/{dataset}/{method}-2d.log",
    wildcard_constraints:
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        seed=TSTE.get("seed", 0),
        args=tste_map_args,
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-map --artifact {params.folder:q} --method {wildcards.method}"
        " --seed {params.seed} {params.args} --out {output:q} > {log:q} 2>&1"


rule tste_figure:
    """Fig. 2 (errors vs dimension), Fig. 3 (MNIST maps), Fig. 4 (music map)."""
    input:
        tste_figure_inputs,
    output:
        png=report(
            "results/figures/tste_{fig}.png",
            caption="../report/tste_figure.rst",
            category="t-STE",
            labels={"figure": "{fig}"},
        ),
        pdf="results/figures/tste_{fig}.pdf",
    log:
        "logs/tste/{fig}.log",
    wildcard_constraints:
        fig="fig2|fig3|fig4",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        stem=subpath(output.pdf, strip_suffix=".pdf"),
        artifact=lambda wc: (
            f"--artifact results/datasets/{TSTE_MAPS['fig4']['dataset']}"
            if wc.fig == "fig4"
            else ""
        ),
    shell:
        "python -m embedlab tste-figure {wildcards.fig} {params.artifact}"
        " --out {params.stem:q} {input:q} > {log:q} 2>&1"
