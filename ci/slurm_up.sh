#!/usr/bin/env bash
# Bring up a one-node SLURM cluster on localhost for tests/workflow/test_slurm.py (Debian bookworm,
# slurm-wlm + munge, no slurmdbd, no systemd needed).  Run as root:  ci/slurm_up.sh
# Installs slurm-wlm and munge with apt if absent, writes /etc/slurm/slurm.conf (only if there is
# none or it is the one this script wrote), starts munged, slurmctld and slurmd unless they already
# run, and records the PID of each daemon it started, one "name pid" per line, in $SLURM_CI_PIDFILE
# (default /tmp/unlearn-audit-slurm-ci.pids); ci/slurm_down.sh stops exactly those.  Running it
# again while the cluster is up starts nothing.
set -euo pipefail

PIDFILE=${SLURM_CI_PIDFILE:-/tmp/unlearn-audit-slurm-ci.pids}
CONF=/etc/slurm/slurm.conf
MARKER="# written by unlearn-audit ci/slurm_up.sh"
WAIT_S=${SLURM_CI_WAIT_S:-60}

die() { echo "slurm_up.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "must run as root (it installs packages and starts daemons); try: sudo $0"

# a PID is alive and is the named daemon (guards against a recycled PID)
is_daemon() { [[ -n "${2:-}" && -r /proc/$2/comm && $(cat "/proc/$2/comm") == "$1" ]]; }
pid_of_file() { [[ -s $1 ]] && tr -dc '0-9' < "$1" || true; }
record() { echo "$1 $2" >> "$PIDFILE"; echo "started $1 (pid $2)"; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "timed out after ${limit}s waiting for $what (see /var/log/slurm/)"
}
node_idle() { sinfo -h -n "$HOST" -o %t | grep -Eqx 'idle|mix|alloc'; }

# 1. packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null
  }
fi
[[ -s /etc/munge/munge.key ]] || die "/etc/munge/munge.key is missing (the munge package creates it)"

# 2. configuration: one node, one partition "debug", localhost only, no accounting daemon
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)  # RealMemory: 90% of RAM (MB)
if [[ -e $CONF ]] && ! head -1 "$CONF" | grep -qxF "$MARKER"; then
  die "$CONF exists and was not written by this script; refusing to overwrite it"
fi
mkdir -p /etc/slurm
cat > "$CONF.tmp" <<CONFEOF
$MARKER
ClusterName=ci
SlurmctldHost=${HOST}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# finished jobs stay visible to squeue for 5 min (the status command without slurmdbd)
MinJobAge=300
InactiveLimit=0
KillWait=30
SlurmdTimeout=300
NodeName=${HOST} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=${MEM} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONFEOF
mv "$CONF.tmp" "$CONF"
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown slurm:slurm /var/spool/slurmctld /var/log/slurm
chown munge:munge /run/munge
touch "$PIDFILE"

# 3. daemons, each only if it does not run already
# start_daemon NAME PIDFILE LIMIT [READY...]: unless NAME runs, start /usr/sbin/NAME (munged as the
# munge user), wait up to LIMIT s for the READY command (if given) and for its pid file, record it
start_daemon() {
  local name=$1 pidfile=$2 limit=$3 pid; shift 3
  pid=$(pid_of_file "$pidfile")
  if is_daemon "$name" "$pid"; then
    echo "$name already runs (pid $pid)"
    return
  fi
  rm -f "$pidfile"
  if [[ $name == munged ]]; then runuser -u munge -- /usr/sbin/munged; else "/usr/sbin/$name"; fi
  if (( $# )); then wait_for "$limit" "$name" "$@"; fi
  wait_for 10 "$name pid file" test -s "$pidfile"
  record "$name" "$(pid_of_file "$pidfile")"
}
start_daemon munged /run/munge/munged.pid 10
munge -n | unmunge >/dev/null || die "munge does not authenticate"
start_daemon slurmctld /run/slurmctld.pid "$WAIT_S" sh -c 'scontrol ping | grep -q UP'
start_daemon slurmd /run/slurmd.pid 10
wait_for "$WAIT_S" "node $HOST to become idle" node_idle
sinfo
