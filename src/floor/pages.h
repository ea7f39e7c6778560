/* Large buffers on transparent huge pages (pages.c).
 *
 * Why: a page touched for the first time costs a fault, and on the
 * virtual machines we run on that fault is dear. Writing 4 GB of fresh
 * memory on 16 threads of the H200 host took 205 ms in 4 kB pages and 82
 * ms in 2 MB ones, and handing it back 237 ms against 12 ms; on the
 * 2-core development VM 256 MB took 690 ms against 17 ms. A count at
 * 10^7 to 10^8 points allocates gigabytes (the grid's sorted copy, its
 * keys, the unit vectors), so most of the host's time before the first
 * kernel and after the last was the kernel's page handling
 * (bench/kernel/kernel-notes.md, fifteenth session).
 *
 * Linux gives huge pages to anonymous memory only where asked when
 * /sys/kernel/mm/transparent_hugepage/enabled is "madvise" (the machines
 * we use). So buffers of WT_HUGE_MIN bytes or more are allocated aligned
 * to 2 MB, their size rounded up to whole huge pages, and advised with
 * MADV_HUGEPAGE before anything touches them. Freed with free(), like
 * any other. Elsewhere (no MADV_HUGEPAGE), and with the environment
 * variable WTHETA_HUGE_PAGES=0 (for benchmarks and tests; read by
 * wt_huge_pages_refresh() on R's thread as each count and each set of
 * unit vectors starts, so that the engines' threads, which may run while
 * R changes the environment, do not read it; only a first use before any
 * refresh reads it where it is), they are plain malloc() and
 * calloc(). */
#ifndef WT_FLOOR_PAGES_H
#define WT_FLOOR_PAGES_H
#include <stddef.h>
#include <stdint.h>

#define WT_HUGE_PAGE ((size_t)2 << 20)
/* From 32 MB only: below it glibc serves a buffer from its shared heap
 * once its mmap threshold has grown (to at most 32 MB on 64-bit), and the
 * advice then stays on heap ranges that R's own memory reuses. With the
 * threshold at 4 MB the plain 10^5 x 5 x 10^5 call of bench/survey.R ran
 * 8-10% slower on the development VM (R's collector walking its node
 * lists took twice its share); from 32 MB every buffer is a mapping of
 * its own, and that call is as before. */
#define WT_HUGE_MIN ((size_t)32 << 20)

#ifdef __cplusplus
extern "C" {
#endif

/* malloc(bytes), on huge pages from WT_HUGE_MIN bytes on */
void *wt_alloc_big(size_t bytes);

/* calloc(n, size), the same way (zeroed by memset when on huge pages) */
void *wt_calloc_big(size_t n, size_t size);

/* realloc(p, bytes), the grown buffer advised from WT_HUGE_MIN bytes on
 * (its pages not yet touched take huge ones) */
void *wt_realloc_big(void *p, size_t bytes);

/* memory allocated elsewhere (an R vector's data), not yet touched: the
 * whole huge pages inside [p, p + bytes) advised, when bytes is at least
 * WT_HUGE_MIN */
void wt_advise_big(void *p, size_t bytes);

/* whether huge pages are asked for (1), or not (0: WTHETA_HUGE_PAGES=0
 * at the last refresh, or a system without MADV_HUGEPAGE) */
int wt_huge_pages(void);

/* WTHETA_HUGE_PAGES read again (R's thread only) */
void wt_huge_pages_refresh(void);

/* For tests: buffers of `bytes` through the functions above. out: huge
 * pages asked for; a buffer aligned to a huge page; its bytes kept
 * through wt_realloc_big() to twice the size; wt_calloc_big() zeroed in
 * three rounds, each just after a dirty buffer of the size was freed; the
 * kB of huge pages (AnonHugePages) of the buffer's and of the last zeroed
 * one's mappings, -1 where /proc/self/smaps cannot be read. 0, or -1 out
 * of memory. */
int wt_memory_check(size_t bytes, int64_t out[6]);

#ifdef __cplusplus
}
#endif

#endif
