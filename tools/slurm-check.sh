#!/bin/sh
# wtheta on a real batch scheduler: a single-node SLURM (Debian's slurm-wlm
# and munge) started on this machine in a temporary directory, then
# wtheta(..., distribute = TRUE) through future.batchtools::batchtools_slurm
# with the template shipped in inst/batchtools/slurm.tmpl. Checks that the
# histograms and w are identical to a local run (also after a batch job is
# killed mid-block or hangs past `timeout` and is retried, and when resumed
# from a checkpoint), and prints the jobs run and the scheduler's overhead.
#
#   sh tools/slurm-check.sh       (as root; wtheta installed where the
#                                  batch jobs' Rscript finds it: the site
#                                  library, or a library in R_LIBS)
#
# Skips (exit 0, with the reason) where SLURM cannot start: not root, the
# packages missing and not installable, a daemon that does not come up.
# Everything (configuration, state, logs, munge key and socket) lives in
# one temporary directory; the daemons are started directly (no systemd)
# and stopped at the end. WTHETA_SLURM_KEEP=1 keeps the directory.
set -eu

skip() {
  echo "SLURM check skipped: $*"
  exit 0
}

[ "$(id -u)" = 0 ] || skip "not root (slurmd and slurmctld run as root here)"
for p in slurm-wlm munge r-cran-future.batchtools; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    echo "installing $p"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "$p" > /dev/null 2>&1 ||
      skip "$p is not installed and apt-get could not install it"
  fi
done
for b in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$b" > /dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
    skip "$b not found"
done
PATH="$PATH:/usr/sbin"

here=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/wtheta-slurm.XXXXXX)
chmod 700 "$T"
mkdir -p "$T/state" "$T/spool" "$T/log" "$T/munge" "$T/work"
chmod 700 "$T/munge"

cleanup() {
  # jobs still running (a failed check) are cancelled before the daemons
  # stop: their slurmstepd would outlive slurmd
  if [ -n "${SLURM_CONF:-}" ]; then
    squeue -h -o %i 2> /dev/null | while read -r j; do scancel "$j"; done
    sleep 2
  fi
  for pf in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
    if [ -s "$pf" ]; then kill "$(cat "$pf")" 2> /dev/null || true; fi
  done
  sleep 1
  for pf in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
    if [ -s "$pf" ]; then kill -9 "$(cat "$pf")" 2> /dev/null || true; fi
  done
  if [ "${WTHETA_SLURM_KEEP:-0}" = 1 ]; then
    echo "SLURM directory kept: $T"
  else
    rm -rf "$T"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail_daemon() {
  echo "---- $1 log:"
  tail -20 "$2" 2> /dev/null || true
  skip "$1 did not start (log above)"
}

# munge: a fresh key, its own socket
if command -v mungekey > /dev/null 2>&1 || [ -x /usr/sbin/mungekey ]; then
  mungekey --create --keyfile="$T/munge/munge.key" > /dev/null 2>&1
else
  dd if=/dev/urandom of="$T/munge/munge.key" bs=1 count=1024 2> /dev/null
fi
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" \
  --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" \
  > "$T/log/munged.out" 2>&1 || fail_daemon munged "$T/log/munged.log"

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
# ports out of the way of a site's SLURM
port=$(( 20000 + $$ % 10000 ))
cat > "$T/slurm.conf" << EOF
ClusterName=wtheta-check
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$(( port + 1 ))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
SLURM_CONF="$T/slurm.conf"
export SLURM_CONF
# batchtools lists a user's jobs with squeue --user=$USER: with USER unset
# (containers, cron) a running job looks finished and is called expired
USER=${USER:-$(id -un)}
export USER

slurmctld -f "$SLURM_CONF" -i > "$T/log/slurmctld.out" 2>&1 ||
  fail_daemon slurmctld "$T/log/slurmctld.log"
slurmd -f "$SLURM_CONF" -N "$host" > "$T/log/slurmd.out" 2>&1 ||
  fail_daemon slurmd "$T/log/slurmd.log"
up=0
for i in $(seq 1 30); do
  if sinfo -h -N -o "%T" 2> /dev/null | grep -Eq "^(idle|mixed|allocated)"; then
    up=1; break
  fi
  sleep 1
done
[ "$up" = 1 ] || { cat "$T/log/slurmctld.out" "$T/log/slurmd.out"; \
  fail_daemon "slurmd (node not idle after 30 s)" "$T/log/slurmd.log"; }
echo "SLURM $(sinfo -V | sed 's/^slurm //') up on $host: $cpus CPUs, $T"

cd "$T/work"
Rscript "$here/tools/slurm-check.R"
echo "slurmctld allocated $(grep -c 'Allocate JobId' "$T/log/slurmctld.log") jobs"
# the hung job was cancelled: nothing may be left in the queue
for i in $(seq 1 15); do
  [ "$(squeue -h | wc -l)" = 0 ] && break
  sleep 1
done
if [ "$(squeue -h | wc -l)" != 0 ]; then
  squeue
  echo "SLURM check failed: jobs left in the queue"
  exit 1
fi
echo "queue empty: the hung job was cancelled"
