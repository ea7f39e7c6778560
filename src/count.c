/* Dispatch: the one place that picks the engine and applies conventions
 * shared by all engines. */
#include "wt.h"

int wt_count(wt_job *job)
{
  if (!job || !job->bins || !job->slots || job->a.n < 1 ||
      (!job->is_auto && job->b.n < 1))
    return WT_ERR_ARG;
  int n_slots = job->bins->n_bins + 2;
  for (int s = 0; s < n_slots; s++) job->slots[s] = 0;
  job->gpu_ms = 0.0;
  job->message[0] = '\0';
  int status;
  if (job->is_auto && job->a.n < 2) {
    status = WT_OK;                 /* one point: no unordered pair */
  } else if (job->backend == WT_BACKEND_CUDA) {
    status = wt_count_cuda(job);
  } else if (job->backend == WT_BACKEND_CPU) {
    status = wt_count_cpu(job);
  } else {
    return WT_ERR_ARG;
  }
  if (status != WT_OK) return status;
  if (job->is_auto && job->self_pairs) {
    /* ordered pairs: each unordered pair twice, plus n self pairs at d2 = 0 */
    for (int s = 0; s < n_slots; s++) job->slots[s] *= 2;
    job->slots[wt_slot_of(job->bins, 0.0)] += (uint64_t)job->a.n;
  }
  return WT_OK;
}
