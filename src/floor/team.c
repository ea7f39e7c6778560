/* The package's own teams of threads: see team.h for why.
 *
 * A pool per thread that starts teams: workers, each waiting for the next
 * job. A job is published in one 64-bit word, its number (high half) and
 * its team size nt (low half). Its nt parts (the tids) are claimed, not
 * assigned: a second word holds the job's number and its next unclaimed
 * part, and the caller and any worker that wakes claim parts from it until
 * none is left. The caller runs part 0 and then claims like the others, so
 * it never waits for a worker that has not woken yet (on 16 threads,
 * waiting for every worker to wake cost 0.1-0.2 ms a team, 15% of a small
 * call); it waits only for the parts others claimed. A worker reads the
 * job's function only after claiming a part of it, and the job ends only
 * when its parts are done, so a late worker never runs a finished job.
 * Workers and caller spin a little (WT_TEAM_SPIN pauses, about 0.1 ms),
 * then sleep on a condition variable: a thread preempted by another
 * process is not kept waiting by threads burning the cores it needs. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include "team.h"

/* pauses before sleeping: 4096 are 0.11 ms on the development VM's AMD
 * EPYC (27 ns a pause); a new team within that finds its workers awake.
 * WTHETA_TEAM_SPIN (0 to 10^8, read at load) sets it, for benchmarks. */
#define WT_TEAM_SPIN 4096
static int spin = WT_TEAM_SPIN;
/* the workers' stack size (0: the system's default) */
static size_t stack = 0;

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

typedef struct wt_pool wt_pool;

typedef struct {
  wt_pool *pool;
  uint32_t seen;
  pthread_t thread;
} wt_worker;

struct wt_pool {
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* workers wait here for a job */
  pthread_cond_t done;   /* the caller waits here for its team */
  uint64_t job;          /* number << 32 | team size (atomic) */
  uint64_t part;         /* number << 32 | next unclaimed part (atomic) */
  int parts_done;        /* the job's parts done (atomic) */
  uint32_t number;       /* the last job's number (the caller's) */
  wt_team_fn fn;         /* the job, read only by threads with a part */
  void *arg;
  int sleepers;          /* workers asleep (under lock) */
  int caller_waits;      /* the caller asleep (under lock) */
  int stop;              /* (atomic) */
  int n_workers;
  int cap;
  wt_worker **workers;
};

static pthread_key_t pool_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
/* inside a team's function: a team started there runs on its caller */
static __thread int in_team = 0;

static void pool_free(void *v);

static void key_init(void)
{
  pthread_key_create(&pool_key, pool_free);
}

static uint64_t wait_job(wt_pool *p, uint32_t seen)
{
  uint64_t job;
  for (int k = 0; k < spin; k++) {
    job = __atomic_load_n(&p->job, __ATOMIC_ACQUIRE);
    if ((uint32_t)(job >> 32) != seen) return job;
    relax();
  }
  pthread_mutex_lock(&p->lock);
  while ((uint32_t)((job = __atomic_load_n(&p->job, __ATOMIC_ACQUIRE)) >>
                    32) == seen) {
    p->sleepers++;
    pthread_cond_wait(&p->wake, &p->lock);
    p->sleepers--;
  }
  pthread_mutex_unlock(&p->lock);
  return job;
}

/* the next unclaimed part of job `number` of size nt, or -1 */
static int claim(wt_pool *p, uint32_t number, int nt)
{
  uint64_t w = __atomic_load_n(&p->part, __ATOMIC_ACQUIRE);
  for (;;) {
    if ((uint32_t)(w >> 32) != number || (int)(uint32_t)w >= nt) return -1;
    if (__atomic_compare_exchange_n(&p->part, &w, w + 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      return (int)(uint32_t)w;
  }
}

/* a part done; the last of the job's wakes its caller if asleep */
static void part_done(wt_pool *p, int nt)
{
  if (__atomic_add_fetch(&p->parts_done, 1, __ATOMIC_ACQ_REL) == nt) {
    pthread_mutex_lock(&p->lock);
    if (p->caller_waits) pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->lock);
  }
}

static void *worker_main(void *v)
{
  wt_worker *w = (wt_worker *)v;
  wt_pool *p = w->pool;
  uint32_t seen = w->seen;
  in_team = 1;
  for (;;) {
    const uint64_t job = wait_job(p, seen);
    seen = (uint32_t)(job >> 32);
    if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) return NULL;
    const int nt = (int)(uint32_t)job;
    for (int part; (part = claim(p, seen, nt)) >= 0;) {
      p->fn(p->arg, part, nt);
      part_done(p, nt);
    }
  }
}

/* starts workers up to `want` (fewer if a thread cannot start); the
 * workers block the signals R handles on its main thread */
static void grow(wt_pool *p, int want)
{
  if (want <= p->n_workers) return;
  if (want > p->cap) {
    wt_worker **w = realloc(p->workers, (size_t)want * sizeof *w);
    if (!w) return;
    p->workers = w;
    p->cap = want;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (stack) pthread_attr_setstacksize(&attr, stack);
#if !defined(_WIN32)
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, SIGSEGV);
  sigdelset(&all, SIGBUS);
  sigdelset(&all, SIGFPE);
  sigdelset(&all, SIGILL);
  pthread_sigmask(SIG_BLOCK, &all, &old);
#endif
  while (p->n_workers < want) {
    wt_worker *w = malloc(sizeof *w);
    if (!w) break;
    w->pool = p;
    w->seen = p->number;
    if (pthread_create(&w->thread, &attr, worker_main, w) != 0) {
      free(w);
      break;
    }
    p->workers[p->n_workers++] = w;
  }
#if !defined(_WIN32)
  pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
  pthread_attr_destroy(&attr);
}

static wt_pool *pool_of_caller(int want)
{
  pthread_once(&key_once, key_init);
  wt_pool *p = (wt_pool *)pthread_getspecific(pool_key);
  if (!p) {
    p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (pthread_setspecific(pool_key, p) != 0) {
      pool_free(p);
      return NULL;
    }
  }
  grow(p, want);
  return p;
}

/* stops and joins the workers, then frees the pool */
static void pool_free(void *v)
{
  wt_pool *p = (wt_pool *)v;
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
  p->number++;
  __atomic_store_n(&p->job, (uint64_t)p->number << 32, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->n_workers; i++) {
    pthread_join(p->workers[i]->thread, NULL);
    free(p->workers[i]);
  }
  free(p->workers);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int wt_team_run(int nt, wt_team_fn fn, void *arg)
{
  wt_pool *p = NULL;
  if (nt > 1 && !in_team) {
    p = pool_of_caller(nt - 1);
    if (p && nt > p->n_workers + 1) nt = p->n_workers + 1;
  }
  if (!p || nt <= 1) {
    const int outer = in_team;
    in_team = 1;
    fn(arg, 0, 1);
    in_team = outer;
    return 1;
  }
  /* the previous job's parts are all done: nobody reads these now */
  p->fn = fn;
  p->arg = arg;
  __atomic_store_n(&p->parts_done, 0, __ATOMIC_RELAXED);
  const uint32_t number = ++p->number;
  /* part 0 is the caller's */
  __atomic_store_n(&p->part, ((uint64_t)number << 32) | 1u, __ATOMIC_RELAXED);
  __atomic_store_n(&p->job, ((uint64_t)number << 32) | (uint32_t)nt,
                   __ATOMIC_RELEASE);
  pthread_mutex_lock(&p->lock);
  if (p->sleepers) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  in_team = 1;
  for (int part = 0; part >= 0; part = claim(p, number, nt)) {
    fn(arg, part, nt);
    __atomic_add_fetch(&p->parts_done, 1, __ATOMIC_ACQ_REL);
  }
  in_team = 0;
  for (int k = 0; k < spin && __atomic_load_n(&p->parts_done,
                                              __ATOMIC_ACQUIRE) < nt; k++)
    relax();
  if (__atomic_load_n(&p->parts_done, __ATOMIC_ACQUIRE) < nt) {
    pthread_mutex_lock(&p->lock);
    p->caller_waits = 1;
    while (__atomic_load_n(&p->parts_done, __ATOMIC_ACQUIRE) < nt)
      pthread_cond_wait(&p->done, &p->lock);
    p->caller_waits = 0;
    pthread_mutex_unlock(&p->lock);
  }
  return nt;
}

typedef struct {
  wt_range_fn fn;
  void *arg;
  int64_t n, chunk, next;
} wt_loop;

static void loop_part(void *v, int tid, int nt)
{
  wt_loop *L = (wt_loop *)v;
  if (L->chunk <= 0) {
    int64_t lo, hi;
    wt_team_block(L->n, tid, nt, &lo, &hi);
    if (lo < hi) L->fn(L->arg, lo, hi, tid);
    return;
  }
  for (;;) {
    const int64_t lo = __atomic_fetch_add(&L->next, L->chunk,
                                          __ATOMIC_RELAXED);
    if (lo >= L->n) return;
    L->fn(L->arg, lo, L->n - lo < L->chunk ? L->n : lo + L->chunk, tid);
  }
}

int wt_team_for(int nt, int64_t n, int64_t chunk, wt_range_fn fn, void *arg)
{
  if (n <= 0) return 1;
  /* no more threads than runs of iterations */
  const int64_t runs = chunk > 0 ? (n - 1) / chunk + 1 : n;
  if ((int64_t)nt > runs) nt = (int)runs;
  wt_loop L = {fn, arg, n, chunk, 0};
  return wt_team_run(nt, loop_part, &L);
}

void wt_team_release(void)
{
  pthread_once(&key_once, key_init);
  wt_pool *p = (wt_pool *)pthread_getspecific(pool_key);
  if (!p) return;
  pthread_setspecific(pool_key, NULL);
  pool_free(p);
}

/* a child of fork() has none of the parent's workers: it starts its own
 * (the parent's pool is left as it was, its lock untouched) */
static void team_in_child(void)
{
  pthread_once(&key_once, key_init);
  pthread_setspecific(pool_key, NULL);
  in_team = 0;
}

void wt_team_init(size_t stack_size)
{
  stack = stack_size;
  const char *v = getenv("WTHETA_TEAM_SPIN");
  if (v && *v) {
    char *end;
    const long k = strtol(v, &end, 10);
    if (*end == '\0' && k >= 0 && k <= 100000000) spin = (int)k;
  }
  pthread_once(&key_once, key_init);
#if !defined(_WIN32)
  pthread_atfork(NULL, NULL, team_in_child);
#endif
}

/* ---- a check of the teams for the package's tests (R/testing.R) ---- */

typedef struct {
  unsigned char *seen;
  int64_t most_tid, nested_nt, sum;
} team_probe;

static void mark(void *v, int64_t lo, int64_t hi, int tid)
{
  team_probe *P = (team_probe *)v;
  for (int64_t i = lo; i < hi; i++) P->seen[i]++;
  int64_t m = __atomic_load_n(&P->most_tid, __ATOMIC_RELAXED);
  while (tid > m && !__atomic_compare_exchange_n(&P->most_tid, &m, tid, 0,
                                                 __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
    ;
}

static void add_nt(void *v, int tid, int nt)
{
  team_probe *P = (team_probe *)v;
  (void)tid;
  __atomic_fetch_add(&P->sum, nt > 0 ? 1 : 0, __ATOMIC_RELAXED);
}

static void nested(void *v, int tid, int nt)
{
  team_probe *P = (team_probe *)v;
  team_probe inner = {NULL, 0, 0, 0};
  (void)tid;
  const int got = wt_team_run(nt + 2, add_nt, &inner);
  int64_t m = __atomic_load_n(&P->nested_nt, __ATOMIC_RELAXED);
  while (got > m && !__atomic_compare_exchange_n(&P->nested_nt, &m, got, 0,
                                                 __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
    ;
}

typedef struct {
  int nt, teams;
  int64_t sum;
} team_burst;

/* many teams in a row: each thread of each team adds 1 */
static void *burst(void *v)
{
  team_burst *B = (team_burst *)v;
  team_probe P = {NULL, 0, 0, 0};
  for (int k = 0; k < B->teams; k++) wt_team_run(B->nt, add_nt, &P);
  B->sum = P.sum;
  return NULL;
}

/* out: [0] iterations of a static loop of n visited once, [1] the same
 * for a dynamic loop (chunk 7), [2] the largest tid + 1 of the static
 * loop, [3] the largest team of a team started inside a team, [4] the
 * threads summed over `teams` teams in a row, [5] the same from a thread
 * of its own (its workers stopped when it ends). -1 when out of memory */
int wt_team_check(int nt, int64_t n, int teams, int64_t out[6])
{
  if (n < 1) return -1;
  team_probe P = {calloc((size_t)n, 1), 0, 0, 0};
  if (!P.seen) return -1;
  wt_team_for(nt, n, 0, mark, &P);
  out[0] = out[1] = 0;
  for (int64_t i = 0; i < n; i++) out[0] += P.seen[i] == 1;
  out[2] = P.most_tid + 1;
  memset(P.seen, 0, (size_t)n);
  wt_team_for(nt, n, 7, mark, &P);
  for (int64_t i = 0; i < n; i++) out[1] += P.seen[i] == 1;
  free(P.seen);
  P.seen = NULL;
  wt_team_run(nt, nested, &P);
  out[3] = P.nested_nt;
  team_burst B = {nt, teams, 0};
  burst(&B);
  out[4] = B.sum;
  team_burst C = {nt, teams, -1};
  pthread_t th;
  if (pthread_create(&th, NULL, burst, &C) != 0) return -1;
  pthread_join(th, NULL);
  out[5] = C.sum;
  return 0;
}
