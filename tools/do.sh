#!/bin/sh
# Set-up and everyday tasks for wtheta on a Debian machine. Each task first
# installs what is missing (R and R packages from Debian's archive through
# apt: CRAN is not needed), then builds and installs the package.
#
#   sh tools/do.sh demo    simulate a catalog, estimate w(theta), write
#                          output/wtheta-demo.csv and output/wtheta-demo.png
#   sh tools/do.sh test    the testthat suite, R CMD check --as-cran, the
#                          SLURM check (tools/slurm-check.sh: skipped with
#                          its reason where SLURM cannot start), then the
#                          suite under ASan + UBSan and a subset under
#                          valgrind (tools/sanitize.sh)
#   sh tools/do.sh install just install the package
#   sh tools/do.sh site    the documentation site, offline, into docs/ (not
#                          committed) with Debian's r-cran-pkgdown, then
#                          tools/site-check.sh renders it in headless
#                          Chromium (also run by `test`)
#
# Environment: WTHETA_CUDA=0 builds without CUDA; WTHETA_DATA points the
# tests at the reference catalogs (default: ../shared/data when present);
# WTHETA_SANITIZE_CI=0 leaves out the sanitizer run of `test`,
# WTHETA_SLURM_CI=0 its SLURM check.
set -eu
cd "$(dirname "$0")/.."
task=${1:-demo}

# checkbashisms (devscripts) and qpdf let R CMD check --as-cran run complete
debs="r-base-dev r-cran-testthat r-cran-knitr r-cran-rmarkdown r-cran-roxygen2 pandoc devscripts qpdf"
# valgrind for the memory check of `test`; tibble for a hostile-input test;
# future for counting through future plans, future.batchtools, slurm-wlm
# and munge for the SLURM check of `test`; ggplot2 for autoplot()
debs="$debs valgrind r-cran-tibble r-cran-future r-cran-ggplot2"
debs="$debs r-cran-future.batchtools slurm-wlm munge"
# parallelly for the default thread count (cores granted by cgroups, Slurm, PBS)
debs="$debs r-cran-parallelly"
# optparse for the command line; progressr for progress; pkgdown and
# chromium (with python3) for the site and its check
debs="$debs r-cran-optparse r-cran-progressr r-cran-pkgdown chromium python3"
# cfitsio (found by configure through pkg-config) for FITS catalogs;
# data.table and python3-astropy for bench/io.R's side-by-side readers and
# tools/make-fits-fixtures.py (the tests do not need them)
debs="$debs libcfitsio-dev pkg-config r-cran-data.table python3-astropy"
# chealpix (found by configure) for HEALPix maps; python3-healpy for
# tools/make-healpix-fixtures.py (the tests read its committed output)
debs="$debs libchealpix-dev python3-healpy"
# hdf5r (suggested) for HDF5 catalogs in read_catalog(), as TXPipe writes
# them; python3-h5py for tools/make-hdf5-fixtures.py (the tests read its
# committed output, and skip the HDF5 tests without hdf5r)
debs="$debs r-cran-hdf5r python3-h5py"
# bit64 (suggested): FITS K columns (64-bit IDs such as DESI's TARGETID)
# read exactly as integer64; without it, read_catalog() gives doubles when
# every value is within 2^53 and an error otherwise
debs="$debs r-cran-bit64"

install_missing() {
  missing=""
  for p in $debs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "installing:$missing"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
}

# the first library R can write to (the site library as root), else the
# user library, created if need be
r_library() {
  Rscript -e 'p <- .libPaths(); w <- p[file.access(p, 2) == 0]
    if (!length(w)) { w <- Sys.getenv("R_LIBS_USER"); dir.create(w, recursive = TRUE, showWarnings = FALSE) }
    cat(w[1])'
}

install_package() {
  lib=$(r_library)
  echo "installing wtheta into $lib"
  R CMD INSTALL --preclean --no-multiarch --library="$lib" . > install.log 2>&1 ||
    { cat install.log; exit 1; }
  grep "^configure:" install.log || true
  rm -f install.log
  ./cleanup
}

# the site into docs/, offline: no CRAN look-ups (pkgdown.internet), the
# favicons from pkgdown/favicon, Bootstrap 5 from the installed bslib
build_site() {
  echo "== pkgdown site into docs/"
  rm -rf docs
  WTHETA_DATA= Rscript -e 'options(pkgdown.internet = FALSE)
    pkgdown::build_site(".", install = FALSE, new_process = FALSE,
                        preview = FALSE)' > site.log 2>&1 ||
    { tail -40 site.log; rm -f site.log; exit 1; }
  rm -f site.log
  echo "== site check (tools/site-check.sh)"
  sh tools/site-check.sh docs
}

data_dir() {
  if [ -n "${WTHETA_DATA:-}" ]; then echo "$WTHETA_DATA"
  elif [ -d ../shared/data ]; then (cd ../shared/data && pwd)
  fi
}

case "$task" in
  install)
    install_missing
    install_package
    ;;
  site)
    install_missing
    install_package
    build_site
    ;;
  demo)
    install_missing
    install_package
    Rscript inst/scripts/wtheta-demo.R output
    ;;
  test)
    install_missing
    install_package
    WTHETA_DATA=$(data_dir)
    export WTHETA_DATA
    echo "== testthat (reference catalogs: ${WTHETA_DATA:-absent})"
    Rscript -e 'res <- as.data.frame(testthat::test_dir("tests/testthat",
        package = "wtheta", load_package = "installed", reporter = "summary",
        stop_on_failure = FALSE))
      failed <- sum(res$failed) + sum(res$error)
      cat(sprintf("%d passed, %d failed, %d skipped\n", sum(res$passed),
                  failed, sum(res$skipped)))
      quit(status = failed > 0)'
    echo "== R CMD check --as-cran"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    here=$(pwd)
    (cd "$work" && R CMD build --no-manual "$here" > build.log 2>&1) ||
      { cat "$work/build.log"; exit 1; }
    # offline machines: no CRAN incoming checks, no remote look-ups
    (cd "$work" &&
      _R_CHECK_CRAN_INCOMING_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false \
      _R_CHECK_FUTURE_FILE_TIMESTAMPS_=false _R_CHECK_FORCE_SUGGESTS_=false \
      R CMD check --as-cran --no-manual wtheta_*.tar.gz) || {
        cat "$work"/wtheta.Rcheck/00install.out 2>/dev/null | tail -30
        cat "$work"/wtheta.Rcheck/tests/testthat.Rout.fail 2>/dev/null | tail -60
        exit 1; }
    if grep -q "WARNING" "$work/wtheta.Rcheck/00check.log"; then
      echo "R CMD check gave a WARNING"; exit 1
    fi
    echo "R CMD check: no errors, no warnings"
    # the documentation site and its check in headless Chromium (about 4
    # minutes on 2 cores)
    build_site
    # wtheta through future.batchtools on a single-node SLURM started here
    # (about 2 minutes on 2 cores); it skips where SLURM cannot start
    if [ "${WTHETA_SLURM_CI:-1}" != 0 ]; then
      echo "== SLURM (sh tools/slurm-check.sh)"
      sh tools/slurm-check.sh
    fi
    # the suite again with the C code under ASan + UBSan, and a subset under
    # valgrind (about 50 s each on 2 cores; WTHETA_SANITIZE_CI=0 skips
    # them). The reference-catalog tests only repeat the same code on 10^5
    # points: left out here.
    if [ "${WTHETA_SANITIZE_CI:-1}" != 0 ]; then
      echo "== ASan + UBSan (sh tools/sanitize.sh asan)"
      WTHETA_DATA= sh tools/sanitize.sh asan
      echo "== valgrind (sh tools/sanitize.sh valgrind)"
      sh tools/sanitize.sh valgrind
    fi
    ;;
  *)
    echo "usage: sh tools/do.sh demo|test|install|site" >&2
    exit 2
    ;;
esac
