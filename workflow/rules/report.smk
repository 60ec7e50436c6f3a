"""The paper-vs-ours summary over every paper's table (the HTML report is `snakemake --report`)."""

PAPER_VALUES = "config/paper_values"


rule paper_summary:
    """One line per published number: the paper's value, ours, the difference, a verdict."""
    input:
        tables=[t for t in paper_targets() if re.match(r"results/tables/.*\.csv$", t)],
        values=sorted(str(p) for p in Path(PAPER_VALUES).glob("*.csv")),
        meta=dataset_artifacts(),
    output:
        csv=report(
            "results/tables/summary.csv",
            caption="../report/summary.rst",
            category="Summary",
            labels={"table": "paper vs ours"},
        ),
        md="results/tables/summary.md",
    log:
        "logs/tables/summary.log",
    benchmark:
        "logs/benchmarks/paper_summary/tables/summary.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        step="report.papers",
        code=step_code("report.papers"),
        settings={},
    script:
        STEP_SCRIPT


rule timings:
    """Where the run's time went: every job's benchmark file summed per paper and rule (runs
    last: its inputs are every other final output)."""
    input:
        paper_targets(),
        "results/tables/summary.csv",
        "results/tables/datasets.csv",
    output:
        csv=report(
            "results/tables/timings.csv",
            caption="../report/timings.rst",
            category="Summary",
            labels={"table": "timings"},
        ),
        md="results/tables/timings.md",
    log:
        "logs/tables/timings.log",
    benchmark:
        "logs/benchmarks/timings/tables/timings.tsv"
    conda:
        "../envs/embedlab.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    params:
        step="report.timings",
        code=step_code("report.timings"),
        settings=step_settings("report.timings", benchmarks="logs/benchmarks"),
    script:
        STEP_SCRIPT
