/* Thread counts for the CPU engine (threads.c). */
#ifndef WT_THREADS_H
#define WT_THREADS_H
#include <stdint.h>
int wt_cpu_cores(void);
#include <stddef.h>
int wt_default_threads(int available);
/* 0 when a team of n threads can start, else -1 and a message */
int wt_threads_start(int n, char *msg, size_t len);
int wt_cap_threads(int requested);
/* at most one thread per grain points of a light pass */
int wt_threads_for(int requested, int64_t n, int64_t grain);
#define WT_LIGHT_GRAIN 25000
/* ... per grain dot products of the nearest patch centres, and per grain
 * points of a pass with trigonometric functions per point */
#define WT_NEAREST_GRAIN 100000
#define WT_TRIG_GRAIN 4096
void wt_threads_init(void);
#endif
