/* The instruction sets of the CPU engine's kernels: which this CPU and
 * build can run, and the override WTHETA_CPU_ISA (plain, avx2, avx512),
 * which lets tests run every kernel on a machine that has the larger ones
 * and lets benchmarks compare them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

static const char *const isa_names[] = {"plain", "avx2", "avx512"};

const char *wt_cpu_isa_name(int isa)
{
  return isa >= WT_ISA_PLAIN && isa <= WT_ISA_AVX512 ? isa_names[isa] : "?";
}

int wt_cpu_isa_supported(int isa)
{
  if (isa == WT_ISA_PLAIN) return 1;
#ifdef WT_X86
  __builtin_cpu_init();
  /* __builtin_cpu_supports() returns a nonzero mask, not 1 */
  if (isa == WT_ISA_AVX2) return __builtin_cpu_supports("avx2") != 0;
  if (isa == WT_ISA_AVX512)
    return __builtin_cpu_supports("avx512f") != 0 &&
      __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512cd");
#endif
  return 0;
}

int wt_cpu_isa_best(void)
{
  if (wt_cpu_isa_supported(WT_ISA_AVX512)) return WT_ISA_AVX512;
  if (wt_cpu_isa_supported(WT_ISA_AVX2)) return WT_ISA_AVX2;
  return WT_ISA_PLAIN;
}

int wt_cpu_isa_chosen(int *isa, char *msg, size_t len)
{
  const char *v = getenv("WTHETA_CPU_ISA");
  *isa = wt_cpu_isa_best();
  if (v == NULL || *v == '\0') return WT_OK;
  for (int k = WT_ISA_PLAIN; k <= WT_ISA_AVX512; k++) {
    if (strcmp(v, isa_names[k]) != 0) continue;
    if (!wt_cpu_isa_supported(k)) {
      snprintf(msg, len, "WTHETA_CPU_ISA is \"%s\", but this CPU or build "
               "cannot run it (it runs: %s)", v,
               wt_cpu_isa_name(wt_cpu_isa_best()));
      return WT_ERR_ISA;
    }
    *isa = k;
    return WT_OK;
  }
  snprintf(msg, len, "WTHETA_CPU_ISA must be \"plain\", \"avx2\", "
           "\"avx512\" or empty, not \"%.60s\"", v);
  return WT_ERR_ISA;
}

/* the instruction set that light passes outside the engine (the patches'
 * nearest centres, the grid's keys) may use: wt_cpu_isa_chosen()'s, or
 * plain when WTHETA_CPU_ISA names an unknown or unsupported one (the
 * engine's error to report; what those passes make does not depend on
 * the instruction set) */
int wt_cpu_isa_light(void)
{
  int isa = WT_ISA_PLAIN;
  char msg[8];
  return wt_cpu_isa_chosen(&isa, msg, sizeof msg) == WT_OK ? isa
                                                           : WT_ISA_PLAIN;
}
