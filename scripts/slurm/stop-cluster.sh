#!/usr/bin/env bash
# Stop the one-node test cluster that scripts/slurm/start-cluster.sh started: slurmd,
# slurmctld and (unless --keep-munge) munged. Idempotent; the packages and
# /etc/slurm/slurm.conf stay. It only stops daemons if slurm.conf is the one that script
# wrote, so it never takes down a real cluster's daemons.
set -euo pipefail

MARKER="# written by embedlab scripts/slurm/start-cluster.sh"
CONF=/etc/slurm/slurm.conf
keep_munge=0
[ "${1:-}" = "--keep-munge" ] && keep_munge=1

log() { printf '[slurm-stop] %s\n' "$*"; }

if [ -f "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
    log "$CONF was not written by start-cluster.sh; leaving its daemons alone"
    exit 1
fi

# Stop one daemon by the pid in its pid file (else the pid pgrep finds for that exact
# program name), then wait for it to exit.
stop_daemon() {
    local name="$1" pidfile="$2" pids=""
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        pids="$(cat "$pidfile")"
    else
        pids="$(pgrep -x "$name" || true)"
    fi
    [ -n "$pids" ] || return 0
    log "stopping $name (pid $(echo $pids))"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 30); do
        pgrep -x "$name" >/dev/null || return 0
        sleep 0.5
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}

stop_daemon slurmd /run/slurmd.pid
stop_daemon slurmctld /run/slurmctld.pid
if [ "$keep_munge" = 0 ]; then
    stop_daemon munged /run/munge/munged.pid
fi
log "stopped"
