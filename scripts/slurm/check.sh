#!/usr/bin/env bash
# Prove the SLURM profile on a real (one-node, localhost) SLURM cluster:
#   1. start the test cluster (scripts/slurm/start-cluster.sh; installs slurm-wlm + munge);
#   2. copy the checkout twice into $SLURM_CHECK_DIR (default /tmp/embedlab-slurm-check):
#      local/ and slurm/ (the working tree's tracked and untracked-but-not-ignored files, so
#      no results/, resources/ or .snakemake/; or a git revision, see SLURM_CHECK_SOURCE);
#   3. run the quick configuration in local/ with `snakemake --cores N` and in slurm/ with
#      `snakemake --workflow-profile workflow/profiles/slurm`, one after the other, both
#      reading the raw files from the absolute path of the datasets mirror;
#   4. check the SLURM run: snakemake succeeded, it submitted every job but the target rule
#      `all` to SLURM, and SLURM's job log (jobcomp/filetxt) records each of them COMPLETED;
#      both runs are complete (a dry run has nothing left to do);
#   5. compare the two results/ (scripts/slurm/compare_runs.py): same files, every planned
#      output and figure present, dataset artifacts identical, tables equal up to a numeric
#      tolerance with wall-time columns left out;
#   6. print a PASS/FAIL summary with the wall times (also kept in $WORK/summary.txt); exit
#      non-zero on any failure.
# Run it as root (it installs and starts SLURM), with the project's virtualenv on PATH or
# in .venv; `make slurm-check` does both. The cluster is stopped at the end if this script
# started it (SLURM_CHECK_KEEP_CLUSTER=1 keeps it up).
#
# Settings (environment):
#   SLURM_CHECK_DIR      work folder, emptied first    (default /tmp/embedlab-slurm-check)
#   SLURM_CHECK_MIRROR   raw-data mirror               (default: data.mirror of
#                        config/config.yaml, made absolute against the repository root)
#   SLURM_CHECK_SOURCE   worktree (default) or a git revision, e.g. HEAD
#   SLURM_CHECK_CORES    cores of the local run        (default: nproc)
#   SLURM_CHECK_CONFIG   config file of both runs      (default config/quick.yaml)
#   SLURM_CHECK_REUSE    1: skip steps 1-3 and check the runs already in SLURM_CHECK_DIR
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK="${SLURM_CHECK_DIR:-/tmp/embedlab-slurm-check}"
SOURCE="${SLURM_CHECK_SOURCE:-worktree}"
CORES="${SLURM_CHECK_CORES:-$(nproc)}"
CONFIG="${SLURM_CHECK_CONFIG:-config/quick.yaml}"
# Test-cluster-only plugin settings: the cluster has no slurmdbd, so job states come from
# squeue (MinJobAge=900 keeps finished jobs listed); check every few seconds, not 40 s.
SLURM_TEST_ARGS=(--slurm-status-command squeue --slurm-init-seconds-before-status-checks 5)

log() { printf '[slurm-check] %s\n' "$*"; }
die() { printf '[slurm-check] ERROR: %s\n' "$*" >&2; exit 2; }

if [ -x "$REPO/.venv/bin/snakemake" ]; then
    export PATH="$REPO/.venv/bin:$PATH"
fi
command -v snakemake >/dev/null || die "snakemake not found (make venv, or activate the environment)"
python -c "import snakemake_executor_plugin_slurm" 2>/dev/null ||
    die "snakemake-executor-plugin-slurm missing: pip install -e '.[cluster]'"

if [ -z "${SLURM_CHECK_MIRROR:-}" ]; then
    mirror_rel="$(python -c "import yaml; print(yaml.safe_load(open('$REPO/config/config.yaml'))['data'].get('mirror') or '')")"
    if [ -n "$mirror_rel" ]; then
        SLURM_CHECK_MIRROR="$(cd "$REPO" && realpath -m "$mirror_rel")"
    fi
fi
MIRROR="${SLURM_CHECK_MIRROR:-}"
[ -n "$MIRROR" ] && [ -d "$MIRROR" ] || log "no datasets mirror at '${MIRROR}': raw files come from their URLs"

CONFIGS=(--configfile "$CONFIG" "$WORK/mirror.yaml")

if [ "${SLURM_CHECK_REUSE:-0}" = 1 ]; then
    # re-check the runs already in $WORK (e.g. after changing compare_runs.py)
    [ -f "$WORK/local.status" ] && [ -f "$WORK/slurm.status" ] ||
        die "SLURM_CHECK_REUSE=1 but $WORK has no finished runs"
    read -r run_local_rc t_local <"$WORK/local.status"
    read -r run_slurm_rc t_slurm <"$WORK/slurm.status"
    log "reusing the runs in $WORK"
else
    # --- 1. cluster ----------------------------------------------------------------------
    started_cluster=0
    if ! sinfo --noheader >/dev/null 2>&1 || ! pgrep -x slurmd >/dev/null; then
        started_cluster=1
    fi
    "$HERE/start-cluster.sh"
    cleanup() {
        if [ "$started_cluster" = 1 ] && [ "${SLURM_CHECK_KEEP_CLUSTER:-0}" != 1 ]; then
            "$HERE/stop-cluster.sh" || true
        fi
    }
    trap cleanup EXIT

    # --- 2. two copies -------------------------------------------------------------------
    snapshot() { # snapshot DEST
        local dest="$1"
        mkdir -p "$dest"
        if [ "$SOURCE" = worktree ]; then
            (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
                while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
                tar --null -T - -cf -) | tar -xf - -C "$dest"
        else
            (cd "$REPO" && git archive "$SOURCE") | tar -xf - -C "$dest"
        fi
    }
    log "work folder $WORK (source: $SOURCE)"
    rm -rf "$WORK"
    mkdir -p "$WORK"
    snapshot "$WORK/local"
    snapshot "$WORK/slurm"
    cat >"$WORK/mirror.yaml" <<EOF
# both runs read the raw files from the same mirror (absolute path)
data:
  mirror: "${MIRROR}"
EOF

    # --- 3. the two runs, one after the other --------------------------------------------
    run_local_rc=0
    log "local run: snakemake --cores $CORES ${CONFIGS[*]}   (log: $WORK/local.log)"
    t0=$(date +%s)
    (cd "$WORK/local" && snakemake --cores "$CORES" "${CONFIGS[@]}") >"$WORK/local.log" 2>&1 ||
        run_local_rc=$?
    t_local=$(($(date +%s) - t0))
    echo "$run_local_rc $t_local" >"$WORK/local.status"
    log "local run: exit $run_local_rc after ${t_local} s"

    run_slurm_rc=0
    log "SLURM run: snakemake --workflow-profile workflow/profiles/slurm ${CONFIGS[*]} ${SLURM_TEST_ARGS[*]}   (log: $WORK/slurm.log)"
    t0=$(date +%s)
    (cd "$WORK/slurm" &&
        snakemake --workflow-profile workflow/profiles/slurm "${CONFIGS[@]}" "${SLURM_TEST_ARGS[@]}") \
        >"$WORK/slurm.log" 2>&1 || run_slurm_rc=$?
    t_slurm=$(($(date +%s) - t0))
    echo "$run_slurm_rc $t_slurm" >"$WORK/slurm.status"
    log "SLURM run: exit $run_slurm_rc after ${t_slurm} s"
fi

# --- 4. did SLURM run every job? ---------------------------------------------------------
declare -a summary=()
add() { summary+=("$(printf '%s  %-9s %s' "$1" "$2" "$3")"); }
[ "$run_local_rc" = 0 ] && add PASS local-run "exit 0, ${t_local} s" ||
    add FAIL local-run "exit $run_local_rc (see $WORK/local.log)"
[ "$run_slurm_rc" = 0 ] && add PASS slurm-run "exit 0, ${t_slurm} s" ||
    add FAIL slurm-run "exit $run_slurm_rc (see $WORK/slurm.log)"

run_id="$(sed -n 's/.*SLURM run ID: \([A-Za-z0-9_-]*\).*/\1/p' "$WORK/slurm.log" | head -n1)"
planned="$(awk '$1 == "total" {print $2; exit}' "$WORK/slurm.log")"
local_jobs="$(grep -c '^localrule ' "$WORK/slurm.log" || true)"
submitted="$(grep -c 'has been submitted with SLURM jobid' "$WORK/slurm.log" || true)"
jobcomp=/var/log/slurm/jobcomp.log
completed=0
not_completed=""
if [ -n "$run_id" ] && [ -f "$jobcomp" ]; then
    completed="$(grep -F "Name=$run_id " "$jobcomp" | grep -c 'JobState=COMPLETED' || true)"
    not_completed="$(grep -F "Name=$run_id " "$jobcomp" | { grep -v 'JobState=COMPLETED' || true; } |
        sed -n 's/.*JobId=\([0-9]*\).*JobState=\([A-Z_]*\).*/\1:\2/p' | tr '\n' ' ')"
fi
if [ -n "$planned" ] && [ "$submitted" -gt 0 ] && [ $((submitted + local_jobs)) = "$planned" ] &&
    [ "$completed" = "$submitted" ] && [ -z "$not_completed" ]; then
    add PASS slurm-jobs "$submitted of $planned jobs ran as SLURM jobs, all COMPLETED (run $run_id; $local_jobs local: rule all)"
else
    add FAIL slurm-jobs "planned ${planned:-?}, local $local_jobs, submitted $submitted, COMPLETED in $jobcomp $completed; other states: ${not_completed:-none}"
fi

# both runs complete: a dry run finds nothing to do
for run in local slurm; do
    if (cd "$WORK/$run" && snakemake --dry-run --cores 1 "${CONFIGS[@]}") >"$WORK/$run.dryrun.log" 2>&1 &&
        grep -q 'Nothing to be done' "$WORK/$run.dryrun.log"; then
        add PASS "$run-done" "dry run afterwards: nothing to be done"
    else
        add FAIL "$run-done" "dry run afterwards still plans jobs (see $WORK/$run.dryrun.log)"
    fi
done

# --- 5. compare --------------------------------------------------------------------------
# the outputs the DAG plans (from the local copy; the same workflow and config as slurm/)
(cd "$WORK/local" && snakemake --summary --cores 1 "${CONFIGS[@]}" 2>/dev/null) |
    awk -F'\t' 'NR > 1 && $1 ~ /^results\// {print $1}' | sort -u >"$WORK/expected.txt" || true
log "comparing $WORK/local/results with $WORK/slurm/results"
compare_rc=0
python "$HERE/compare_runs.py" "$WORK/local" "$WORK/slurm" --expected "$WORK/expected.txt" \
    | tee "$WORK/compare.log" || compare_rc=$?
[ "$compare_rc" = 0 ] && add PASS compare "local and SLURM results agree (details: $WORK/compare.log)" ||
    add FAIL compare "results differ (details: $WORK/compare.log)"

# --- 6. summary --------------------------------------------------------------------------
# printed, and kept in $WORK/summary.txt (docs/data/slurm_check.txt quotes the last one)
failed=0
for line in "${summary[@]}"; do
    case "$line" in FAIL*) failed=1 ;; esac
done
{
    echo "==== SLURM check: $CONFIG, local ${t_local} s, SLURM ${t_slurm} s ===="
    printf '%s\n' "${summary[@]}"
    [ "$failed" = 0 ] && echo "==== PASS ====" || echo "==== FAIL ===="
} | tee "$WORK/summary.txt"
[ "$failed" = 0 ] || exit 1
