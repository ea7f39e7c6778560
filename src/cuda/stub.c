/* Built in place of the CUDA engine (cuda/entry.cu) when nvcc is absent or WTHETA_CUDA=0:
 * the same symbols, reporting that CUDA support is not compiled in. */
#include <string.h>
#include "wt.h"

int wt_cuda_compiled(void) { return 0; }

int wt_cuda_release(void) { return 0; }

int wt_cuda_device_count(char *msg, size_t msg_len)
{
  if (msg && msg_len) {
    strncpy(msg, "wtheta was built without CUDA support", msg_len - 1);
    msg[msg_len - 1] = '\0';
  }
  return 0;
}

int wt_cuda_device_info(int device, char *name, size_t name_len,
                        int *major, int *minor, double *mem_bytes)
{
  (void)device; (void)name; (void)name_len;
  (void)major; (void)minor; (void)mem_bytes;
  return WT_ERR_NO_CUDA;
}

int wt_count_cuda(wt_job *job)
{
  (void)job;
  return WT_ERR_NO_CUDA;
}

int wt_cuda_stream_open(wt_job *job, void **h)
{
  (void)job;
  if (h) *h = NULL;
  return WT_ERR_NO_CUDA;
}

int wt_cuda_stream_feed(void *h, const wt_task *tasks, int64_t n)
{
  (void)h; (void)tasks; (void)n;
  return WT_ERR_NO_CUDA;
}

int wt_cuda_stream_close(void *h, int abort)
{
  (void)h; (void)abort;
  return WT_ERR_NO_CUDA;
}
