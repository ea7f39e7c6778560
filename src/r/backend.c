/* The backends as R sees them (R/backend.R): wt.h's enum codes by name,
 * the CPU's instruction sets, CUDA devices, threads and cores. */
#include "boundary.h"

/* a named integer vector of n codes */
static SEXP named_codes(int n, const char *const *names, const int *codes)
{
  SEXP v = PROTECT(allocVector(INTSXP, n));
  SEXP nm = PROTECT(allocVector(STRSXP, n));
  for (int k = 0; k < n; k++) {
    INTEGER(v)[k] = codes[k];
    SET_STRING_ELT(nm, k, mkChar(names[k]));
  }
  setAttrib(v, R_NamesSymbol, nm);
  UNPROTECT(2);
  return v;
}

/* The codes of wt.h's enums, by name: the one place R learns them from
 * (wt_constant() in R/backend.R). */
SEXP wt_r_constants(void)
{
  static const char *const backend_names[] = {"cpu", "cuda"};
  static const int backend_codes[] = {WT_BACKEND_CPU, WT_BACKEND_CUDA};
  static const char *const grid_names[] = {"never", "auto", "always", "prune"};
  static const int grid_codes[] = {WT_GRID_NEVER, WT_GRID_AUTO,
                                   WT_GRID_ALWAYS, WT_GRID_PRUNE};
  static const char *const isa_names[] = {"plain", "avx2", "avx512"};
  static const int isa_codes[] = {WT_ISA_PLAIN, WT_ISA_AVX2, WT_ISA_AVX512};
  const char *names[] = {"backend", "grid", "isa", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, named_codes(2, backend_names, backend_codes));
  SET_VECTOR_ELT(out, 1, named_codes(4, grid_names, grid_codes));
  SET_VECTOR_ELT(out, 2, named_codes(3, isa_names, isa_codes));
  UNPROTECT(1);
  return out;
}

/* The CPU engine's instruction sets: those this CPU and build can run, the
 * one it uses now (NA when WTHETA_CPU_ISA is refused) and why not. */
SEXP wt_r_cpu_isa(void)
{
  char msg[256] = "";
  int chosen = WT_ISA_PLAIN, n = 0;
  const int ok = wt_cpu_isa_chosen(&chosen, msg, sizeof msg) == WT_OK;
  for (int k = WT_ISA_PLAIN; k <= WT_ISA_AVX512; k++)
    n += wt_cpu_isa_supported(k);
  const char *names[] = {"supported", "chosen", "message", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP sup = allocVector(STRSXP, n);
  SET_VECTOR_ELT(out, 0, sup);
  for (int k = WT_ISA_PLAIN, i = 0; k <= WT_ISA_AVX512; k++)
    if (wt_cpu_isa_supported(k))
      SET_STRING_ELT(sup, i++, mkChar(wt_cpu_isa_name(k)));
  SET_VECTOR_ELT(out, 1, ok ? mkString(wt_cpu_isa_name(chosen))
                            : ScalarString(NA_STRING));
  SET_VECTOR_ELT(out, 2, mkString(msg));
  UNPROTECT(1);
  return out;
}

SEXP wt_r_cuda_info(void)
{
  char msg[256] = "";
  int count = wt_cuda_device_count(msg, sizeof msg);
  const char *names[] = {"compiled", "count", "message", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarLogical(wt_cuda_compiled()));
  SET_VECTOR_ELT(out, 1, ScalarInteger(count));
  SET_VECTOR_ELT(out, 2, mkString(msg));
  UNPROTECT(1);
  return out;
}

SEXP wt_r_cuda_device(SEXP device)
{
  char name[256] = "";
  int major = 0, minor = 0;
  double mem = 0;
  if (wt_cuda_device_info(asInteger(device), name, sizeof name, &major,
                          &minor, &mem) != WT_OK)
    error("wtheta: cannot query CUDA device %d: %s", asInteger(device), name);
  const char *names[] = {"name", "major", "minor", "memory", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, mkString(name));
  SET_VECTOR_ELT(out, 1, ScalarInteger(major));
  SET_VECTOR_ELT(out, 2, ScalarInteger(minor));
  SET_VECTOR_ELT(out, 3, ScalarReal(mem));
  UNPROTECT(1);
  return out;
}

SEXP wt_r_cuda_release(void) { return ScalarInteger(wt_cuda_release()); }

SEXP wt_r_default_threads(SEXP available)
{
  return ScalarInteger(wt_default_threads(asInteger(available)));
}

SEXP wt_r_cpu_cores(void) { return ScalarInteger(wt_cpu_cores()); }
