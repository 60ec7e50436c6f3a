"""Space-time local embeddings (SNEST): Table 1 and Figs. 2-4 (included when the config has
a `snest` section; workflow/schemas/snest.schema.yaml holds its defaults)."""

validate(config["snest"], schema="../schemas/snest.schema.yaml")
SNEST = config["snest"]
SNEST["datasets"] = with_own_datasets(
    "snest", SNEST["datasets"], perplexity=lambda name: SNEST["perplexity"]
)
# figure -> the dataset whose best SNEST R^{2,1} run it shows (fig2b, the kernel, needs none)
SNEST_FIGURES = {"fig2a": "school", "fig3": "nips22", "fig4": "w5000"}
# one runs file per Table 1 cell and dataset
SNEST_RUNS = expand(
    "results/embeddings/snest/{dataset}/{cell}.npz",
    dataset=SNEST["datasets"],
    cell=SNEST["cells"],
)
PAPER_TARGETS["snest"] = [
    "results/tables/snest_kl.csv",
    "results/tables/snest_kl.md",
] + expand(
    "results/figures/snest_{fig}.{ext}", fig=SNEST["figures"], ext=["png", "pdf"]
)


include: "snest_helpers.smk"


# a Table 1 cell's name, as a wildcard pattern
SNEST_CELL = r"(sne|tsne)-\d+|snest-\d+-\d+"
# datasets whose restarts_per_job splits each cell over jobs (config/paper.yaml), as a
# wildcard pattern (one that matches nothing where none does)
SNEST_SPLIT = "|".join(
    re.escape(d) for d in SNEST["datasets"] if len(snest_blocks(d)) > 1
)


rule snest_embed:
    """All restarts x learning rates of one Table 1 cell on one dataset; every run is kept."""
    input:
        data=lambda wc: artifact(wc.dataset),
    output:
        runs_file="results/embeddings/snest/{dataset}/{cell}.npz",
    log:
        "logs/snest/{dataset}/{cell}.log",
    benchmark:
        "logs/benchmarks/snest_embed/snest/{dataset}/{cell}.tsv"
    wildcard_constraints:
        cell=SNEST_CELL,
    conda:
        "../envs/embedlab.yaml"
    threads: lambda wc: per_dataset(SNEST["threads"], wc.dataset)
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        **step_params(
            "snest.embed",
            settings=lambda wc: step_settings(
                "snest.embed", wc.dataset, grid=snest_grid(wc.dataset, wc.cell)
            ),
        ),
    script:
        STEP_SCRIPT


# A split dataset's cell: each block of restarts_per_job restarts is a job of its own, and
# the cell's runs file merges them (the table and figures read it as one job's).
ruleorder: snest_merge > snest_embed


use rule snest_embed as snest_embed_part with:
    output:
        runs_file="results/embeddings/snest/{dataset}/{cell}/restarts_from_{first}.npz",
    log:
        "logs/snest/{dataset}/{cell}/restarts_from_{first}.log",
    benchmark:
        "logs/benchmarks/snest_embed_part/snest/{dataset}/{cell}/restarts_from_{first}.tsv"
    wildcard_constraints:
        cell=SNEST_CELL,
        first=r"\d+",
    resources:
        mem_mb=4000,
        # a block is sized to at most ~45 min on one core (config/paper.yaml)
        runtime=60,


rule snest_merge:
    """A Table 1 cell split over jobs: its blocks' runs in the one runs file of the cell."""
    input:
        parts=lambda wc: snest_parts(wc.dataset, wc.cell),
    output:
        runs_file="results/embeddings/snest/{dataset}/{cell}.npz",
    log:
        "logs/snest/{dataset}/{cell}_merge.log",
    benchmark:
        "logs/benchmarks/snest_merge/snest/{dataset}/{cell}_merge.tsv"
    wildcard_constraints:
        dataset=SNEST_SPLIT or "(?!)",
        cell=SNEST_CELL,
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params("snest.merge"),
    script:
        STEP_SCRIPT


rule snest_table:
    """Table 1: our minimal KL per cell beside the paper's, winners per parameter budget."""
    input:
        run_files=SNEST_RUNS,
        paper="config/paper_values/snest_table1.csv",
    output:
        csv=report_table(
            "results/tables/snest_kl.csv",
            caption="../report/snest_kl.rst",
            category="SNEST",
            labels={"table": "Table 1: minimal KL"},
        ),
        md="results/tables/snest_kl.md",
        md_long="results/tables/snest_kl_long.md",
    log:
        "logs/snest/table.log",
    benchmark:
        "logs/benchmarks/snest_table/snest/table.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        **step_params(
            "snest.table",
            settings=step_settings("snest.table", left_out=left_out_reasons("snest")),
        ),
    script:
        STEP_SCRIPT


rule snest_figure:
    """Figs. 2a, 3, 4: the best SNEST R^{2,1} run of SCHOOL, NIPS22, W5000."""
    input:
        runs_file=lambda wc: f"results/embeddings/snest/{SNEST_FIGURES[wc.fig]}/snest-2-1.npz",
        data=lambda wc: artifact(SNEST_FIGURES[wc.fig]),
    output:
        png=report(
            "results/figures/snest_{fig}.png",
            caption="../report/snest_figure.rst",
            category="SNEST",
            labels={"figure": "{fig}"},
        ),
        pdf="results/figures/snest_{fig}.pdf",
    log:
        "logs/snest/{fig}.log",
    benchmark:
        "logs/benchmarks/snest_figure/snest/{fig}.tsv"
    wildcard_constraints:
        fig="fig2a|fig3|fig4",
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **step_params("snest.figure"),
    script:
        STEP_SCRIPT


rule snest_kernel_figure:
    """Fig. 2b: contours of the SNEST output kernel exp(dt^2) / (1 + ds^2)."""
    output:
        png=report(
            "results/figures/snest_fig2b.png",
            caption="../report/snest_figure.rst",
            category="SNEST",
            labels={"figure": "fig2b"},
        ),
        pdf="results/figures/snest_fig2b.pdf",
    log:
        "logs/snest/fig2b.log",
    benchmark:
        "logs/benchmarks/snest_kernel_figure/snest/fig2b.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **step_params("snest.kernel_figure"),
    script:
        STEP_SCRIPT
