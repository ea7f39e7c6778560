/* Thread counts for the CPU engine (threads.c). */
#ifndef WT_THREADS_H
#define WT_THREADS_H
int wt_cpu_cores(void);
int wt_default_threads(void);
int wt_cap_threads(int requested);
void wt_threads_init(void);
#endif
