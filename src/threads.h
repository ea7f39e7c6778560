/* Thread counts for the CPU engine (threads.c). */
#ifndef WT_THREADS_H
#define WT_THREADS_H
#include <stdint.h>
int wt_cpu_cores(void);
int wt_default_threads(void);
int wt_cap_threads(int requested);
/* at most one thread per grain points of a light pass */
int wt_threads_for(int requested, int64_t n, int64_t grain);
#define WT_LIGHT_GRAIN 25000
void wt_threads_init(void);
#endif
