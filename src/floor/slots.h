/* The slot of a squared chord by the bins' lookup table (floor/bins.c),
 * for the CPU engine's kernels and the grid's walk. No R API. */
#ifndef WT_FLOOR_SLOTS_H
#define WT_FLOOR_SLOTS_H

#include <stdint.h>
#include <string.h>
#include "wt.h"

static inline uint64_t d2_bits(double d2)
{
  uint64_t u;
  memcpy(&u, &d2, sizeof u);
  return u;
}

/* The slot of d2, equal to wt_slot_of() for every d2: the table guess and
 * table_steps compare-and-step rounds. Keys below the table use cell 0, which
 * covers all d2 from 0; d2 above the last cell (only non-finite d2 or points
 * far off the unit sphere) takes the binary search, as does a missing table.
 * Every kernel agrees with this function. */
static inline int slot_of(const wt_bins *bins, double d2)
{
  if (bins->table == NULL) return wt_slot_of(bins, d2);
  int64_t key = (int64_t)(d2_bits(d2) >> bins->table_shift) - bins->table_base;
  if (key >= bins->table_size) return wt_slot_of(bins, d2);
  if (key < 0) key = 0;
  int s = bins->table[key];
  for (int r = 0; r < bins->table_steps; r++) s += d2 >= bins->upper[s];
  return s;
}

#endif
