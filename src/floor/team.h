/* The package's own teams of threads (team.c): every parallel pass of the
 * core and the CPU engine runs on them instead of OpenMP's.
 *
 * Why not OpenMP: R loads GNU libgomp itself (libR links it) before any
 * package, so its wait policy is fixed before we load. By default its
 * idle threads spin for 300,000 pauses (8 ms on the development VM) after
 * every parallel region, and its early threads spin at each region's end.
 * On a machine shared with other busy processes that spinning takes the
 * cores the call's own threads need: a six-sample tomography with
 * jackknife took 0.35-0.95 s there against 0.27 s with
 * OMP_WAIT_POLICY=passive. These teams spin about 0.1 ms, then sleep.
 *
 * Each thread that starts teams (R's main thread; the threads of counts
 * run at once) has its own workers, started when first needed and kept.
 * A team started from inside a team's function runs on its caller alone,
 * as a nested OpenMP region does by default. */
#ifndef WT_TEAM_H
#define WT_TEAM_H
#include <stddef.h>
#include <stdint.h>

/* one of a team's nt parts, tid in [0, nt). The caller runs part 0; a
 * thread may run several parts one after another (the threads claim them
 * as they wake), so per-thread scratch is indexed by tid, and a part never
 * waits for another. */
typedef void (*wt_team_fn)(void *arg, int tid, int nt);

/* Runs the nt parts of fn on a team of up to nt threads, the caller among
 * them, and returns when all are done; returns nt (fewer only when threads
 * could not be started; fn is told the number of parts). */
int wt_team_run(int nt, wt_team_fn fn, void *arg);

/* what a loop's threads run for iterations [lo, hi) */
typedef void (*wt_range_fn)(void *arg, int64_t lo, int64_t hi, int tid);

/* The loop over [0, n) on a team of up to nt threads. chunk 0: each
 * thread one contiguous block, as OpenMP's schedule(static) splits;
 * chunk > 0: the threads take runs of chunk iterations in turn, as
 * schedule(dynamic, chunk). Returns the team's size. */
int wt_team_for(int nt, int64_t n, int64_t chunk, wt_range_fn fn, void *arg);

/* The block of [0, n) that thread tid of nt takes in schedule(static) */
static inline void wt_team_block(int64_t n, int tid, int nt, int64_t *lo,
                                 int64_t *hi)
{
  const int64_t q = n / nt, r = n % nt;
  *lo = (int64_t)tid * q + (tid < r ? tid : r);
  *hi = *lo + q + (tid < r ? 1 : 0);
}

/* Releases the calling thread's workers (at unload, and at the end of a
 * thread that started teams) */
void wt_team_release(void);
/* at load: the workers' stack size (0: the system's default) */
void wt_team_init(size_t stack_size);
/* a check of the teams for the package's tests (team.c says what) */
int wt_team_check(int nt, int64_t n, int teams, int64_t out[6]);
#endif
