/* How many threads the CPU engine uses: the package keeps its own count and
 * never calls omp_set_num_threads, so other OpenMP code in the session is
 * unaffected. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <ctype.h>
#include <errno.h>
#include "threads.h"
#include "floor/team.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#if !defined(_WIN32)
#include <pthread.h>
#endif

static int after_fork = 0;

/* the largest team wt_threads_start() has seen start, and the stack size
 * OpenMP gives its threads (0: the system's default) */
static int proven = 1;
static size_t omp_stack = 0;

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

static void in_child(void)
{
  after_fork = 1;
  proven = 1;
}
#endif

/* OMP_STACKSIZE as GNU libgomp reads it when it loads: a number with an
 * optional unit B, K, M or G (K when none); 0 when unset or unreadable */
static size_t stack_size_env(const char *name)
{
  const char *v = getenv(name);
  if (!v) return 0;
  while (isspace((unsigned char)*v)) v++;
  if (!isdigit((unsigned char)*v)) return 0;
  char *end;
  errno = 0;
  unsigned long long k = strtoull(v, &end, 10);
  if (errno) return 0;
  while (isspace((unsigned char)*end)) end++;
  int shift = 10;
  switch (*end) {
  case 'b': case 'B': shift = 0; end++; break;
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  while (isspace((unsigned char)*end)) end++;
  if (*end || k >= (SIZE_MAX >> shift)) return 0;
  return (size_t)(k << shift);
}

void wt_threads_init(void)
{
#if !defined(_WIN32)
  pthread_atfork(before_fork, NULL, in_child);
#endif
  /* read once, as the OpenMP runtime (loaded before this package) did */
  omp_stack = stack_size_env("OMP_STACKSIZE");
  if (!omp_stack) omp_stack = stack_size_env("GOMP_STACKSIZE");
  /* the package's own threads get the stack OpenMP's would */
  wt_team_init(omp_stack);
}

#if defined(_OPENMP) && !defined(_WIN32)
/* the probe's threads wait at a gate until all have started */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t open_cv;
  int open;
} wt_gate;

static void *wait_at_gate(void *arg)
{
  wt_gate *g = (wt_gate *)arg;
  pthread_mutex_lock(&g->lock);
  while (!g->open) pthread_cond_wait(&g->open_cv, &g->lock);
  pthread_mutex_unlock(&g->lock);
  return NULL;
}
#endif

/* Can a team of n threads start? Before a call with more threads than any
 * before, start n - 1 threads with the stack size the package's teams use
 * (floor/team.c: OMP_STACKSIZE's), all alive at once, and stop them again:
 * a call asked for n threads gets them or an error naming the number,
 * where a team that cannot start a thread would quietly run on fewer.
 * Returns 0, or -1 with a message saying how many could start and why.
 * Called from the main thread only. */
int wt_threads_start(int n, char *msg, size_t len)
{
#if defined(_OPENMP) && !defined(_WIN32)
  if (n <= proven) return 0;
  pthread_t *t = malloc((size_t)(n - 1) * sizeof *t);
  if (!t) {
    snprintf(msg, len, "no memory to start %d threads", n);
    return -1;
  }
  wt_gate g;
  pthread_mutex_init(&g.lock, NULL);
  pthread_cond_init(&g.open_cv, NULL);
  g.open = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = 0, started = 0;
  if (omp_stack) rc = pthread_attr_setstacksize(&attr, omp_stack);
  for (int i = 0; rc == 0 && i < n - 1; i++) {
    rc = pthread_create(&t[i], &attr, wait_at_gate, &g);
    if (rc == 0) started++;
  }
  pthread_mutex_lock(&g.lock);
  g.open = 1;
  pthread_cond_broadcast(&g.open_cv);
  pthread_mutex_unlock(&g.lock);
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  pthread_attr_destroy(&attr);
  pthread_cond_destroy(&g.open_cv);
  pthread_mutex_destroy(&g.lock);
  free(t);
  if (rc != 0) {
    snprintf(msg, len, "only %d of %d threads could be started (%s)",
             started + 1, n, strerror(rc));
    return -1;
  }
  proven = n;
#else
  (void)n;
  (void)msg;
  (void)len;
#endif
  return 0;
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

/* threads for a light pass over n points: at most one per `grain` points,
 * because a team much larger than the work waits on its slowest member
 * and makes the pass slower than fewer threads would (measured in
 * bench/kernel/kernel-notes.md, "Light passes") */
int wt_threads_for(int requested, int64_t n, int64_t grain)
{
  int t = wt_cap_threads(requested);
  int64_t most = n / grain;
  if (most < 1) most = 1;
  return (int64_t)t > most ? (int)most : t;
}

/* available: the cores parallelly::availableCores() found (0: unknown) */
int wt_default_threads(int available)
{
  if (after_fork) return 1;
  int n = available > 0 ? available : wt_cpu_cores();
  int omp = env_int("OMP_NUM_THREADS");
  if (omp > 0 && omp < n) n = omp;
  const char *check = getenv("_R_CHECK_LIMIT_CORES_");
  if (check && *check && strcmp(check, "false") != 0 &&
      strcmp(check, "FALSE") != 0 && n > 2)
    n = 2;
  return wt_cap_threads(n);
}
