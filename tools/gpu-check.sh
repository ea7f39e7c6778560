#!/bin/sh
# Hardening checks that need a GPU, for the GPU machine. Assumes R is on the
# PATH, wtheta is installed with CUDA (R CMD INSTALL .) and, for the tests,
# testthat is installed. From the repository root, for example in one device
# run:
#   . .carry/use-r-bundle.sh .carry/r-bundle.tar.xz && R CMD INSTALL . &&
#     WTHETA_DATA=$PWD/.carry/data sh tools/gpu-check.sh
#
#   sh tools/gpu-check.sh [sanitize] [tests] [memory]    (default: all three)
#
# sanitize: compute-sanitizer with memcheck (leak check on), racecheck,
#           synccheck and initcheck over tools/gpu-subset.R
# tests:    the fault, Ctrl-C, concurrency (two R processes on one GPU) and
#           hostile-input tests, GPU cases included
# memory:   bench/memory.R on cuda, 1000 calls, then 200 with faults
# Prints one summary line per step at the end; exit status 1 if any failed.
# Every step has a time limit (STEP_LIMIT seconds, default 240).
set -u
cd "$(dirname "$0")/.."
steps=${*:-"sanitize tests memory"}
limit=${STEP_LIMIT:-240}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
summary="$out/gpu-check-summary.txt"
: > "$summary"
failed=0

note() { echo "$*" | tee -a "$summary"; }

# run NAME COMMAND...: runs with a time limit, log in $out/NAME.log
run() {
  name=$1; shift
  t0=$(date +%s)
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  t1=$(date +%s)
  echo "---- $name (exit $rc, $((t1 - t0)) s): last lines"
  tail -15 "$out/$name.log"
  return $rc
}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
Rscript -e 'suppressMessages(library(wtheta)); print(wtheta_backends()[, 1:6])'

case " $steps " in *" sanitize "*)
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -z "$cs" ]; then
    note "compute-sanitizer: not found"
    failed=1
  else
    for tool in memcheck racecheck synccheck initcheck; do
      extra=""
      [ "$tool" = memcheck ] && extra="--leak-check full"
      [ "$tool" = racecheck ] && extra="--racecheck-report all"
      # shellcheck disable=SC2086
      run "sanitizer-$tool" "$cs" --tool "$tool" $extra --error-exitcode 1 \
        --target-processes all --print-limit 30 \
        Rscript tools/gpu-subset.R
      rc=$?
      errs=$(grep -h "ERROR SUMMARY" "$out/sanitizer-$tool.log" | tail -1)
      leaks=$(grep -h "LEAK SUMMARY\|leaked" "$out/sanitizer-$tool.log" | head -3 | tr '\n' ' ')
      subset=$(grep -h "^gpu subset:" "$out/sanitizer-$tool.log" | tail -1)
      note "compute-sanitizer $tool: exit $rc; ${errs:-no ERROR SUMMARY line}; ${subset:-subset did not finish}${leaks:+; $leaks}"
      [ "$rc" = 0 ] || failed=1
    done
  fi
;; esac

case " $steps " in *" tests "*)
  run tests Rscript -e '
    suppressMessages({library(testthat); library(wtheta)})
    res <- as.data.frame(test_dir("tests/testthat", package = "wtheta",
      load_package = "installed", reporter = "summary", stop_on_failure = FALSE,
      filter = "faults|concurrency|hostile"))
    failed <- sum(res$failed) + sum(res$error)
    print(res[, c("file", "test", "nb", "failed", "skipped", "real")], right = FALSE)
    cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", sum(res$passed),
                failed, sum(res$skipped)))
    quit(status = as.integer(failed > 0))'
  rc=$?
  note "tests (faults, Ctrl-C, concurrency, hostile): exit $rc; $(grep -h '^testthat:' "$out/tests.log" | tail -1)"
  [ "$rc" = 0 ] || failed=1
;; esac

case " $steps " in *" memory "*)
  run memory Rscript bench/memory.R cuda 1000
  rc=$?
  note "memory, cuda, 1000 calls: exit $rc; $(grep -h 'VmRSS growth\|GPU used memory growth' "$out/memory.log" | tr '\n' ' ')"
  [ "$rc" = 0 ] || failed=1
  run memory-faults Rscript bench/memory.R cuda 200 faults
  rc=$?
  note "memory, cuda, 200 calls, every other failing: exit $rc; $(grep -h 'VmRSS growth\|GPU used memory growth\|failed calls' "$out/memory-faults.log" | tr '\n' ' ')"
  [ "$rc" = 0 ] || failed=1
;; esac

echo
echo "== summary (logs in $out)"
cat "$summary"
exit "$failed"
