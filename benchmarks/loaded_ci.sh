#!/usr/bin/env bash
# CI on a busy machine: `.ci/run` (the README's test command) on a fresh clone, beside CPU-bound
# processes, several times in a row at one commit, stopping at the first failure. The suite
# must pass where CI machines share their cores; this shows it does, or which test did not.
#
#   benchmarks/loaded_ci.sh [--commit REV] [--runs 3] [--hogs 2] [--repo PATH] [--work DIR]
#
# Each run clones REPO (default: this checkout) into DIR/run-N, checks out REV (default HEAD),
# starts HOGS busy loops (`while :; do :; done`), runs `CI=true .ci/run` with verbose pytest that
# stops at its first failed test (`--maxfail=1`: each xdist worker first ends the files it holds)
# into DIR/run-N.log, and stops the loops. One line a run goes to DIR/summary.txt and to the
# terminal: the commit, the exit status, the seconds taken, and pytest's result lines. The
# set-up builds each clone's own virtual environment; the llama.cpp wheel and pip caches are
# shared, as the Makefile's cache allows. Nothing else should run beside it.
set -uo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=HEAD runs=3 hogs=2 work=${TMPDIR:-/tmp}/voicebench-loaded-ci
while [ $# -gt 0 ]; do
  case $1 in
    --commit) commit=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --repo) repo=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | cut -c3-; exit 0 ;;
    *) echo "loaded_ci.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
commit=$(git -C "$repo" rev-parse --short "$commit") || exit 2
mkdir -p "$work"
summary=$work/summary.txt
echo "$(date -u +%FT%TZ) $runs runs of .ci/run at $commit beside $hogs busy loops" | tee -a "$summary"

pids=() run_pid=
stop_hogs() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; pids=(); }
# .ci/run leads a process group of its own: stopping this script stops all it started
stop_run() { [ -n "$run_pid" ] && kill -- "-$run_pid" 2>/dev/null; run_pid=; }
trap 'stop_run; stop_hogs' EXIT
trap 'exit 143' INT TERM

for n in $(seq 1 "$runs"); do
  dir=$work/run-$n log=$work/run-$n.log
  rm -rf "$dir"
  git clone -q "$repo" "$dir" && git -C "$dir" checkout -q "$commit" || exit 2
  for _ in $(seq 1 "$hogs"); do sh -c 'while :; do :; done' & pids+=($!); done
  start=$(date +%s)
  # the series ends at its first failure: pytest stops there too (once each worker has ended
  # the test files already handed to it), so its traceback comes sooner
  (cd "$dir" && PYTEST_ADDOPTS="-v --maxfail=1" CI=true exec setsid bash .ci/run) >"$log" 2>&1 &
  run_pid=$!
  wait "$run_pid"
  rc=$?
  run_pid=
  stop_hogs
  echo "run $n at $commit: rc $rc in $(( $(date +%s) - start )) s ($log)" | tee -a "$summary"
  grep -E '^=+ .*(passed|failed|error).* =+$|^(FAILED|ERROR) ' "$log" | tee -a "$summary"
  if [ "$rc" != 0 ]; then echo "stopped at run $n" | tee -a "$summary"; exit "$rc"; fi
done
echo "$runs of $runs passed at $commit" | tee -a "$summary"
