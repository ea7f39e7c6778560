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
 * moves to an item of another histogram. All tasks of one run between
 * one pair of chunks go into the same launches (no host round trip per
 * task). Tasks may come in runs while the devices count (a Session:
 * wt_cuda_stream_open/feed/close; the grid's walk feeds its rounds so,
 * core/count.c): runs are planned into batches of launches, queued in
 * order, and the devices take launches from the queue, waiting while it
 * is empty and not closed; wt_count_cuda feeds the job's whole list at
 * once. Items
 * of fewer i points than a block holds use only as many registers' worth
 * of i points as they need (NK), so small patches waste few lanes. The
 * fast kernel counts in bulk the pairs of a slice of a block's i points
 * and a run of staged j points whose caps put them all in one slot
 * (kernel_fast.cuh, "Bulk counting"): spatially ordered points make such
 * runs common in wide or log bins and beyond the last edge.
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
 * running. One host thread drives each device; the calling thread feeds
 * the queue, then polls (job->poll, with the pairs of the launches
 * retired so far and of those queued) and joins.
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
#include <deque>
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

/* the devices' checks: WT_OK, or a status with job->message */
int check_devices(wt_job *job)
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
  return WT_OK;
}

/* Tasks fed as they come (their launches planned and queued batch by
 * batch) before the queue is closed. Runs of few pairs wait in `pending`
 * until they make a batch of FEED_MIN_PAIRS pairs or FEED_MIN_TASKS tasks,
 * so that a walk feeding small runs does not cut the work into small
 * launches. */
constexpr double FEED_MIN_PAIRS = (double)((int64_t)1 << 36);
constexpr size_t FEED_MIN_TASKS = (size_t)1 << 20;

/* One count on the devices: open() checks them, analyses the points and
 * starts a worker per device, which readies its device (buffers, tables,
 * resident catalogs) and then takes launches as feed() queues them;
 * close() closes the queue, polls, joins and adds the counts into the
 * job. */
class Session {
 public:
  explicit Session(wt_job *job) : job_(job) {}
  ~Session() { stop_and_join(); for (Worker *w : workers_) delete w; }

  int open()
  {
    int st = check_devices(job_);
    if (st != WT_OK) return st;
    const int scan_threads = job_->n_threads > 1 ? job_->n_threads : 1;
#ifdef WT_CUDA_FORCE_EXACT
    an_ = analyse(job_, scan_threads, true);
#else
    an_ = analyse(job_, scan_threads, false);
#endif
    /* plan for the device with the least shared memory */
    size_t smem_sm = SIZE_MAX, smem_block = SIZE_MAX;
    for (int k = 0; k < job_->n_devices; k++) {
      int v_sm = 0, v_blk = 0;
      cudaError_t e1 = cudaDeviceGetAttribute(
          &v_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
          job_->devices[k]);
      cudaError_t e2 = cudaDeviceGetAttribute(
          &v_blk, cudaDevAttrMaxSharedMemoryPerBlockOptin, job_->devices[k]);
      if (e1 != cudaSuccess || e2 != cudaSuccess) {
        set_msg(job_->message, sizeof job_->message,
                cuda_msg("cudaDeviceGetAttribute", job_->devices[k],
                         e1 != cudaSuccess ? e1 : e2));
        return WT_ERR_CUDA;
      }
      if ((size_t)v_sm < smem_sm) smem_sm = (size_t)v_sm;
      if ((size_t)v_blk < smem_block) smem_block = (size_t)v_blk;
    }
    plan_ = get_plan(job_->bins, an_, smem_sm, smem_block,
                     job_->wsum != nullptr, job_->thsum != nullptr,
                     weighted_words(job_),
                     an_.unit_w && job_->pip != nullptr &&
                         job_->pip->n_words > 0);
    /* the task boundaries the device ordering keeps points inside (all
     * tasks are known: wt_count_cuda); none when the points come ordered
     * (the grid's) */
    if (!job_->ordered) {
      bounds_a_ = task_bounds(job_, 0);
      if (!job_->is_auto) bounds_b_ = task_bounds(job_, 1);
    }
    sh_.job = job_;
    sh_.an = &an_;
    sh_.plan = plan_;
    sh_.bounds[0] = &bounds_a_;
    sh_.bounds[1] = &bounds_b_;
    sh_.n_out = job_->n_out;
    try {
      for (int k = 0; k < job_->n_devices; k++)
        workers_.push_back(new Worker(sh_, job_->devices[k]));
      for (int k = 0; k < job_->n_devices; k++) {
        Worker *w = workers_[k];
        {
          std::lock_guard<std::mutex> g(sh_.mu);
          sh_.running++;
        }
        Shared *sh = &sh_;
        try {
          threads_.emplace_back([w, sh]() {
            w->run();
            std::lock_guard<std::mutex> g(sh->mu);
            sh->running--;
            sh->cv.notify_all();
          });
        } catch (...) {
          std::lock_guard<std::mutex> g(sh_.mu);
          sh_.running--;
          throw;
        }
      }
    } catch (...) {
      sh_.fail(WT_ERR_WORKER, "could not start the CUDA worker threads");
    }
    return WT_OK;
  }

  /* tasks [0, n) planned into launches (with those pending) and queued;
   * a failed device's status, if any (the caller stops feeding) */
  int feed(const wt_task *tasks, int64_t n)
  {
    if (sh_.stop.load()) return failed_status();
    const wt_job p = part(tasks, n);
    const double pairs = wt_tasks_pairs(&p);
    if (pending_.empty() && batch_full(pairs, (size_t)n)) {
      queue(tasks, n, pairs);      /* a batch of its own: no copy */
      return WT_OK;
    }
    pending_.insert(pending_.end(), tasks, tasks + n);
    pending_pairs_ += pairs;
    if (batch_full(pending_pairs_, pending_.size())) flush();
    return WT_OK;
  }

  /* the queue closed (abort: the devices stopped first); waits for the
   * devices, polling the caller (job->poll); the counts added into the
   * job */
  int close(bool abort)
  {
    if (abort) sh_.halt();
    else flush();
    sh_.close();
    bool interrupted = false;
    {
      std::unique_lock<std::mutex> g(sh_.mu);
      while (sh_.running > 0) {
        sh_.cv.wait_for(g, std::chrono::milliseconds(20));
        if (sh_.running > 0 && !interrupted && job_->poll) {
          g.unlock();
          int hit = job_->poll(job_->poll_ctx, (double)sh_.done.load(),
                               total_);
          g.lock();
          if (hit) {
            interrupted = true;
            g.unlock();
            sh_.halt();
            g.lock();
          }
        }
      }
    }
    stop_and_join();
    if (interrupted) return WT_ERR_INTERRUPTED;
    if (sh_.status != WT_OK) {
      set_msg(job_->message, sizeof job_->message, sh_.message);
      return sh_.status;
    }
    if (abort) return WT_ERR_INTERRUPTED;
    const bool weighted = job_->wsum != nullptr;
    const bool angles = job_->thsum != nullptr;
    const size_t n_hist = (size_t)job_->n_out * (size_t)an_.n_slots;
    for (Worker *w : workers_) {
      if (w->counts.size() != n_hist ||
          (weighted && w->wsums.size() != n_hist) ||
          (angles && w->thsums.size() != n_hist)) {
        set_msg(job_->message, sizeof job_->message,
                "a CUDA worker returned no counts");
        return WT_ERR_CUDA;
      }
    }
    for (Worker *w : workers_) {
      for (size_t s = 0; s < n_hist; s++) job_->slots[s] += w->counts[s];
      if (weighted)
        for (size_t s = 0; s < n_hist; s++) job_->wsum[s] += w->wsums[s];
      if (angles)
        for (size_t s = 0; s < n_hist; s++) job_->thsum[s] += w->thsums[s];
      job_->gpu_ms += w->ms;
      job_->pairs_skipped += w->bulk;
    }
    return WT_OK;
  }

 private:
  wt_job *job_;
  Analysis an_{};
  std::shared_ptr<const Plan> plan_;
  std::vector<long long> bounds_a_, bounds_b_;
  Shared sh_;
  std::vector<Worker *> workers_;
  std::vector<std::thread> threads_;
  std::vector<wt_task> pending_;
  double pending_pairs_ = 0.0;
  double total_ = 0.0;         /* pairs queued (the poll's total) */

  int failed_status()
  {
    std::lock_guard<std::mutex> g(sh_.mu);
    return sh_.status != WT_OK ? sh_.status : WT_ERR_INTERRUPTED;
  }

  /* the job with tasks [0, n) */
  wt_job part(const wt_task *tasks, int64_t n) const
  {
    wt_job p = *job_;
    p.tasks = tasks;
    p.n_tasks = n;
    return p;
  }

  static bool batch_full(double pairs, size_t n)
  {
    return pairs >= FEED_MIN_PAIRS || n >= FEED_MIN_TASKS;
  }

  /* the launches of tasks [0, n) (of `pairs` pairs) queued as one batch */
  void queue(const wt_task *tasks, int64_t n, double pairs)
  {
    const wt_job p = part(tasks, n);
    std::unique_ptr<Batch> b(new Batch());
    const bool tiled = plan_->tiled();
    plan_launches(&p, CHUNK, row_points(tiled),
                  launch_pairs(tiled, pairs, job_->n_devices), b->rows,
                  b->launches);
    total_ += pairs;
    sh_.push(std::move(b));
  }

  /* the pending tasks queued as one batch */
  void flush()
  {
    if (pending_.empty()) return;
    queue(pending_.data(), (int64_t)pending_.size(), pending_pairs_);
    pending_.clear();
    pending_pairs_ = 0.0;
  }

  void stop_and_join()
  {
    if (threads_.empty()) return;
    bool alive = false;
    {
      std::lock_guard<std::mutex> g(sh_.mu);
      alive = sh_.running > 0;
    }
    if (alive) sh_.halt();
    sh_.close();
    for (std::thread &t : threads_) t.join();
    threads_.clear();
  }
};

/* f(), with the C++ exceptions it may throw as statuses and messages in
 * job */
template <class F>
int guarded(wt_job *job, F &&f)
{
  try {
    return f();
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

/* a whole job: its tasks fed at once */
int count_impl(wt_job *job)
{
  Session s(job);
  int st = s.open();
  if (st != WT_OK) return st;
  st = s.feed(job->tasks, job->n_tasks);
  return s.close(st != WT_OK);
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

int wt_cuda_stream_open(wt_job *job, void **h)
{
  if (!h) return WT_ERR_ARG;
  *h = nullptr;
  if (!job || !job->bins || !job->slots || !job->ordered) return WT_ERR_ARG;
  Session *s = nullptr;
  const int st = guarded(job, [&]() {
    s = new Session(job);
    return s->open();
  });
  if (st != WT_OK) {
    delete s;
    return st;
  }
  *h = s;
  return WT_OK;
}

int wt_cuda_stream_feed(void *h, const wt_task *tasks, int64_t n)
{
  if (!h || (n > 0 && !tasks) || n < 0) return WT_ERR_ARG;
  try {
    return static_cast<Session *>(h)->feed(tasks, n);
  } catch (const std::bad_alloc &) {
    return WT_ERR_NOMEM;
  } catch (...) {
    return WT_ERR_CUDA;
  }
}

int wt_cuda_stream_close(void *h, int abort)
{
  if (!h) return WT_ERR_ARG;
  Session *s = static_cast<Session *>(h);
  int st;
  try {
    st = s->close(abort != 0);
  } catch (...) {
    st = WT_ERR_CUDA;
  }
  delete s;
  return st;
}

int wt_count_cuda(wt_job *job)
{
  if (!job || !job->bins || !job->slots) return WT_ERR_ARG;
  return guarded(job, [job]() { return count_impl(job); });
}

}  /* extern "C" */
