"""D-CODE input functions (included by dcode.smk)."""

# the D-CODE variants (the per-token block re-runs only these)
DCODE_VARIANTS = ["dcode", "dcode_mle", "static_dcode", "static_dcode_mle"]


def dcode_rank_settings(wildcards):
    """The dcode-rank job's settings: the config section, methods by observation model (the
    per-token block re-runs only the D-CODE variants; the baselines do not depend on it).
    """
    methods = DCODE["methods"]
    if wildcards.observation != DCODE["observations"][0]:
        methods = [m for m in methods if m in DCODE_VARIANTS]
    else:
        methods = methods + DCODE["references"]
    keys = [
        "subsets",
        "seed",
        "fit_step",
        "pool",
        "params",
        "grid",
        "val_subsets",
        "val_steps",
    ]
    keys += ["grid_extensions", "prediction", "paper_words"]
    settings = {key: DCODE[key] for key in keys}
    settings.update(observation=wildcards.observation, methods=methods)
    return json.dumps(settings)
