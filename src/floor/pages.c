/* Large buffers on transparent huge pages: see pages.h */
#include "pages.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define WT_HAVE_THP 1
#else
#define WT_HAVE_THP 0
#endif

/* 1 on, 0 off, -1 not read yet (then read at first use, as before any
 * refresh) */
static int huge_on = -1;

static int huge_wanted(void)
{
  const char *v = getenv("WTHETA_HUGE_PAGES");
  return WT_HAVE_THP && !(v && strcmp(v, "0") == 0);
}

void wt_huge_pages_refresh(void)
{
  __atomic_store_n(&huge_on, huge_wanted(), __ATOMIC_RELAXED);
}

int wt_huge_pages(void)
{
  int v = __atomic_load_n(&huge_on, __ATOMIC_RELAXED);
  if (v < 0) {
    v = huge_wanted();
    __atomic_store_n(&huge_on, v, __ATOMIC_RELAXED);
  }
  return v;
}

void *wt_alloc_big(size_t bytes)
{
#if WT_HAVE_THP
  if (bytes >= WT_HUGE_MIN && wt_huge_pages()) {
    const size_t len = (bytes + WT_HUGE_PAGE - 1) & ~(WT_HUGE_PAGE - 1);
    void *p = NULL;
    if (len < bytes || posix_memalign(&p, WT_HUGE_PAGE, len) != 0)
      return NULL;
    (void)madvise(p, len, MADV_HUGEPAGE);   /* advice: failure is harmless */
    return p;
  }
#endif
  return malloc(bytes);
}

void *wt_calloc_big(size_t n, size_t size)
{
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  const size_t bytes = n * size;
  if (bytes < WT_HUGE_MIN || !wt_huge_pages()) return calloc(n, size);
  void *p = wt_alloc_big(bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

void *wt_realloc_big(void *p, size_t bytes)
{
  void *q = realloc(p, bytes);
  wt_advise_big(q, bytes);
  return q;
}

void wt_advise_big(void *p, size_t bytes)
{
#if WT_HAVE_THP
  if (p == NULL || bytes < WT_HUGE_MIN || !wt_huge_pages()) return;
  const uintptr_t a = (uintptr_t)p, e = a + bytes;
  const uintptr_t lo = (a + WT_HUGE_PAGE - 1) & ~(uintptr_t)(WT_HUGE_PAGE - 1);
  const uintptr_t hi = e & ~(uintptr_t)(WT_HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/* kB of huge pages backing the mapping that holds p (Linux's
 * /proc/self/smaps, AnonHugePages), or -1 where it cannot be read */
static int64_t huge_kb_at(const void *p)
{
#ifdef __linux__
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0;
  int64_t kb = -1;
  const uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    long long v;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
        line[0] != ' ') {
      inside = a >= lo && a < hi;
    } else if (inside && sscanf(line, "AnonHugePages: %lld kB", &v) == 1) {
      kb = v;
      break;
    }
  }
  fclose(f);
  return kb;
#else
  (void)p;
  return -1;
#endif
}

int wt_memory_check(size_t bytes, int64_t out[6])
{
  for (int k = 0; k < 6; k++) out[k] = 0;
  out[0] = wt_huge_pages();
  /* zeroed: each of three rounds frees a dirty buffer of this size just
   * before the zeroed one is allocated, so that it can be that memory
   * (glibc keeps freed chunks of a size once its mmap threshold has grown
   * to it, after the first round) */
  out[3] = 1;
  for (int round = 0; round < 3; round++) {
    unsigned char *d = wt_alloc_big(bytes);
    if (!d) return -1;
    memset(d, 0xA5, bytes);
    /* the compiler must not drop the writes as dead before free() */
    __asm__ volatile("" : : "r"(d) : "memory");
    free(d);
    unsigned char *z = wt_calloc_big(bytes, 1);
    if (!z) return -1;
    for (size_t i = 0; i < bytes; i++) out[3] &= z[i] == 0;
    out[5] = huge_kb_at(z + bytes / 2);
    free(z);
  }
  unsigned char *p = wt_alloc_big(bytes);
  if (!p) return -1;
  out[1] = ((uintptr_t)p & (WT_HUGE_PAGE - 1)) == 0;
  for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)(i * 7u + 3u);
  out[4] = huge_kb_at(p + bytes / 2);
  unsigned char *q = wt_realloc_big(p, 2 * bytes);
  if (!q) {
    free(p);
    return -1;
  }
  int same = 1;
  for (size_t i = 0; i < bytes; i++)
    same &= q[i] == (unsigned char)(i * 7u + 3u);
  memset(q + bytes, 1, bytes);
  out[2] = same;
  free(q);
  return 0;
}
