#!/bin/sh
# Builds bench/kernel/kernel.c against one or more builds of a CUDA engine
# source and runs each: for comparing kernel variants on a GPU machine
# without R.
#
#   sh bench/kernel/kernel.sh DATA_DIR REPS VARIANT...
#
# A VARIANT is NAME=SOURCE or NAME=SOURCE:NVCC_FLAGS, for example
#   base=src/cuda/entry.cu  ni8=src/cuda/entry.cu:-DWT_CUDA_NI=8
# (the src/cuda/entry.cu of an older tree builds against the same C core,
# so one run can time the engine before and after a change). The
# plan_*.cxx (or an older tree's plan.cxx) beside SOURCE (the host
# planning) are built with the C++ compiler and the variant's -D flags, and
# linked in.
# Builds run in parallel; each run prints kernel.c's table (writes
# $OUT/NAME.txt and the build log with ptxas's resource report there too,
# when OUT is set). Environment: NVCC (default nvcc), WTHETA_CUDA_ARCH
# (one architecture, default 90); NCU=1 also profiles one fast-kernel
# launch (the fourth, about 5 x 10^9 pairs) of each variant with Nsight
# Compute, and SASS=1 writes the machine code to $OUT/NAME.sass and counts
# its register spills (cuobjdump).
set -u
cd "$(dirname "$0")/../.."
data=${1:?usage: sh bench/kernel/kernel.sh DATA_DIR REPS VARIANT...}
reps=${2:?usage: sh bench/kernel/kernel.sh DATA_DIR REPS VARIANT...}
shift 2
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
nvcc=${NVCC:-nvcc}
arch=${WTHETA_CUDA_ARCH:-90}
cudalib=$(dirname "$(dirname "$(command -v "$nvcc")")")/lib64
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
cobj=""
# the C core and CPU engine: every file of src/floor, src/core and src/cpu
# (R's interface in src/r is left out)
for f in src/floor/*.c src/core/*.c src/cpu/*.c; do
  o="$b/$(echo "$f" | sed 's|^src/||; s|\.c$||' | tr / _).o"
  gcc -O2 -fopenmp -ffp-contract=off -fPIC -Isrc -c "$f" -o "$o" &
  cobj="$cobj $o"
done
gcc -O2 -Isrc -c bench/kernel/kernel.c -o "$b/main.o" &
cobj="$cobj $b/main.o"
wait
names=""
for v in "$@"; do
  name=${v%%=*}
  spec=${v#*=}
  src=${spec%%:*}
  flags=""
  case "$spec" in *:*) flags=${spec#*:} ;; esac
  names="$names $name"
  # the host planning beside the source (cuda/plan_*.cxx, split by job;
  # one cuda/plan.cxx from issue 18 until then; an older single-file
  # engine has none), with the variant's -D knobs, which it must share
  # with the kernels
  dir=$(dirname "$src")
  dflags=""
  for f in $flags; do case "$f" in -D*) dflags="$dflags $f" ;; esac; done
  (
    pobj=""
    : > "$out/$name.build.log"
    for plan in "$dir"/plan.cxx "$dir"/plan_*.cxx; do
      [ -f "$plan" ] || continue
      o="$b/$name.$(basename "$plan" .cxx).o"
      # shellcheck disable=SC2086
      g++ -O2 -std=c++17 -ffp-contract=off -fPIC $dflags -Isrc -c "$plan" \
        -o "$o" >> "$out/$name.build.log" 2>&1 ||
        echo "build of $name's $plan failed: $out/$name.build.log"
      pobj="$pobj $o"
    done
    # shellcheck disable=SC2086
    "$nvcc" -O3 -std=c++17 -gencode "arch=compute_$arch,code=sm_$arch" \
      -Xcompiler -fPIC -Xcompiler -O2 -Xptxas -v $flags -Isrc \
      -c "$src" -o "$b/$name.o" >> "$out/$name.build.log" 2>&1 &&
    # shellcheck disable=SC2086
    g++ -fopenmp $cobj "$b/$name.o" $pobj -L"$cudalib" -lcudart_static \
      -ldl -lrt -lpthread -o "$b/$name" >> "$out/$name.build.log" 2>&1 ||
      echo "build of $name failed: $out/$name.build.log"
  ) &
done
wait
status=0
for name in $names; do
  [ -x "$b/$name" ] || { status=1; continue; }
  echo "== $name"
  # registers and spills of the fast kernels (all shapes)
  grep -A3 "Function properties for .*wt_fast_kernel" "$out/$name.build.log" |
    grep -o -E "[0-9]+ bytes spill stores|Used [0-9]+ registers" | sort | uniq -c
  "$b/$name" "$data" "$reps" | tee "$out/$name.txt" || status=1
  if [ "${SASS:-0}" = 1 ]; then
    cuobjdump -sass "$b/$name.o" > "$out/$name.sass" 2>&1
    # local-memory traffic (register spills) per kernel
    awk '/Function :/{f=$3} /STL|LDL/{c[f]++} END{for (k in c) print "  spill instructions:", c[k], k}' \
      "$out/$name.sass" | cut -c1-140
  fi
  if [ "${NCU:-0}" = 1 ]; then
    ncu --kernel-name regex:wt_fast_kernel --launch-skip 3 --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg,gpu__time_duration.sum \
      "$b/$name" "$data" 1 100 > "$out/$name.ncu.txt" 2>&1
    grep -E "smsp__|l1tex__|sm__cyc|gpu__time|Section|wt_fast" "$out/$name.ncu.txt" | head -20
  fi
  if [ "${NCU_STALLS:-0}" = 1 ]; then
    # why warps wait: warps stalled per issued instruction, by reason
    ncu --kernel-name regex:wt_fast_kernel --launch-skip 3 --launch-count 1 \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      "$b/$name" "$data" 1 100 > "$out/$name.stalls.txt" 2>&1
    grep "stalled" "$out/$name.stalls.txt" |
      awk '{v=$NF; gsub(",", "", v); if (v + 0 >= 0.05) print "  ", $1, v}' |
      sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  fi
done
exit $status
