/* The CPU engine's two forms of its own for labelled jobs (wt_job.n_lab;
 * see engine.h): tasks of one slot added by the tally of their columns'
 * labels, and an item's rows copied in label order for the sliced form.
 * Called by driver.c's do_item(). */
#include "engine.h"

/* rows [i0, i1) of a (unweighted, labelled on its rows only, label
 * offsets in lab) into o in label order, stably: a counting sort over the
 * c->hist / n_slots labels (at most WT_LABELS_TALLY) */
void wt_cpu_sort_rows(const wt_ctx *c, const wt_points *a, int64_t i0,
                      int64_t i1, wt_points *o)
{
  double *x = (double *)o->x, *y = (double *)o->y, *z = (double *)o->z;
  int32_t *lab = (int32_t *)o->lab;
  const int L = c->hist / c->n_slots;
  int64_t at[WT_LABELS_TALLY + 1];
  memset(at, 0, sizeof at);
  for (int64_t i = i0; i < i1; i++) at[a->lab[i] / c->n_slots + 1]++;
  for (int l = 0; l < L; l++) at[l + 1] += at[l];
  for (int64_t i = i0; i < i1; i++) {
    const int64_t k = at[a->lab[i] / c->n_slots]++;
    x[k] = a->x[i];
    y[k] = a->y[i];
    z[k] = a->z[i];
    lab[k] = a->lab[i];
  }
}

/* A work item of a task of one slot in a labelled job (slo == shi > 0:
 * the grid walk proved every pair inside that bin, WT_WALK_FIXED, which
 * labelled jobs are walked with on the CPU): each row adds, at its label
 * offset, the tally of the task's columns by label (c->lab_nb counts, and
 * weight sums) to that slot. No d2 and no slot lookup: the pairs are
 * those the kernels would count, so are the counts. Weight sums are w_i
 * times each label's sum of w_j, which differs from the kernels' sums by
 * the order of summation only. Returns 0, and the kernels count the item,
 * for a diagonal task (a node with itself spans slot 0: none reaches
 * here) or more column labels than tallied here. */
int wt_cpu_labelled_fixed(const wt_job *job, const wt_ctx *c,
                          const wt_task *task, int64_t i0, int64_t i1,
                          wt_thread *t)
{
  const wt_points *a = c->pa, *b = c->pb;
  const int nb = c->lab_nb, ns = c->n_slots, slot = task->slo;
  if (nb > WT_LABELS_TALLY || (job->is_auto && task->a0 == task->b0))
    return 0;
  const int weighted = t->wacc != NULL;
  uint64_t n[WT_LABELS_TALLY];
  double w[WT_LABELS_TALLY];
  memset(n, 0, (size_t)nb * sizeof *n);
  memset(w, 0, (size_t)nb * sizeof *w);
  for (int64_t j = task->b0; j < task->b1; j++) {
    n[b->lab[j] / ns]++;
    if (weighted) w[b->lab[j] / ns] += b->w[j];
  }
  for (int64_t i = i0; i < i1; i++) {
    const int64_t at = (int64_t)a->lab[i] + slot;
    for (int l = 0; l < nb; l++) t->acc[at + (int64_t)l * ns] += n[l];
    if (weighted)
      for (int l = 0; l < nb; l++)
        t->wacc[at + (int64_t)l * ns] += a->w[i] * w[l];
  }
  t->acc[(int64_t)a->lab[i0] + slot] += (uint64_t)c->fixed_fault;
  return 1;
}
