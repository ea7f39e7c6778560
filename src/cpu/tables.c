/* The CPU kernels' private forms of the bin table: the packed double table
 * and the float table with its rigorous error bound. See engine.h. */
#include "engine.h"

/* For table_steps <= 1 every table cell holds at most one edge, so a d2 in
 * cell k has slot S or S + 1, S = table[k], and it is S + 1 exactly when
 * d2 >= T = upper[S]. Cell k holds the d2 whose bit patterns are B + low,
 * B = (table_base + k) << shift, 0 <= low < 2^shift; as d2 >= 0 the order of
 * the bit patterns is that of the values, so the test is low >= off with
 * off = clamp(bits(T) - B, 0, 2^shift). With c = 2^shift - off, low + c
 * reaches 2^shift exactly when low >= off and stays below 2^(shift+1), so
 *   slot = ((S << shift) + c + low) >> shift = (bits(d2) + e[k]) >> shift,
 *   e[k] = (S << shift) + c - B   (mod 2^64),
 * one add and one shift per pair; (S + 2) << shift must not overflow. */
void wt_cpu_pack_table(const wt_bins *bins, uint64_t *e)
{
  const int sh = bins->table_shift;
  const uint64_t cell = UINT64_C(1) << sh;
  for (int k = 0; k < bins->table_size; k++) {
    uint64_t s = bins->table[k];
    uint64_t b = (uint64_t)(bins->table_base + k) << sh;
    uint64_t t = d2_bits(bins->upper[s]);
    uint64_t off = t <= b ? 0 : t - b > cell ? cell : t - b;
    e[k] = (s << sh) + (cell - off) - b;
  }
}

/* An upper bound on |d2f - d2| for pairs of points of norm at most
 * 1 + 2^-40 whose float d2f is below v >= 2^-20: d2 is the double result and
 * d2f the float one, from coordinates rounded to float and float
 * operations that round each product and each sum at most once (separate
 * operations, or fused multiply-adds, which round fewer times). Let u =
 * 2^-24, eta = 2^-126 (underflow, even with flush to zero or denormals as
 * zero) and D the exact chord of the double coordinates.
 * Rounding a coordinate moves it by at most u times its size, so the float
 * differences df_k are off the exact ones delta_k by E_k, with
 * |E| <= u (2 + 2^-39 + D) + 2 u^2 + 3 eta (Euclidean norms), and by
 * Cauchy-Schwarz
 *   sum |df_k^2 - delta_k^2| <= 2 |E| D + |E|^2;
 * the products and sums then add u P + 2 u (1 + u)^2 P + 4 eta at most,
 * P = (D + |E|)^2, and the double d2 is within 2^-50 D^2 of D^2. Also
 * D^2 <= v (1 + 2^-10) as long as the bound stays below v 2^-12 (checked by
 * the caller), for the bound over D^2 falls as D grows. The factor 1 + 2^-20
 * covers the rounding of this computation. */
static double f32_err(double v)
{
  const double u = 0x1p-24, eta = 0x1p-126;
  double d = sqrt(v * (1 + 0x1p-10));
  double e = u * (2 + 0x1p-39 + d) + 2 * u * u + 3 * eta;
  double p = (d + e) * (d + e);
  double err = 2 * e * d + e * e + u * p + 2 * u * (1 + u) * (1 + u) * p
    + 4 * eta + 0x1p-50 * d * d;
  return err * (1 + 0x1p-20);
}

static double f32_value(uint32_t bits)
{
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* bits of the smallest float >= t, for 0 < t < 2^127 */
static uint32_t f32_bits_up(double t)
{
  float f = (float)t;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (double)f < t ? u + 1 : u;
}

/* wt_slot_of() by a walk from slot s, for arguments that change little */
static int slot_near(const double *upper, int s, double d2)
{
  while (d2 >= upper[s]) s++;               /* the last upper is +inf */
  while (s > 0 && d2 < upper[s - 1]) s--;
  return s;
}

/* The float table. Cell k covers the floats whose bit patterns are B + low,
 * 0 <= low < 2^sh, sh = 23 - m, B = (f32_base + k) << sh: binade
 * WT_F32_EMIN + (k >> m) cut in 2^m cells. With err = f32_err(top of the
 * binade), an exact d2 is within err of its float d2f, so it lies in the
 * cell widened by err on both sides; the table is only built when every
 * widened cell holds at most one edge. Let S be the slot of the widened
 * cell's bottom. In ulps of the binade err is below M, a power of two per
 * binade, M <= 2^(sh-2).
 *  - No edge in the widened cell: every pair there has slot S, and
 *    e = (S << w) + 2^(sh-1), w = sh + 1.
 *  - One edge T = upper[S]: let t be the bits of the smallest float >= T
 *    and off = max(t - B, 0), in [0, 2^sh + M]. If low >= off + M, then d2f
 *    is at least M ulps above T (at least low ulps if T is below the cell),
 *    so d2 >= d2f - err >= T: slot S + 1; if low < off - M, then d2f is more
 *    than M ulps below T (ulps above the cell are larger), so
 *    d2 <= d2f + err < T: slot S; in between the float cannot decide.
 *    With e = (S << w) + 2^w - off + M, y = low + e is (S << w) + x,
 *    x = 2^w + low - off + M in [2^sh, 2^(w+1)), so y >> w is
 *    S + (low >= off - M), right whenever decided, and undecided exactly when
 *    the bits [log2(2M), w) of y are all 0; without an edge x is in
 *    [2^(sh-1), 2^w) and those bits are never all 0.
 * A pair is thus counted from its float d2f as slot y >> w unless
 * (y & window[binade]) == 0, window = (2^w - 1) & ~(2M - 1), or its key is
 * outside the table; those pairs are redone in double. Returns 0 when no m
 * gives a table (then the double kernels run). */
int wt_cpu_f32_table(wt_ctx *c, uint32_t *tab)
{
  const double *upper = c->bins->upper;
  /* the fewest cells that work: with at most 64 (m <= 1), the kernel
   * keeps the table in registers (wt_ctx.f32_small); the cells past the
   * table's end read as 0 there, never used (their keys are out of range) */
  memset(tab, 0, 64 * sizeof *tab);
  for (int m = 0; m <= WT_F32_MMAX; m++) {
    const int sh = 23 - m, w = sh + 1;
    int ok = ((uint64_t)c->n_slots + 2) << w <= UINT64_C(1) << 32;
    int s = 0, s_hi = 0;   /* slots of the ends of the widened cells */
    for (int bi = 0; ok && bi < WT_F32_BINADES; bi++) {
      const int ex = WT_F32_EMIN + bi;
      const double err = f32_err(ldexp(1.0, ex + 1));
      const double need = err / ldexp(1.0, ex - 23) + 1;
      uint32_t M = 1;
      while (M < need) M <<= 1;
      if (err > ldexp(1.0, ex + 1 - 12) || M > (1u << (sh - 2))) ok = 0;
      c->f32_window[bi] = ((1u << w) - 1) & ~(2 * M - 1);
      for (int q = 0; ok && q < (1 << m); q++) {
        uint32_t cell = (uint32_t)(ex + 127) << 23 | (uint32_t)q << sh;
        double lo = f32_value(cell) - err;
        double hi = f32_value(cell + (1u << sh) - 1) + err;
        s = slot_near(upper, s, lo);
        s_hi = slot_near(upper, s_hi, hi);
        int64_t e = ((int64_t)s << w) + ((int64_t)1 << (sh - 1));
        if (s_hi == s + 1) {
          int64_t off = (int64_t)f32_bits_up(upper[s]) - cell;
          if (off < 0) off = 0;
          if (off > ((int64_t)1 << sh) + M) ok = 0;
          e = ((int64_t)s << w) + ((int64_t)1 << w) - off + M;
        } else if (s_hi != s) {
          ok = 0;
        }
        tab[(bi << m) | q] = (uint32_t)e;
      }
    }
    if (ok) {
      c->f32_shift = sh;
      c->f32_m = m;
      c->f32_base = (127 + WT_F32_EMIN) << m;
      c->f32_small = (WT_F32_BINADES << m) <= 64;
      return 1;
    }
  }
  return 0;
}

/* The narrow kernel's thresholds (see wt_ctx), in mem: 4 n_slots floats.
 * Only called once the float table exists, so that every binade of
 * [2^-20, 4) has f32_err(top) <= top 2^-12. For an edge T = upper[s] in
 * [WT_NARROW_MIN, WT_NARROW_MAX), 2^(e-1) <= T < 2^e, let v = 2^(e+1) and
 * E = f32_err(v) + T 2^-50 (the latter for the rounding of T +- E here):
 *  - a d2f below v has |d2 - d2f| <= E; so d2f < edge_lo (a float at or
 *    below T - E) gives d2 < T, and edge_hi <= d2f < v (edge_hi a float at
 *    or above T + E) gives d2 >= T;
 *  - a d2f in [v, 4) lies in a binade [2^x, 2^(x+1)) of the table, so
 *    d2 >= d2f - 2^(x+1-12) >= d2f (1 - 2^-11) > v / 2 > T.
 * Other edges (and the +inf above the last) get NaN, which no comparison
 * passes: such ranges are never narrow (the driver checks) and would only
 * be redone in double if they were. The kernel decides only d2f in
 * [WT_NARROW_MIN, WT_NARROW_MAX), so that both cases cover every decided
 * pair. */
void wt_cpu_narrow_edges(wt_ctx *c, float *mem)
{
  const int n = c->n_slots;
  float *lo = mem, *hi = mem + n, *lo_of = mem + 2 * n, *hi_of = mem + 3 * n;
  for (int s = 0; s < n; s++) {
    const double t = c->bins->upper[s];
    lo[s] = hi[s] = NAN;
    if (!(t >= (double)WT_NARROW_MIN && t < (double)WT_NARROW_MAX)) continue;
    int e;
    frexp(t, &e);
    const double v = ldexp(1.0, e + 1), err = f32_err(v) + t * 0x1p-50;
    if (err > v * 0x1p-12) continue;
    const double down = (t - err) * (1 - 0x1p-52);
    const double up = (t + err) * (1 + 0x1p-52);
    float fl = (float)down, fh = (float)up;
    if ((double)fl > down) fl = nextafterf(fl, -INFINITY);
    if ((double)fh < up) fh = nextafterf(fh, INFINITY);
    lo[s] = fl;
    hi[s] = fh;
  }
  for (int s = 0; s < n; s++) {
    lo_of[s] = s == 0 ? WT_NARROW_MIN : fmaxf(hi[s - 1], WT_NARROW_MIN);
    if (s > 0 && isnan(hi[s - 1])) lo_of[s] = NAN;
    hi_of[s] = s == n - 1 ? WT_NARROW_MAX : fminf(lo[s], WT_NARROW_MAX);
    if (s < n - 1 && isnan(lo[s])) hi_of[s] = NAN;
  }
  c->edge_lo = lo;
  c->edge_hi = hi;
  c->lo_of = lo_of;
  c->hi_of = hi_of;
}

/* all points of norm at most 1 + 2^-40 (and not NaN), as f32_err()
 * assumes; the rounding of the squared norm is far below the slack */
int wt_cpu_unit_norms(const wt_points *p)
{
  for (int64_t i = 0; i < p->n; i++) {
    double n2 = p->x[i] * p->x[i] + p->y[i] * p->y[i] + p->z[i] * p->z[i];
    if (!(n2 <= 1 + 0x1p-40)) return 0;
  }
  return 1;
}

