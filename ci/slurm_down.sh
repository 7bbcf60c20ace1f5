#!/usr/bin/env bash
# Stop exactly the SLURM daemons that ci/slurm_up.sh started: the PIDs recorded in $SLURM_CI_PIDFILE
# (default /tmp/unlearn-audit-slurm-ci.pids), newest first, each only if that PID is still the named
# daemon.  Nothing else is signalled.  Running it again, or without a PID file, does nothing.
set -euo pipefail

PIDFILE=${SLURM_CI_PIDFILE:-/tmp/unlearn-audit-slurm-ci.pids}
if [[ ! -s $PIDFILE ]]; then
  echo "slurm_down.sh: no daemons recorded in $PIDFILE; nothing to stop"
  rm -f "$PIDFILE"
  exit 0
fi

is_daemon() { [[ -r /proc/$2/comm && $(cat "/proc/$2/comm") == "$1" ]]; }
status=0
while read -r name pid; do
  [[ -n ${name:-} && ${pid:-} =~ ^[0-9]+$ ]] || continue
  if ! is_daemon "$name" "$pid"; then
    echo "$name (pid $pid) is not running"
    continue
  fi
  kill -TERM "$pid"
  for _ in $(seq 150); do is_daemon "$name" "$pid" || break; sleep 0.1; done
  if is_daemon "$name" "$pid"; then
    echo "$name (pid $pid) ignored SIGTERM for 15 s; sending SIGKILL"
    kill -KILL "$pid" || true
    sleep 0.5
  fi
  if is_daemon "$name" "$pid"; then
    echo "could not stop $name (pid $pid)" >&2
    status=1
    continue
  fi
  echo "stopped $name (pid $pid)"
  case $name in  # a stale pid file makes the next slurm_up.sh or a package removal think it still runs
    slurmctld) rm -f /run/slurmctld.pid ;;
    slurmd) rm -f /run/slurmd.pid ;;
    munged) rm -f /run/munge/munged.pid ;;
  esac
done < <(tac "$PIDFILE")
[[ $status == 0 ]] && rm -f "$PIDFILE"
exit $status
