/* The grid build's sort (grid_build.c): the points of a range by their
 * key, a cell of the grid and a Morton code inside it. */
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "grid.h"
#include "floor/team.h"

/* Radix sorts of (key, index) by key, stable: the order is the same on
 * any number of threads. */
#define RADIX_BITS 11
#define RADIX (1 << RADIX_BITS)
#define BUCKET_BITS 8                /* digits of the in-bucket passes */

/* Stable LSD sort of (k, o)[0, m) by the low `bits` bits of k (all of
 * them, or those below the equal higher bits of a bucket), 8 bits a pass,
 * on one thread, with scratch (k2, o2) of m; the result in (k, o). Small
 * runs by insertion (stable: a key moves only past greater ones). */
static void sort_bucket(uint64_t *k, int64_t *o, uint64_t *k2, int64_t *o2,
                        int64_t m, int bits)
{
  if (m < 2) return;
  if (m <= 32) {
    for (int64_t i = 1; i < m; i++) {
      const uint64_t kv = k[i];
      const int64_t ov = o[i];
      int64_t j = i;
      for (; j > 0 && k[j - 1] > kv; j--) {
        k[j] = k[j - 1];
        o[j] = o[j - 1];
      }
      k[j] = kv;
      o[j] = ov;
    }
    return;
  }
  int64_t cnt[1 << BUCKET_BITS];
  uint64_t *sk = k, *dk = k2;
  int64_t *so = o, *dO = o2;
  for (int sh = 0; sh < bits; sh += BUCKET_BITS) {
    memset(cnt, 0, sizeof cnt);
    for (int64_t i = 0; i < m; i++)
      cnt[(sk[i] >> sh) & ((1 << BUCKET_BITS) - 1)]++;
    int64_t run = 0;
    for (int d = 0; d < (1 << BUCKET_BITS); d++) {
      int64_t v = cnt[d];
      cnt[d] = run;
      run += v;
    }
    for (int64_t i = 0; i < m; i++) {
      int64_t at = cnt[(sk[i] >> sh) & ((1 << BUCKET_BITS) - 1)]++;
      dk[at] = sk[i];
      dO[at] = so[i];
    }
    uint64_t *tk = sk; sk = dk; dk = tk;
    int64_t *to = so; so = dO; dO = to;
  }
  if (sk != k) {
    memcpy(k, sk, (size_t)m * sizeof *k);
    memcpy(o, so, (size_t)m * sizeof *o);
  }
}

/* the MSD sort's arrays, shared by its passes */
typedef struct {
  uint64_t *key, *k2;
  int64_t *order, *o2;
  int64_t n;
  int shift, stripes;
  int64_t *cnt;                      /* stripes x RADIX digit counts */
  const int64_t *start;              /* each digit's bucket start */
} msd_sort;

/* each stripe of points counts its digits (stripe t on thread t mod nt,
 * as schedule(static, 1)) */
static void msd_count(void *arg, int tid, int nt)
{
  const msd_sort *M = (const msd_sort *)arg;
  for (int t = tid; t < M->stripes; t += nt) {
    int64_t *c = M->cnt + (size_t)t * RADIX;
    int64_t i0 = M->n * t / M->stripes, i1 = M->n * (t + 1) / M->stripes;
    memset(c, 0, RADIX * sizeof *c);
    for (int64_t i = i0; i < i1; i++) c[M->key[i] >> M->shift]++;
  }
}

/* each stripe scatters its points into (k2, o2) from its own offsets */
static void msd_scatter(void *arg, int tid, int nt)
{
  const msd_sort *M = (const msd_sort *)arg;
  for (int t = tid; t < M->stripes; t += nt) {
    int64_t *c = M->cnt + (size_t)t * RADIX;
    int64_t i0 = M->n * t / M->stripes, i1 = M->n * (t + 1) / M->stripes;
    for (int64_t i = i0; i < i1; i++) {
      int64_t at = c[M->key[i] >> M->shift]++;
      M->k2[at] = M->key[i];
      M->o2[at] = M->order[i];
    }
  }
}

/* each bucket sorted in (k2, o2) with (key, order) as scratch, then
 * copied back to its place in (key, order) */
static void msd_buckets(void *arg, int64_t lo, int64_t hi, int tid)
{
  const msd_sort *M = (const msd_sort *)arg;
  (void)tid;
  for (int64_t d = lo; d < hi; d++) {
    const int64_t s = M->start[d], m = M->start[d + 1] - M->start[d];
    sort_bucket(M->k2 + s, M->o2 + s, M->key + s, M->order + s, m, M->shift);
    memcpy(M->key + s, M->k2 + s, (size_t)m * sizeof *M->key);
    memcpy(M->order + s, M->o2 + s, (size_t)m * sizeof *M->order);
  }
}

/* The same order (a stable sort by key is one order) by one pass on the
 * top RADIX_BITS of the key's `bits` (each stripe of points counts its
 * digits, in parallel, then scatters from its own offsets), then each bucket
 * sorted on its own by sort_bucket(), buckets shared among the threads:
 * one scatter over the whole array instead of one per 11 bits, the rest
 * inside buckets small enough for the caches, and three parallel passes
 * (counts, scatter, buckets) instead of two per pass; (k2, o2), n each, is
 * the scratch. WT_OK or WT_ERR_NOMEM (nothing changed). */
static int sort_keys_msd(uint64_t *key, int64_t *order, int64_t n, int bits,
                         int stripes, uint64_t *k2, int64_t *o2)
{
  const int shift = bits - RADIX_BITS;
  int64_t *cnt = malloc((size_t)stripes * RADIX * sizeof *cnt);
  int64_t *start = malloc((size_t)(RADIX + 1) * sizeof *start);
  if (!cnt || !start) {
    free(cnt);
    free(start);
    return WT_ERR_NOMEM;
  }
  msd_sort M = {key, k2, order, o2, n, shift, stripes, cnt, start};
  wt_team_run(stripes, msd_count, &M);
  /* offsets: digit-major, stripe-minor; each digit's bucket start */
  int64_t run = 0;
  for (int d = 0; d < RADIX; d++) {
    start[d] = run;
    for (int t = 0; t < stripes; t++) {
      int64_t v = cnt[(size_t)t * RADIX + d];
      cnt[(size_t)t * RADIX + d] = run;
      run += v;
    }
  }
  start[RADIX] = run;
  wt_team_run(stripes, msd_scatter, &M);
  wt_team_for(stripes, RADIX, 8, msd_buckets, &M);
  free(cnt);
  free(start);
  return WT_OK;
}

int wt_grid_stripes(int64_t n, int n_threads)
{
  /* a stripe per 65536 points at most: fewer are not worth a thread (all
   * or one before, so a range of 10^6 points on 64 threads sorted on one) */
  int stripes = n_threads < 1 ? 1 : n_threads;
  if (n < (int64_t)stripes * 65536)
    stripes = n / 65536 > 1 ? (int)(n / 65536) : 1;
  return stripes;
}

/* (key, order) sorted by key, with (k2, o2) of n as scratch */
int wt_grid_sort_keys(uint64_t *key, int64_t *order, int64_t n, int bits,
                      int n_threads, uint64_t *k2, int64_t *o2)
{
  const int stripes = wt_grid_stripes(n, n_threads);
  /* many points: one pass on the top digit, then buckets; else (and with
   * WTHETA_GRID_SORT=lsd, to compare) LSD passes over all of them */
  const char *how = getenv("WTHETA_GRID_SORT");
  if (n >= 65536 && bits > 2 * RADIX_BITS && !(how && strcmp(how, "lsd") == 0))
    return sort_keys_msd(key, order, n, bits, stripes, k2, o2);
  sort_bucket(key, order, k2, o2, n, bits);
  return WT_OK;
}
