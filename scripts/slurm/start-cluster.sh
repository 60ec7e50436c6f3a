#!/usr/bin/env bash
# Start a one-node SLURM cluster on this machine (localhost only), for testing the
# workflow's SLURM profile (workflow/profiles/slurm). Debian/Ubuntu, run as root.
#
#   scripts/slurm/start-cluster.sh    # install (if missing), configure, start; idempotent
#   scripts/slurm/stop-cluster.sh     # stop the daemons again
#
# What it does:
#   1. apt-get installs slurm-wlm (slurmctld, slurmd, slurm-client) and munge if missing;
#   2. writes /etc/slurm/slurm.conf for ONE node named `hostname -s` at 127.0.0.1 with the
#      CPUs and memory `slurmd -C` detects, one partition `main` (Default=YES); no cgroups
#      (proctrack/linuxproc, task/none), so it works inside a container or a VM without
#      systemd; no slurmdbd (AccountingStorageType=accounting_storage/none, jobs logged by
#      jobcomp/filetxt), MinJobAge=900 so that `squeue --states=all` still lists a
#      finished job for 15 minutes (the SLURM executor plugin reads job states with squeue
#      here, see scripts/slurm/check.sh);
#   3. starts munged, slurmctld and slurmd, and waits until `sinfo` shows the node idle.
# A slurm.conf that this script did not write is never overwritten (exit 1 instead).
# Re-running it while the cluster is up changes nothing and exits 0.
set -euo pipefail

MARKER="# written by embedlab scripts/slurm/start-cluster.sh"
CONF_DIR=/etc/slurm
CONF="$CONF_DIR/slurm.conf"
LOG_DIR=/var/log/slurm
NODE="$(hostname -s)"
PARTITION="${SLURM_TEST_PARTITION:-main}"

log() { printf '[slurm-start] %s\n' "$*"; }
die() { printf '[slurm-start] ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages and starts daemons)"

# --- 1. packages -------------------------------------------------------------------------
missing=()
for cmd in munged slurmctld slurmd sbatch squeue sacct; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing slurm-wlm and munge (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

# --- 2. configuration --------------------------------------------------------------------
if [ -f "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
    die "$CONF exists and was not written by this script; not touching a real cluster's config"
fi
# `slurmd -C` prints this machine's NodeName line (CPUs, Boards, Sockets, Cores, Threads,
# RealMemory). Keep its topology, name the node after `hostname -s`, pin its address to
# 127.0.0.1, and leave 1 GiB of the memory to the OS and the daemons.
hw="$(slurmd -C | head -n1)"
real_mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")"
[ -n "$real_mem" ] || die "could not read RealMemory from 'slurmd -C': $hw"
mem=$(( real_mem > 2048 ? real_mem - 1024 : real_mem ))
topology="$(sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=[0-9]*//' <<<"$hw")"

new_conf="$(mktemp)"
trap 'rm -f "$new_conf"' EXIT
cat >"$new_conf" <<EOF
$MARKER
# A one-node test cluster on localhost; see the header of that script.
ClusterName=embedlab
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
# no cgroups: processes are tracked through /proc, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
# no slurmdbd: sacct cannot answer; finished jobs stay in squeue --states=all for MinJobAge
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG_DIR/jobcomp.log
MinJobAge=900
SlurmctldTimeout=60
SlurmdTimeout=60
InactiveLimit=0
KillWait=10
Waittime=0
NodeName=$NODE NodeAddr=127.0.0.1 $topology RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
conf_changed=0
if ! cmp -s "$new_conf" "$CONF" 2>/dev/null; then
    mkdir -p "$CONF_DIR"
    install -m 0644 "$new_conf" "$CONF"
    conf_changed=1
    log "wrote $CONF (node $NODE: $topology RealMemory=$mem)"
fi

mkdir -p "$LOG_DIR" /var/spool/slurmctld /var/spool/slurmd /run/munge /var/log/munge /var/lib/munge
chown slurm:slurm "$LOG_DIR" /var/spool/slurmctld
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 0755 /run/munge
touch "$LOG_DIR/jobcomp.log" && chown slurm:slurm "$LOG_DIR/jobcomp.log"
if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    mungekey --create --keyfile /etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi

running() { pgrep -x "$1" >/dev/null 2>&1; }

# --- 3. daemons --------------------------------------------------------------------------
if ! running munged; then
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 20); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
munge -n | unmunge >/dev/null || die "munge does not work (see /var/log/munge/munged.log)"

if [ "$conf_changed" = 1 ] && { running slurmctld || running slurmd; }; then
    log "configuration changed: restarting the SLURM daemons"
    "$(dirname "$0")/stop-cluster.sh" --keep-munge
fi
if ! running slurmctld; then
    log "starting slurmctld"
    /usr/sbin/slurmctld
fi
if ! running slurmd; then
    log "starting slurmd"
    /usr/sbin/slurmd
fi

log "waiting for node $NODE to be idle"
state=""
for _ in $(seq 60); do
    state="$(sinfo --noheader --nodes="$NODE" --format=%T 2>/dev/null | head -n1 || true)"
    case "$state" in
        idle | mixed | allocated) break ;;
        down* | drain* | fail*)
            scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 1
done
case "$state" in
    idle | mixed | allocated) ;;
    *) die "node $NODE is '${state:-unknown}' after 60 s; see $LOG_DIR/slurmctld.log and $LOG_DIR/slurmd.log" ;;
esac
sinfo
log "cluster up: node $NODE is $state, partition $PARTITION"
