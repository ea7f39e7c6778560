/* The floor: conventions of a job that the dispatcher and every engine
 * share: the pairs a task holds and a task list holds, the validity of a
 * task list, fault bits for tests and a clock. The dispatcher (core/) and
 * the engines (cpu/, cuda/) call these; nothing here calls either, so data
 * flows one way (the R boundary, dispatch, engine). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wt.h"

/* a monotonic clock, in seconds */
double wt_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double wt_task_pairs(const wt_job *job, const wt_task *t)
{
  double na = (double)(t->a1 - t->a0), nb = (double)(t->b1 - t->b0);
  if (job->is_auto && t->a0 == t->b0) return na * (na - 1.0) / 2.0;
  return na * nb;
}

/* summed in task order, so every caller gets the same double */
double wt_tasks_pairs(const wt_job *job)
{
  double total = 0.0;
  for (int64_t k = 0; k < job->n_tasks; k++)
    total += wt_task_pairs(job, &job->tasks[k]);
  return total;
}

int wt_fault_from_env(void)
{
  const char *v = getenv("WTHETA_TEST_FAULT");
  if (!v || !*v) return 0;
  static const struct { const char *name; int bit; } names[] = {
    {"alloc", WT_FAULT_ALLOC}, {"launch", WT_FAULT_LAUNCH},
    {"copy", WT_FAULT_COPY}, {"thread", WT_FAULT_THREAD},
    {"narrow", WT_FAULT_NARROW}, {"fixed", WT_FAULT_FIXED},
    {"pipcount", WT_FAULT_PIPCOUNT}, {"slots", WT_FAULT_SLOTS}};
  int bits = 0;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    const char *p = v;
    size_t len = strlen(names[k].name);
    while ((p = strstr(p, names[k].name)) != NULL) {
      int starts = p == v || p[-1] == ',';
      int ends = p[len] == '\0' || p[len] == ',' || p[len] == '@';
      if (starts && ends) bits |= names[k].bit;
      p += len;
    }
  }
  /* "@d": the CUDA faults strike device d only */
  const char *at = strchr(v, '@');
  if (bits && at) {
    char *end;
    long d = strtol(at + 1, &end, 10);
    if (end != at + 1 && d >= 0 && d < (1L << 20))
      bits |= (int)(d + 1) << WT_FAULT_DEVICE_SHIFT;
  }
  return bits;
}

int wt_fault_on_device(int fault, int device)
{
  int d = fault >> WT_FAULT_DEVICE_SHIFT;
  return d == 0 || d - 1 == device;
}

void wt_labels_sizes(const wt_job *job, int *la, int *lb)
{
  *la = job->n_lab > 0 && job->a.lab ? job->n_lab : 1;
  *lb = job->n_lab > 0 ? job->is_auto ? *la : job->b.lab ? job->n_lab : 1
                       : 1;
}

/* every task inside its catalogs and histograms (with labels, the task's
 * histograms: n_out / (La Lb), wt.h); in an auto job a task is a diagonal
 * range or two disjoint ones (wt.h) */
int wt_tasks_valid(const wt_job *job)
{
  const int64_t na = job->a.n, nb = job->is_auto ? job->a.n : job->b.n;
  int n_out = job->n_out;
  if (job->n_lab > 0) {
    int la, lb;
    wt_labels_sizes(job, &la, &lb);
    const int64_t per = (int64_t)la * lb;
    if (n_out % per != 0) return 0;
    n_out = (int)(n_out / per);
  }
  for (int64_t k = 0; k < job->n_tasks; k++) {
    const wt_task *t = &job->tasks[k];
    if (t->a0 < 0 || t->a0 > t->a1 || t->a1 > na || t->b0 < 0 ||
        t->b0 > t->b1 || t->b1 > nb || t->out < 0 || t->out >= n_out)
      return 0;
    if (job->is_auto && !(t->a0 == t->b0 && t->a1 == t->b1) && t->a1 > t->b0)
      return 0;
  }
  return 1;
}
