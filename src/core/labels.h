/* core/labels.c: the dispatcher's part of labelled counts (wt_job.n_lab,
 * wt.h): what a labelled job may be, and, after the engine, the fold of
 * diagonal blocks and slot n_bins + 1 of every histogram from the label
 * totals of the job's tasks. Private to core/ (count.c uses it). */
#ifndef WT_LABELS_H
#define WT_LABELS_H
#include "wt.h"

/* WT_OK, or WT_ERR_ARG with job->message naming why labels cannot be
 * counted so (the GPU, pip, thsum, self pairs, a side without labels,
 * a label outside [0, n_lab)) */
int wt_labels_check(wt_job *job);
/* after the engine, on the job's own tasks (the dispatcher's, before the
 * grid refines them) and points: the diagonal fold, then slot n_bins + 1
 * of every histogram set to the pairs (and weight sums) its task ranges
 * hold less those of its other slots. WT_OK, WT_ERR_NOMEM, or WT_ERR_ARG
 * with job->message when a histogram's slots hold more pairs than its
 * ranges (an engine's fault) */
int wt_labels_finish(wt_job *job);
#endif
