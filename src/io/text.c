/* Text catalogs held in one buffer: content lines, fields, numbers. One
 * pass per column set, no copy of the text; numbers are read exactly as
 * strtod() reads them (correctly rounded), with a fast exact path for the
 * usual short decimals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wt.h"
#include "io.h"

static int blank(char c) { return c == ' ' || c == '\t'; }

int wt_text_next(const char *buf, int64_t len, int64_t *pos, int64_t *s,
                 int64_t *e)
{
  int64_t p = *pos;
  if (p == 0 && len >= 3 && (unsigned char)buf[0] == 0xef &&
      (unsigned char)buf[1] == 0xbb && (unsigned char)buf[2] == 0xbf)
    p = 3;
  while (p < len) {
    int64_t ls = p, ce = -1;
    while (p < len && buf[p] != '\n' && buf[p] != '\r') {
      if (buf[p] == '#' && ce < 0) ce = p;
      p++;
    }
    int64_t le = ce < 0 ? p : ce;
    if (p < len) {                       /* past the line end */
      if (buf[p] == '\r' && p + 1 < len && buf[p + 1] == '\n') p++;
      p++;
    }
    while (ls < le && blank(buf[ls])) ls++;
    while (le > ls && blank(buf[le - 1])) le--;
    if (le > ls) {
      *pos = p;
      *s = ls;
      *e = le;
      return 1;
    }
  }
  *pos = p;
  return 0;
}

int64_t wt_text_count(const char *buf, int64_t len, int64_t *nul)
{
  const char *z = len > 0 ? memchr(buf, 0, (size_t)len) : NULL;
  *nul = z ? (int64_t)(z - buf) : -1;
  int64_t pos = 0, s, e, n = 0;
  while (wt_text_next(buf, len, &pos, &s, &e)) n++;
  return n;
}

void wt_text_line_at(const char *buf, int64_t len, int64_t off,
                     int64_t *line_no, int64_t *ls, int64_t *le)
{
  int64_t n = 1, start = 0;
  for (int64_t p = 0; p < off && p < len; p++) {
    if (buf[p] == '\n' || buf[p] == '\r') {
      if (buf[p] == '\r' && p + 1 < len && buf[p + 1] == '\n') p++;
      n++;
      start = p + 1;
    }
  }
  int64_t end = start;
  while (end < len && buf[end] != '\n' && buf[end] != '\r') end++;
  *line_no = n;
  *ls = start;
  *le = end;
}

/* The field that starts at *p in the line ending at e: [*fa, *fb), blanks
 * trimmed. Whitespace-separated (sep 0): *p moves past the field and the
 * blanks after it; otherwise *p stops at the separator (or e), which the
 * caller steps over. */
static inline void next_field(const char *buf, int64_t *p, int64_t e, int sep,
                              int64_t *fa, int64_t *fb)
{
  int64_t q = *p, a = q, b;
  if (sep == 0) {
    while (q < e && !blank(buf[q])) q++;
    b = q;
    while (q < e && blank(buf[q])) q++;
  } else {
    while (q < e && buf[q] != sep) q++;
    b = q;
    while (a < b && blank(buf[a])) a++;
    while (b > a && blank(buf[b - 1])) b--;
  }
  *p = q;
  *fa = a;
  *fb = b;
}

int wt_text_field(const char *buf, int64_t s, int64_t e, int sep, int k,
                  int64_t *fs, int64_t *fe)
{
  int64_t p = s;
  for (int i = 0;; i++) {
    int64_t a, b;
    next_field(buf, &p, e, sep, &a, &b);
    if (i == k) {
      *fs = a;
      *fe = b;
      return 1;
    }
    if (p >= e) return 0;
    if (sep != 0) p++;                   /* past the separator */
  }
}

static const double pow10_exact[23] = {
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
  1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static int parse_slow(const char *s, const char *e, double *v)
{
  char small[64], *tmp = small;
  size_t n = (size_t)(e - s);
  if (n >= sizeof small && !(tmp = malloc(n + 1))) return 0;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  char *end;
  *v = strtod(tmp, &end);
  int ok = end == tmp + n && n > 0;
  if (tmp != small) free(tmp);
  return ok;
}

int wt_parse_number(const char *s, const char *e, double *v)
{
  if (s == e || (e - s == 2 && s[0] == 'N' && s[1] == 'A')) {
    *v = NAN;
    return 2;
  }
  const char *p = s;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  uint64_t m = 0;
  int nd = 0, frac = 0, ex = 0;
  while (p < e && *p >= '0' && *p <= '9') { m = m * 10 + (uint64_t)(*p++ - '0'); nd++; }
  if (p < e && *p == '.') {
    p++;
    while (p < e && *p >= '0' && *p <= '9') {
      m = m * 10 + (uint64_t)(*p++ - '0');
      nd++;
      frac++;
    }
  }
  if (nd == 0 || nd > 19) return parse_slow(s, e, v);
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    int eneg = 0, ed = 0;
    if (p < e && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    while (p < e && *p >= '0' && *p <= '9' && ed < 5) { ex = ex * 10 + (*p++ - '0'); ed++; }
    if (ed == 0 || ed == 5) return parse_slow(s, e, v);
    if (eneg) ex = -ex;
  }
  if (p != e) return parse_slow(s, e, v);
  int k = ex - frac;
  /* exact operands and one rounding: correctly rounded (Clinger) */
  if (m > ((uint64_t)1 << 53) || k < -22 || k > 22) return parse_slow(s, e, v);
  double x = (double)m;
  x = k < 0 ? x / pow10_exact[-k] : x * pow10_exact[k];
  *v = neg ? -x : x;
  return 1;
}

int64_t wt_text_row_offset(const char *buf, int64_t len, int64_t skip,
                           int64_t row)
{
  int64_t pos = 0, s, e, i = 0;
  while (wt_text_next(buf, len, &pos, &s, &e)) {
    if (i++ == skip + row) return s;
  }
  return -1;
}

int wt_text_parse(const char *buf, int64_t len, int sep, int64_t skip,
                  int64_t n_rows, int ncol, const int *cols, double **out,
                  int64_t *bad, int64_t *na, int64_t *short_row)
{
  int64_t pos = 0, s, e;
  int maxcol = 0;
  for (int j = 0; j < ncol; j++) {
    bad[j] = na[j] = -1;
    if (cols[j] > maxcol) maxcol = cols[j];
  }
  *short_row = -1;
  int64_t *fs = malloc(sizeof(int64_t) * 2 * (size_t)(maxcol + 1));
  if (!fs) return WT_ERR_NOMEM;
  int64_t *fe = fs + maxcol + 1;
  for (int64_t i = 0; i < skip && wt_text_next(buf, len, &pos, &s, &e); i++) {}
  for (int64_t r = 0; r < n_rows; r++) {
    if (!wt_text_next(buf, len, &pos, &s, &e)) { *short_row = r; break; }
    /* the fields up to the last one wanted, in one walk */
    int64_t p = s;
    int k;
    for (k = 0; k <= maxcol; k++) {
      next_field(buf, &p, e, sep, &fs[k], &fe[k]);
      if (p >= e) { k++; break; }
      if (sep != 0) p++;
    }
    if (k <= maxcol) { *short_row = r; break; }
    for (int j = 0; j < ncol; j++) {
      double v;
      int c = cols[j];
      int got = wt_parse_number(buf + fs[c], buf + fe[c], &v);
      if (got == 0) {
        if (bad[j] < 0) bad[j] = r;
        v = NAN;
      } else if (!isfinite(v) && na[j] < 0) {
        na[j] = r;
      }
      out[j][r] = v;
    }
  }
  free(fs);
  return WT_OK;
}
