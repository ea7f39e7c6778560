#!/bin/sh
# Memory and undefined-behaviour checks of the C core (Linux, gcc).
#
#   sh tools/sanitize.sh asan [FILTER]   build with AddressSanitizer and
#       UndefinedBehaviorSanitizer, run the testthat suite (or the test files
#       matching the regular expression FILTER) under them
#   sh tools/sanitize.sh valgrind [FILTER]   run tools/sanitize-subset.R
#       (a representative subset of what the tests exercise, small enough for
#       valgrind) under R -d "valgrind --leak-check=full --error-exitcode=1";
#       FILTER instead runs those test files under valgrind
#
# Both build a private copy of the package (CUDA off: WTHETA_CUDA=0; with
# cfitsio when pkg-config finds it, so the FITS reader is checked) into a
# temporary library, so the worktree and the installed package are left
# alone, and both fail (exit status 1) on the first error they find.
#
# How R runs under ASan: Debian's R is not built with ASan, so only the
# package's C code is instrumented, through a private Makevars file that
# R_MAKEVARS_USER points at:
#     CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined ...
#     LDFLAGS = -fsanitize=address,undefined
# and R itself is started with the ASan runtime preloaded, which ASan needs
# to come first in the list of loaded libraries:
#     LD_PRELOAD=$(gcc -print-file-name=libasan.so) R ...
# ASAN_OPTIONS=detect_leaks=0 because R does not free its own memory at
# exit (leaks are valgrind's job below: it tells which library allocated);
# UBSAN_OPTIONS=halt_on_error=1 with -fno-sanitize-recover makes any
# undefined behaviour fatal. The package is installed with --no-test-load
# since the install step runs without the preloaded runtime.
#
# valgrind: only definite leaks count as errors (--errors-for-leak-kinds=
# definite): OpenMP's pool threads live until R exits, and their thread-local
# storage shows as "possibly lost". tools/valgrind-cfitsio.supp hides one
# read of an uninitialised value inside cfitsio itself, on a garbled
# TFIELDS card (a hostile fixture), which wtheta cannot avoid. A definite leak of R itself would fail the
# run too; the summary says how many definite-leak records name wtheta.
set -eu
# tests that merely repeat a code path on a huge input skip themselves
WTHETA_SANITIZE=1
export WTHETA_SANITIZE
cd "$(dirname "$0")/.."
here=$(pwd)
mode=${1:-}
filter=${2:-}
case "$mode" in
  asan|valgrind) ;;
  *) echo "usage: sh tools/sanitize.sh asan|valgrind [FILTER]" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/wtheta-$mode.XXXXXX")
if [ -z "${WTHETA_KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/pkg" "$work/lib"
# a copy of the package without git metadata or build leftovers
tar -C "$here" --exclude=.git --exclude=.carry --exclude=output \
  --exclude='src/*.o' --exclude='src/*/*.o' --exclude='src/*.so' --exclude=src/Makevars -cf - . |
  tar -C "$work/pkg" -xf -

if [ "$mode" = asan ]; then
  cat > "$work/Makevars" <<'EOF'
SAN = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow -fno-omit-frame-pointer
CFLAGS = -g -O1 $(SAN)
CXXFLAGS = -g -O1 $(SAN)
LDFLAGS = -fsanitize=address,undefined
EOF
else
  # valgrind wants plain code with debug information
  cat > "$work/Makevars" <<'EOF'
CFLAGS = -g -O2 -fno-omit-frame-pointer
EOF
fi

echo "== building wtheta ($mode) into $work/lib"
t0=$(date +%s)
(cd "$work/pkg" &&
  WTHETA_CUDA=0 R_MAKEVARS_USER="$work/Makevars" \
  R CMD INSTALL --preclean --no-multiarch --no-test-load --library="$work/lib" . \
  > "$work/install.log" 2>&1) || { cat "$work/install.log"; exit 1; }
grep -q -- "-fsanitize=address" "$work/install.log" || [ "$mode" != asan ] ||
  { echo "the sanitizer flags did not reach the compiler"; cat "$work/install.log"; exit 1; }
# the FITS reader (src/io/fits.c) is checked only when built with cfitsio
if grep -q "cfitsio: yes" "$work/install.log"; then
  echo "== built with cfitsio: the FITS tests and fixtures run too"
else
  echo "== WARNING: built without cfitsio (apt-get install libcfitsio-dev pkg-config): FITS code not checked"
fi

# R code run by both modes: the testthat files matching FILTER (all when
# empty), reporting a one-line summary; quits with status 1 on a failure
cat > "$work/run-tests.R" <<EOF
suppressMessages({library(testthat); library(wtheta)})
res <- as.data.frame(test_dir("$here/tests/testthat", package = "wtheta",
  load_package = "installed", reporter = "summary", stop_on_failure = FALSE,
  filter = if (nzchar("$filter")) "$filter" else NULL))
failed <- sum(res\$failed) + sum(res\$error)
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", sum(res\$passed),
            failed, sum(res\$skipped)))
quit(status = as.integer(failed > 0))
EOF

status=0
if [ "$mode" = asan ]; then
  libasan=$(gcc -print-file-name=libasan.so)
  [ -f "$libasan" ] || { echo "libasan.so not found (gcc -print-file-name)"; exit 1; }
  echo "== testthat under ASan + UBSan (LD_PRELOAD=$libasan)"
  R_LIBS="$work/lib${R_LIBS:+:$R_LIBS}" LD_PRELOAD="$libasan" \
    ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:exitcode=99:log_path=$work/asan" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98:log_path=$work/ubsan" \
    Rscript --vanilla "$work/run-tests.R" > "$work/tests.log" 2>&1 || status=$?
  tail -40 "$work/tests.log"
  reports=$(ls "$work"/asan.* "$work"/ubsan.* 2>/dev/null || true)
  if [ -n "$reports" ]; then
    for r in $reports; do echo "-- $r"; head -60 "$r"; done
    status=1
  fi
  grep -q "^testthat: " "$work/tests.log" || status=1
  t1=$(date +%s)
  if [ "$status" = 0 ]; then
    echo "ASan + UBSan: clean (no reports), tests passed; $((t1 - t0)) s in all"
  else
    echo "ASan + UBSan: FAILED (status $status); $((t1 - t0)) s in all"
  fi
  exit "$status"
fi

# valgrind
command -v valgrind > /dev/null 2>&1 || {
  echo "installing valgrind"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q > /dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends valgrind > /dev/null
}
if [ -n "$filter" ]; then script="$work/run-tests.R"
else script="$here/tools/sanitize-subset.R"; fi
echo "== $(basename "$script") under valgrind"
R_LIBS="$work/lib${R_LIBS:+:$R_LIBS}" \
  R -d "valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite --num-callers=30 --suppressions=$here/tools/valgrind-cfitsio.supp --log-file=$work/vg.%p" \
  --vanilla --no-echo -f "$script" > "$work/run.log" 2>&1 || status=$?
tail -20 "$work/run.log"
# R starts a shell and helpers too: keep the logs of R processes only
errors=0
wt_leaks=0
for f in "$work"/vg.*; do
  grep -q "ERROR SUMMARY" "$f" || continue
  grep -q "Command: .*exec/R" "$f" || continue
  n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$f" | tail -1)
  errors=$((errors + ${n:-0}))
  echo "-- $(basename "$f"):"
  sed -n '/LEAK SUMMARY/,/suppressed:/p; /ERROR SUMMARY/p' "$f" | sed 's/^==[0-9]*== /   /'
  # a definitely-lost record: from its header to the next blank record line
  k=$(awk '/definitely lost in loss record/ {on = 1; rec = ""}
           on {rec = rec "\n" $0}
           on && /^==[0-9]*== $/ {on = 0; if (rec ~ /wtheta|wt_/) n++}
           END {print n + 0}' "$f")
  wt_leaks=$((wt_leaks + k))
  if [ "${n:-0}" != 0 ]; then
    awk '/^==[0-9]*== [A-Z].*(Invalid|uninitialised|Mismatched|overlap|Syscall)/ {on = 1}
         on {print} on && /^==[0-9]*== $/ {on = 0}' "$f" | head -80
  fi
done
[ "$errors" = 0 ] || status=1
[ "$wt_leaks" = 0 ] || status=1
t1=$(date +%s)
echo "valgrind: $errors errors, $wt_leaks definite leak record(s) from wtheta; R exit status $status; $((t1 - t0)) s in all"
exit "$status"
