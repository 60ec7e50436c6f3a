"""t-STE paper (van der Maaten & Weinberger 2012): Fig. 2 as tables, the claims, Figs. 2-4
(included when the config has a `tste` section; workflow/schemas/tste.schema.yaml holds its
defaults).

Three readings of the protocol (tste.protocols): paper_text writes results/*/tste_* (the
section's top-level keys), authors_code results/*/tste_authors_* (section authors_code),
authors_figure results/*/tste_authors_figure_* (the authors_code section's protocol with the
solver settings of tste.authors_figure.settings: only the methods named there are refitted,
under results/metrics/tste_authors_figure/ and results/embeddings/tste_authors_figure/; the
others are the authors_code fits).
"""

validate(config["tste"], schema="../schemas/tste.schema.yaml")
TSTE = config["tste"]
# own triplets datasets run under the paper's text (the authors' readings are MNIST's protocol)
TSTE["datasets"] = with_own_datasets("tste", TSTE["datasets"])
TSTE_PROTOCOLS = TSTE["protocols"]
TSTE_AUTHORS = (
    TSTE["authors_code"]
    if {"authors_code", "authors_figure"} & set(TSTE_PROTOCOLS)
    else None
)
# the authors_figure reading's solver settings of the methods it refits
TSTE_FIGURE = (
    TSTE["authors_figure"]["settings"] if "authors_figure" in TSTE_PROTOCOLS else {}
)
# the file-name prefix of each protocol's metrics, tables and figures
TSTE_PREFIX = {
    "paper_text": "tste",
    "authors_code": "tste_authors",
    "authors_figure": "tste_authors_figure",
}
TSTE_PROTOCOL_OF = {prefix: p for p, prefix in TSTE_PREFIX.items()}
TSTE_SECTION = {
    TSTE_PREFIX[p]: TSTE if p == "paper_text" else TSTE_AUTHORS for p in TSTE_PROTOCOLS
}
TSTE_DATASETS = sorted({d for s in TSTE_SECTION.values() for d in s["datasets"]})
PAPER_TARGETS["tste"] = []
for _prefix in TSTE_SECTION:
    PAPER_TARGETS["tste"] += (
        expand(
            "results/tables/{prefix}_{dataset}.{ext}",
            prefix=_prefix,
            dataset=TSTE_SECTION[_prefix]["datasets"],
            ext=["csv", "md"],
        )
        + expand(
            "results/tables/{prefix}_claims.{ext}", prefix=_prefix, ext=["md", "csv"]
        )
        + expand(
            "results/figures/{prefix}_{fig}.{ext}",
            prefix=_prefix,
            fig=["fig2", "fig3", "fig4"] if _prefix == "tste" else ["fig2", "fig3"],
            ext=["png", "pdf"],
        )
    )


include: "tste_helpers.smk"


rule tste_search:
    """The paper text's validation for one (dataset, method), one grid value: its fit on the
    first fold's training triplets less a seeded 10 % and its triplet error on that 10 % per
    dimension (embedlab.experiments.tste.validation_errors). One thread per job, another job
    takes the second core: the K forms' eigen-decompositions use one BLAS thread (two stall
    on a shared machine), and a second thread makes the X forms' triplet kernel only ~1.3x
    faster at MNIST's size (benchmarks/README.md); no result depends on the thread count.
    """
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/metrics/{reading}/{dataset}/{method}/search/{index}.npz",
    log:
        "logs/{reading}/{dataset}/{method}/search/{index}.log",
    benchmark:
        "logs/benchmarks/tste_search/{reading}/{dataset}/{method}/search/{index}.tsv"
    wildcard_constraints:
        reading="tste",
        dataset=r"[^/]+",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
        index=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        code=code_of("tste-search"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        dims=TSTE["dims"],
        folds=TSTE["n_folds"],
        seed=TSTE["seed"],
        value=tste_search_value,
        common=tste_common,
        kform_solver=json.dumps(TSTE["kform_solver"]),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-search --artifact {params.folder:q}"
        " --method {wildcards.method} --dims {params.dims} --folds {params.folds}"
        " --seed {params.seed} {params.value} {params.common}"
        " --kform-solver {params.kform_solver:q} --out {output:q} > {log:q} 2>&1"


rule tste_part:
    """The paper text's Fig. 2 protocol for one (dataset, method), one fold (fold<k>): per
    dimension the value the validation files chose (the first with the lowest error), a fit
    on the fold's training triplets, its generalisation and 1-NN errors
    (embedlab.experiments.tste.paper_part); threads as in tste_search."""
    input:
        data=lambda wc: artifact(wc.dataset),
        search=tste_search_files,
    output:
        "results/metrics/{reading}/{dataset}/{method}/{part}.csv",
    log:
        "logs/{reading}/{dataset}/{method}/{part}.log",
    benchmark:
        "logs/benchmarks/tste_part/{reading}/{dataset}/{method}/{part}.tsv"
    wildcard_constraints:
        reading="tste",
        dataset=r"[^/]+",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
        part=r"fold\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        code=code_of("tste-part"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        dims=TSTE["dims"],
        folds=TSTE["n_folds"],
        seed=TSTE["seed"],
        common=tste_common,
        search=tste_search_option,
        kform_solver=json.dumps(TSTE["kform_solver"]),
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-part --artifact {params.folder:q}"
        " --method {wildcards.method} --dims {params.dims} --folds {params.folds}"
        " --seed {params.seed} --part {wildcards.part} {params.common} {params.search}"
        " --kform-solver {params.kform_solver:q} --out {output:q} > {log:q} 2>&1"


rule tste_authors_search:
    """The authors' regulariser search for one (dataset, method), one grid value: fit on the
    first 10 % of the triplets, violations on the other 90 %
    (embedlab.experiments.tste.authors_search_value)."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/metrics/{reading}/{dataset}/{method}/search/{index}.npz",
    log:
        "logs/{reading}/{dataset}/{method}/search/{index}.log",
    benchmark:
        "logs/benchmarks/tste_authors_search/{reading}/{dataset}/{method}/{index}.tsv"
    wildcard_constraints:
        reading="tste_authors|tste_authors_figure",
        dataset=r"[^/]+",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
        index=r"\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        code=code_of("tste-authors-search"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        dims=lambda wc: TSTE_AUTHORS["dims"],
        folds=lambda wc: TSTE_AUTHORS["n_folds"],
        seed=TSTE["seed"],
        value=tste_search_value,
        common=tste_common,
        settings=tste_authors_settings,
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-authors-search --artifact {params.folder:q}"
        " --method {wildcards.method} --dims {params.dims} --folds {params.folds}"
        " --seed {params.seed} {params.value} {params.common}"
        " --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"


rule tste_authors_part:
    """The authors' Fig. 2 protocol for one (dataset, method), one part: the 1-NN fits (nn)
    or one fold's generalisation error (fold<k>), with the searched value
    (embedlab.experiments.tste.authors_part)."""
    input:
        data=lambda wc: artifact(wc.dataset),
        search=tste_search_files,
    output:
        "results/metrics/{reading}/{dataset}/{method}/{part}.csv",
    log:
        "logs/{reading}/{dataset}/{method}/{part}.log",
    benchmark:
        "logs/benchmarks/tste_authors_part/{reading}/{dataset}/{method}/{part}.tsv"
    wildcard_constraints:
        reading="tste_authors|tste_authors_figure",
        dataset=r"[^/]+",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
        part=r"nn|fold\d+",
    conda:
        "../envs/embedlab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        code=code_of("tste-authors-part"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        dims=lambda wc: TSTE_AUTHORS["dims"],
        folds=lambda wc: TSTE_AUTHORS["n_folds"],
        seed=TSTE["seed"],
        nn_training=tste_authors_nn_training,
        common=tste_common,
        search=tste_search_option,
        settings=tste_authors_settings,
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-authors-part --artifact {params.folder:q}"
        " --method {wildcards.method} --dims {params.dims} --folds {params.folds}"
        " --seed {params.seed} --part {wildcards.part} --nn-training {params.nn_training}"
        " {params.common} {params.search} --settings {params.settings:q}"
        " --out {output:q} > {log:q} 2>&1"


rule tste_authors_merge:
    """One (dataset, method)'s metrics CSV from its parts, under every reading: the paper
    text's folds (tste_part), the authors' 1-NN fits and folds (tste_authors_part)."""
    input:
        tste_parts,
    output:
        "results/metrics/{reading}/{dataset}/{method}.csv",
    log:
        "logs/{reading}/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/tste_authors_merge/{reading}/{dataset}/{method}.tsv"
    wildcard_constraints:
        reading="tste|tste_authors|tste_authors_figure",
        dataset=r"[^/]+",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code_of("tste-authors-merge"),
    shell:
        "python -m embedlab tste-authors-merge --out {output:q} {input:q} > {log:q} 2>&1"


rule tste_table:
    """Fig. 2 as a table: mean errors over folds, rows = dimension, columns = methods
    (prefix tste: the paper's text; tste_authors: the authors' released code;
    tste_authors_figure: that code with the settings that reproduce the paper's Fig. 2).
    """
    input:
        lambda wc: tste_metrics(wc.prefix, wc.dataset),
    output:
        csv=report(
            "results/tables/{prefix}_{dataset}.csv",
            caption="../report/tste_table.rst",
            category="t-STE",
            labels={"table": "Fig. 2: {prefix} {dataset}"},
        ),
        md="results/tables/{prefix}_{dataset}.md",
    log:
        "logs/{prefix}/table_{dataset}.log",
    benchmark:
        "logs/benchmarks/tste_table/{prefix}/table_{dataset}.tsv"
    wildcard_constraints:
        prefix="tste|tste_authors|tste_authors_figure",
        dataset="|".join(TSTE_DATASETS) or "no-dataset",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code_of("tste-table"),
        protocol=lambda wc: TSTE_PROTOCOL_OF[wc.prefix],
    shell:
        "python -m embedlab tste-table --protocol {params.protocol}"
        " --dataset {wildcards.dataset} --csv {output.csv:q}"
        " --md {output.md:q} {input:q} > {log:q} 2>&1"


rule tste_claims:
    """The paper's textual claims about Fig. 2, checked on one protocol's tables."""
    input:
        tables=lambda wc: expand(
            "results/tables/{prefix}_{dataset}.csv",
            prefix=wc.prefix,
            dataset=TSTE_SECTION[wc.prefix]["datasets"],
        ),
        paper="config/paper_values/tste_claims.csv",
    output:
        md="results/tables/{prefix}_claims.md",
        csv=report(
            "results/tables/{prefix}_claims.csv",
            caption="../report/tste_claims.rst",
            category="t-STE",
            labels={"table": "claims: {prefix}"},
        ),
    log:
        "logs/{prefix}/claims.log",
    benchmark:
        "logs/benchmarks/tste_claims/{prefix}/claims.tsv"
    wildcard_constraints:
        prefix="tste|tste_authors|tste_authors_figure",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code_of("tste-claims"),
        left_out=left_out_of("tste"),
        protocol=lambda wc: TSTE_PROTOCOL_OF[wc.prefix],
    shell:
        "python -m embedlab tste-claims --protocol {params.protocol} --paper {input.paper:q}"
        " --csv {output.csv:q} --md {output.md:q} {input.tables:q}"
        " --left-out {params.left_out:q} > {log:q} 2>&1"


rule tste_map:
    """A 2-D embedding of all triplets of one dataset (Figs. 3 and 4); maps under
    tste_authors_figure/ are the authors_figure reading's refits."""
    input:
        lambda wc: artifact(wc.dataset),
    output:
        "results/embeddings/{maps}/{dataset}/{method}-2d.npz",
    log:
        "logs/{maps}/{dataset}/{method}-2d.log",
    benchmark:
        "logs/benchmarks/tste_map/{maps}/{dataset}/{method}-2d.tsv"
    wildcard_constraints:
        maps="tste|tste_authors_figure",
        method=r"(GNMDS|CKL|STE|t-STE)-[XK]",
    conda:
        "../envs/embedlab.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        code=code_of("tste-map"),
        folder=lambda wc: f"results/datasets/{wc.dataset}",
        seed=TSTE["seed"],
        args=tste_map_args,
    shell:
        "NUMBA_NUM_THREADS={threads} OPENBLAS_NUM_THREADS=1"
        " python -m embedlab tste-map --artifact {params.folder:q} --method {wildcards.method}"
        " --seed {params.seed} {params.args} --out {output:q} > {log:q} 2>&1"


rule tste_figure:
    """Fig. 2 (errors vs dimension), Fig. 3 (MNIST maps), Fig. 4 (music map); prefix tste:
    the paper's text, tste_authors: the authors' released code, tste_authors_figure: that
    code with the settings that reproduce the paper's Fig. 2."""
    input:
        tste_figure_inputs,
    output:
        png=report(
            "results/figures/{prefix}_{fig}.png",
            caption="../report/tste_figure.rst",
            category="t-STE",
            labels={"figure": "{prefix} {fig}"},
        ),
        pdf="results/figures/{prefix}_{fig}.pdf",
    log:
        "logs/{prefix}/{fig}.log",
    benchmark:
        "logs/benchmarks/tste_figure/{prefix}/{fig}.tsv"
    wildcard_constraints:
        prefix="tste|tste_authors|tste_authors_figure",
        fig="fig2|fig3|fig4",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code_of("tste-figure"),
        stem=subpath(output.pdf, strip_suffix=".pdf"),
        artifact=lambda wc: (
            f"--artifact results/datasets/{TSTE['maps']['fig4']['dataset']}"
            if wc.fig == "fig4"
            else ""
        ),
        protocol=lambda wc: TSTE_PROTOCOL_OF[wc.prefix],
    shell:
        "python -m embedlab tste-figure {wildcards.fig} --protocol {params.protocol}"
        " {params.artifact}"
        " --out {params.stem:q} {input:q} > {log:q} 2>&1"
