/* Per-device resources kept between calls: contexts (stream, events,
 * grow-only buffers) in a process-wide pool.
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_POOL_CUH
#define WT_CUDA_POOL_CUH

namespace {

std::string cuda_msg(const char *what, int device, cudaError_t e)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s on device %d failed: %s", what, device,
           cudaGetErrorString(e));
  return buf;
}

/* ---- per-device resources kept between calls ----
 * A context holds one stream, its events and grow-only device buffers
 * (plus pinned host buffers for the work items). Contexts live in a
 * process-wide pool guarded by a mutex; a worker takes an idle one of its
 * device (or makes one) and gives it back when done. A context that saw
 * any error is destroyed, together with the idle contexts of its device,
 * so that nothing from a failed call is reused. wt_cuda_release() frees
 * the idle contexts (R calls it at exit, so that tools such as
 * compute-sanitizer see every device buffer freed). */

struct Buf {
  void *p = nullptr;
  size_t bytes = 0;
};

struct Ctx {
  int dev = -1;
  bool busy = false;
  bool ready = false;          /* stream and events exist */
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0[2] = {nullptr, nullptr}, ev1[2] = {nullptr, nullptr};
  int sm_count = 0;
  Buf f[2], d[2];              /* resident chunks: float and double copies */
  Buf rf[2], rd[2];            /* whole catalogs resident (a, b): the same
                                  copies of every chunk, chunk c at
                                  c * CHUNK (Worker::plan_resident) */
  Buf raw, key[2], idx[2], sort_tmp;   /* chunk upload and ordering */
  Buf bnd[2];                  /* task boundaries of each catalog */
  Buf ghist, gw, gt, counter, items, upper, thr, cmap, btab;  /* gt: angles */
  Buf hitems[2];               /* pinned host: work items of two launches */
  Buf bits[2], rawbits, pipt;  /* PIP: resident chunks' words, their
                                  upload, the pair factor and angular
                                  tables */
  /* the plan whose edges and fast table are in upper, thr and cmap */
  std::shared_ptr<const Plan> loaded;
};

void buf_free(Buf &b, bool host)
{
  if (b.p) {
    if (host) cudaFreeHost(b.p); else cudaFree(b.p);
  }
  b.p = nullptr;
  b.bytes = 0;
}

/* frees everything (the device of c must be current); errors are ignored:
 * after a failure the calls may report it again */
void ctx_destroy(Ctx *c)
{
  if (c->stream) cudaStreamSynchronize(c->stream);
  Buf *dev_bufs[] = {&c->f[0], &c->f[1], &c->d[0], &c->d[1], &c->rf[0],
                     &c->rf[1], &c->rd[0], &c->rd[1], &c->raw,
                     &c->key[0], &c->key[1], &c->idx[0], &c->idx[1],
                     &c->sort_tmp, &c->bnd[0], &c->bnd[1], &c->ghist,
                     &c->gw, &c->gt, &c->counter, &c->items,
                     &c->upper, &c->thr, &c->cmap, &c->btab, &c->bits[0],
                     &c->bits[1], &c->rawbits, &c->pipt};
  for (Buf *b : dev_bufs) buf_free(*b, false);
  buf_free(c->hitems[0], true);
  buf_free(c->hitems[1], true);
  for (int k = 0; k < 2; k++) {
    if (c->ev0[k]) cudaEventDestroy(c->ev0[k]);
    if (c->ev1[k]) cudaEventDestroy(c->ev1[k]);
  }
  if (c->stream) cudaStreamDestroy(c->stream);
  cudaGetLastError();
  delete c;
}

struct Pool {
  std::mutex mu;
  std::vector<Ctx *> all;
};

Pool &pool()
{
  static Pool *p = new Pool();   /* never destroyed (see above) */
  return *p;
}

Ctx *ctx_acquire(int dev)
{
  Pool &P = pool();
  std::lock_guard<std::mutex> g(P.mu);
  for (Ctx *c : P.all)
    if (!c->busy && c->dev == dev) {
      c->busy = true;
      return c;
    }
  P.all.reserve(P.all.size() + 1);   /* may throw: nothing made yet */
  Ctx *c = new Ctx();
  c->dev = dev;
  c->busy = true;
  P.all.push_back(c);
  return c;
}

/* the idle contexts of one device, taken out of the pool */
std::vector<Ctx *> ctx_take_idle(int dev)
{
  Pool &P = pool();
  std::vector<Ctx *> out;
  std::lock_guard<std::mutex> g(P.mu);
  std::vector<Ctx *> keep;
  keep.reserve(P.all.size());
  out.reserve(P.all.size());
  for (Ctx *c : P.all) {
    if (!c->busy && c->dev == dev) out.push_back(c);
    else keep.push_back(c);
  }
  P.all.swap(keep);
  return out;
}

void ctx_release(Ctx *c, bool healthy)
{
  Pool &P = pool();
  if (healthy) {
    std::lock_guard<std::mutex> g(P.mu);
    c->busy = false;
    return;
  }
  /* drop c and, where the list can be made, the idle contexts of its
   * device (those left behind are destroyed when they next fail) */
  std::vector<Ctx *> others;
  {
    std::lock_guard<std::mutex> g(P.mu);
    for (size_t k = 0; k < P.all.size(); k++)
      if (P.all[k] == c) {
        P.all[k] = P.all.back();
        P.all.pop_back();
        break;
      }
  }
  try {
    others = ctx_take_idle(c->dev);
  } catch (...) {
    others.clear();
  }
  ctx_destroy(c);
  for (Ctx *d : others) ctx_destroy(d);
}

cudaError_t ctx_setup(Ctx &c)
{
  if (c.ready) return cudaSuccess;
  cudaError_t e = cudaDeviceGetAttribute(
      &c.sm_count, cudaDevAttrMultiProcessorCount, c.dev);
  if (e == cudaSuccess && !c.stream)
    e = cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking);
  for (int k = 0; k < 2 && e == cudaSuccess; k++) {
    if (!c.ev0[k]) e = cudaEventCreate(&c.ev0[k]);
    if (e == cudaSuccess && !c.ev1[k]) e = cudaEventCreate(&c.ev1[k]);
  }
  if (e == cudaSuccess) c.ready = true;
  return e;
}

}  // namespace

#endif
