/* How many threads the CPU engine uses: the package keeps its own count and
 * never calls omp_set_num_threads, so other OpenMP code in the session is
 * unaffected. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "threads.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#if !defined(_WIN32)
#include <pthread.h>
#endif

static int after_fork = 0;

/* OpenMP 5.0's omp_pause_resource_all (GCC's libgomp has it from GCC 9) */
#if defined(_OPENMP) && (_OPENMP >= 201811 || \
    (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9))
#define WT_PAUSE_OPENMP 1
#endif

#if !defined(_WIN32)
/* Before any fork (parallel::mclapply, system()): release OpenMP's thread
 * pool. GNU libgomp is not fork-safe: a child forked from a process whose
 * pool exists hangs in its first parallel region with more than one thread,
 * waiting for pool threads that were not copied. A paused pool is rebuilt by
 * the next parallel region in the parent, and the child builds its own. */
static void before_fork(void)
{
#ifdef WT_PAUSE_OPENMP
  (void)omp_pause_resource_all(omp_pause_soft);
#endif
}

static void in_child(void) { after_fork = 1; }
#endif

void wt_threads_init(void)
{
#if !defined(_WIN32)
  pthread_atfork(before_fork, NULL, in_child);
#endif
}

int wt_cpu_cores(void)
{
#ifdef _OPENMP
  return omp_get_num_procs();
#else
  return 1;
#endif
}

static int env_int(const char *name)
{
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  long k = strtol(v, &end, 10);
  return (*end == '\0' && k > 0 && k < 1 << 20) ? (int)k : 0;
}

/* OMP_THREAD_LIMIT caps any request; without OpenMP there is one thread */
int wt_cap_threads(int requested)
{
#ifdef _OPENMP
  int limit = omp_get_thread_limit();
  if (limit > 0 && requested > limit) requested = limit;
  return requested < 1 ? 1 : requested;
#else
  (void)requested;
  return 1;
#endif
}

/* threads for a light pass over n points: at most one per `grain` points.
 * On the H200's 16-core host, 16 threads on 10^5 points made the unit
 * vectors and nearest patch centres of a jackknife call take 10 ms each
 * instead of 1-3 (a team that large waits on its slowest member). */
int wt_threads_for(int requested, int64_t n, int64_t grain)
{
  int t = wt_cap_threads(requested);
  int64_t most = n / grain;
  if (most < 1) most = 1;
  return (int64_t)t > most ? (int)most : t;
}

int wt_default_threads(void)
{
  if (after_fork) return 1;
  int n = wt_cpu_cores();
  int omp = env_int("OMP_NUM_THREADS");
  if (omp > 0 && omp < n) n = omp;
  const char *check = getenv("_R_CHECK_LIMIT_CORES_");
  if (check && *check && strcmp(check, "false") != 0 &&
      strcmp(check, "FALSE") != 0 && n > 2)
    n = 2;
  return wt_cap_threads(n);
}
