/* The CUDA engine: pair counts on one or more GPUs, bit-identical to the CPU
 * engine (see the exactness contract in wt.h).
 *
 * Fast path. Each pair is first placed with single-precision arithmetic:
 *   q = fl(fl(fl(1 + c - x_i x_j) - y_i y_j) - z_i z_j)        (three FMAs)
 * is d2 / 2 + c up to a rigorous absolute error E (the float rounding of the
 * coordinates, the three FMA roundings, and the deviation of the inputs from
 * unit length; see fast_margin()). The high bits of q pick a cell of a table
 * in shared memory (log-spaced cells: 2^MB per octave of q). Each cell holds
 * the float threshold of the one edge that can matter for any q in it, or
 * +inf when none can, or NaN when several can. The pair is counted in one
 * of two per-cell counters, below or at/above the threshold (the sign of
 * q - threshold picks it); at flush time each cell counter is added to the
 * slot it stands for. When |q - threshold| < M (M > E plus the threshold's
 * own rounding; NaN included) the pair is re-examined with the exact double
 * d2 of wt.h (no FMA: __dsub_rn/__dmul_rn/__dadd_rn) and, if the exact slot
 * differs, its count is moved to a per-slot counter. Counts are therefore
 * exactly those of the double decision. Such pairs do not make the warp
 * diverge: the steps holding one are queued per warp and re-examined by
 * all its lanes together (drain_queue). A warp's lanes form G groups, each
 * on its own j point, so that an instruction covers RL i points x G j
 * points (fewer distinct cells, fewer bank conflicts).
 *
 * Inputs the margin proof does not cover (non-finite coordinates, vectors
 * not of unit length, edges that are not non-decreasing), or edge sets so
 * dense that most cells hold several edges, go through an exact kernel that
 * evaluates every pair in double with the CPU engine's own lookup.
 *
 * Weights (wt_points.w) and PIP factors: the weighted kernel
 * (kernel_weighted.cuh) decides each pair's slot in float with the fast
 * kernel's table and margin, redoes the pairs within the margin of an edge
 * in double, and adds w_i w_j (times the PIP factor, from the popcount of
 * the ANDed words) in double into per-slot sums, runs of j points in one
 * slot summed in registers first. PIP jobs whose weights are all 1 take
 * its count form (wt_pipcount_kernel): pairs counted by slot and popcount
 * in shared memory, the weight sums made from those counts at each flush.
 * Jobs it does not take (angle sums,
 * angular upweights, more than WMAXW words, inputs the margin proof does
 * not cover) go through the exact kernel, which adds the same sums with
 * every pair decided in double. The bins are decided exactly as for the
 * counts either way. The sums are those of the CPU engine up to the order
 * of the additions (atomics), so they agree to about 1e-15 relative, not
 * bit for bit, and differ that little from run to run.
 *
 * Task lists (wt_task): every task is cut along chunk boundaries into
 * pieces, each piece into rows of at most one block's share of i points
 * and rows into items; an item names its histogram (task.out), and a block
 * flushes its shared counters into that histogram's 64-bit counters when it
 * moves to an item of another histogram. All tasks between one pair of
 * chunks go into the same launches (no host round trip per task). Items
 * of fewer i points than a block holds use only as many registers' worth
 * of i points as they need (NK), so small patches waste few lanes.
 *
 * Counters: 32-bit, per block, in shared memory; shared atomics (the +1
 * increments compile to ATOMS.POPC.INC, which merges lanes that hit the
 * same word); flushed to 64-bit global counters at the end of every launch,
 * on a change of histogram, or before any could wrap. Catalogs are copied
 * to the device in chunks as given (three double arrays, and the weights);
 * the device sorts each chunk along a Hilbert curve (CUB radix sort of cell
 * keys whose high bits are the point's segment between task boundaries, so
 * points move only inside task ranges) so that the lanes of a warp hold
 * close points (fewer bank conflicts), and packs the float and double
 * copies the kernels read. Points that come in spatial order (the grid's,
 * job->ordered) are packed as they are. When the catalogs' packed copies
 * fit in half the free device memory, every chunk is loaded once and stays
 * for the call; otherwise two slots hold the chunks of the launch at hand.
 * Work is cut into launches of bounded size that
 * blocks pull item by item; launches are queued one ahead of the one
 * running. One host thread drives each device; the calling thread polls
 * (job->poll, with the pairs of the launches retired so far) and joins.
 * Test faults (job->fault, from WTHETA_TEST_FAULT) fail a device
 * allocation, the first launch, the copy back or the worker thread, and
 * take the real error path (the context is destroyed). Streams, events
 * and buffers are kept between calls in a per-device cache (grow-only;
 * dropped after any error), so a warm call costs little more than its
 * copies and kernels.
 * No R API, no printing, no exit.
 *
 * Where the fast kernel's time goes (instruction issue more than
 * shared-memory wavefronts) is in bench/kernel/kernel-notes.md. */
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "wt.h"

/* host-only planning, compiled apart by the C++ compiler (plan_*.cxx) */
#include "shape.h"
#include "plan.h"
using namespace wt_cuda;

/* the rooms of the engine, in the order they build on each other; each
 * adds to this file's anonymous namespace */
#include "device.cuh"
#include "kernel_fast.cuh"
#include "kernel_exact.cuh"
#include "kernel_weighted.cuh"
#include "order.cuh"
#include "pool.cuh"
#include "worker.cuh"

namespace {

int count_impl(wt_job *job)
{
  if (!job->devices || job->n_devices < 1) {
    set_msg(job->message, sizeof job->message, "no CUDA device was given");
    return WT_ERR_NO_DEVICE;
  }
  int n_dev = 0;
  cudaError_t e = cudaGetDeviceCount(&n_dev);
  if (e != cudaSuccess || n_dev < 1) {
    set_msg(job->message, sizeof job->message,
            e != cudaSuccess ? std::string("no usable CUDA device: ") +
                                   cudaGetErrorString(e)
                             : std::string("no CUDA device found"));
    return WT_ERR_NO_DEVICE;
  }
  for (int k = 0; k < job->n_devices; k++) {
    if (job->devices[k] < 0 || job->devices[k] >= n_dev) {
      char buf[128];
      snprintf(buf, sizeof buf, "CUDA device %d does not exist (%d found)",
               job->devices[k], n_dev);
      set_msg(job->message, sizeof job->message, buf);
      return WT_ERR_NO_DEVICE;
    }
  }
  if (!same_shape(kShape)) {
    set_msg(job->message, sizeof job->message,
            "the CUDA engine's plan_*.cxx and entry.cu were built with "
            "different shapes (WT_CUDA_* flags)");
    return WT_ERR_CUDA;
  }
  const wt_bins *bins = job->bins;
  const bool weighted = job->wsum != nullptr;
  const bool angles = job->thsum != nullptr;
  const int scan_threads = job->n_threads > 1 ? job->n_threads : 1;
#ifdef WT_CUDA_FORCE_EXACT
  const Analysis an = analyse(job, scan_threads, true);
#else
  const Analysis an = analyse(job, scan_threads, false);
#endif

  /* plan for the device with the least shared memory */
  size_t smem_sm = SIZE_MAX, smem_block = SIZE_MAX;
  for (int k = 0; k < job->n_devices; k++) {
    int v_sm = 0, v_blk = 0;
    cudaError_t e1 = cudaDeviceGetAttribute(
        &v_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, job->devices[k]);
    cudaError_t e2 = cudaDeviceGetAttribute(
        &v_blk, cudaDevAttrMaxSharedMemoryPerBlockOptin, job->devices[k]);
    if (e1 != cudaSuccess || e2 != cudaSuccess) {
      set_msg(job->message, sizeof job->message,
              cuda_msg("cudaDeviceGetAttribute", job->devices[k],
                       e1 != cudaSuccess ? e1 : e2));
      return WT_ERR_CUDA;
    }
    if ((size_t)v_sm < smem_sm) smem_sm = (size_t)v_sm;
    if ((size_t)v_blk < smem_block) smem_block = (size_t)v_blk;
  }
  std::shared_ptr<const Plan> plan_ref =
      get_plan(bins, an, smem_sm, smem_block, weighted, angles,
               weighted_words(job),
               an.unit_w && job->pip != nullptr && job->pip->n_words > 0);
  const Plan &plan = *plan_ref;

  double total = wt_tasks_pairs(job);
  std::vector<Row> rows;
  std::vector<Launch> launches;
  plan_launches(job, CHUNK, row_points(plan.tiled()),
                launch_pairs(plan.tiled(), total, job->n_devices), rows,
                launches);
  /* the task boundaries the device ordering keeps points inside; none
   * when the points come ordered (the grid's) */
  std::vector<long long> bounds_a, bounds_b;
  if (!job->ordered) {
    bounds_a = task_bounds(job, 0);
    if (!job->is_auto) bounds_b = task_bounds(job, 1);
  }

  Shared sh;
  sh.job = job;
  sh.an = &an;
  sh.plan = plan_ref;
  sh.launches = &launches;
  sh.rows = &rows;
  sh.bounds[0] = &bounds_a;
  sh.bounds[1] = &bounds_b;
  sh.n_out = job->n_out;
  std::vector<Worker *> workers;
  std::vector<std::thread> threads;
  int status = WT_OK;
  try {
    for (int k = 0; k < job->n_devices; k++)
      workers.push_back(new Worker(sh, job->devices[k]));
    for (int k = 0; k < job->n_devices; k++) {
      Worker *w = workers[k];
      {
        std::lock_guard<std::mutex> g(sh.mu);
        sh.running++;
      }
      try {
        threads.emplace_back([w, &sh]() {
          w->run();
          std::lock_guard<std::mutex> g(sh.mu);
          sh.running--;
          sh.cv.notify_all();
        });
      } catch (...) {
        std::lock_guard<std::mutex> g(sh.mu);
        sh.running--;
        throw;
      }
    }
  } catch (...) {
    sh.fail(WT_ERR_WORKER, "could not start the CUDA worker threads");
  }
  bool interrupted = false;
  {
    std::unique_lock<std::mutex> g(sh.mu);
    while (sh.running > 0) {
      sh.cv.wait_for(g, std::chrono::milliseconds(20));
      if (sh.running > 0 && !interrupted && job->poll) {
        g.unlock();
        int hit = job->poll(job->poll_ctx, (double)sh.done.load(), total);
        g.lock();
        if (hit) {
          interrupted = true;
          sh.stop = true;
        }
      }
    }
  }
  for (std::thread &t : threads) t.join();
  if (interrupted) {
    status = WT_ERR_INTERRUPTED;
  } else if (sh.status != WT_OK) {
    status = sh.status;
    set_msg(job->message, sizeof job->message, sh.message);
  } else {
    const size_t n_hist = (size_t)job->n_out * (size_t)an.n_slots;
    for (Worker *w : workers) {
      if (w->counts.size() != n_hist ||
          (weighted && w->wsums.size() != n_hist) ||
          (angles && w->thsums.size() != n_hist)) {
        status = WT_ERR_CUDA;
        set_msg(job->message, sizeof job->message,
                "a CUDA worker returned no counts");
        break;
      }
    }
    if (status == WT_OK) {
      for (Worker *w : workers) {
        for (size_t s = 0; s < n_hist; s++) job->slots[s] += w->counts[s];
        if (weighted)
          for (size_t s = 0; s < n_hist; s++) job->wsum[s] += w->wsums[s];
        if (angles)
          for (size_t s = 0; s < n_hist; s++) job->thsum[s] += w->thsums[s];
        job->gpu_ms += w->ms;
      }
    }
  }
  for (Worker *w : workers) delete w;
  return status;
}

}  // namespace

extern "C" {

int wt_cuda_compiled(void) { return 1; }

int wt_cuda_release(void)
{
  /* every idle context of every device, out of the pool and freed; busy
   * ones (a count running in another thread) stay */
  std::vector<Ctx *> idle;
  {
    Pool &P = pool();
    std::lock_guard<std::mutex> g(P.mu);
    std::vector<Ctx *> keep;
    for (Ctx *c : P.all) (c->busy ? keep : idle).push_back(c);
    P.all.swap(keep);
  }
  for (Ctx *c : idle) {
    if (cudaSetDevice(c->dev) == cudaSuccess) ctx_destroy(c);
    else delete c;
  }
  cudaGetLastError();
  return (int)idle.size();
}

int wt_cuda_device_count(char *msg, size_t msg_len)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    set_msg(msg, msg_len, cudaGetErrorString(e));
    cudaGetLastError();
    return 0;
  }
  set_msg(msg, msg_len, n > 0 ? "" : "no CUDA device found");
  return n;
}

int wt_cuda_device_info(int device, char *name, size_t name_len, int *major,
                        int *minor, double *mem_bytes)
{
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    set_msg(name, name_len, cudaGetErrorString(e));
    cudaGetLastError();
    return WT_ERR_CUDA;
  }
  set_msg(name, name_len, prop.name);
  if (major) *major = prop.major;
  if (minor) *minor = prop.minor;
  if (mem_bytes) *mem_bytes = (double)prop.totalGlobalMem;
  return WT_OK;
}

int wt_count_cuda(wt_job *job)
{
  if (!job || !job->bins || !job->slots) return WT_ERR_ARG;
  try {
    return count_impl(job);
  } catch (const std::bad_alloc &) {
    set_msg(job->message, sizeof job->message,
            "host memory allocation failed in the CUDA engine");
    return WT_ERR_NOMEM;
  } catch (...) {
    set_msg(job->message, sizeof job->message,
            "unexpected failure in the CUDA engine");
    return WT_ERR_CUDA;
  }
}

}  /* extern "C" */
