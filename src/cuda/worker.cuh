/* One device: the worker thread that copies, orders and counts its share
 * of the job, and the state the workers share with the caller.
 * Part of the CUDA engine: included by entry.cu, which makes the engine
 * one nvcc translation unit (see ARCHITECTURE.md). */
#ifndef WT_CUDA_WORKER_CUH
#define WT_CUDA_WORKER_CUH

namespace {

/* a worker thread that fails (WTHETA_TEST_FAULT=thread) */
struct InjectedThreadFault {};

/* ---- one device ---- */

/* what a fault injected for tests says (WTHETA_TEST_FAULT) */
const char *fault_note(int bit)
{
  switch (bit) {
    case WT_FAULT_ALLOC: return " (fault injected by WTHETA_TEST_FAULT=alloc)";
    case WT_FAULT_LAUNCH: return " (fault injected by WTHETA_TEST_FAULT=launch)";
    case WT_FAULT_COPY: return " (fault injected by WTHETA_TEST_FAULT=copy)";
    default: return " (fault injected by WTHETA_TEST_FAULT=thread)";
  }
}

/* the rows and launches of one run of tasks (plan_launches()) */
struct Batch {
  std::vector<Row> rows;
  std::vector<Launch> launches;
};

struct Shared {
  const wt_job *job;
  const Analysis *an;
  std::shared_ptr<const Plan> plan;
  const std::vector<long long> *bounds[2];   /* task boundaries per catalog */
  int n_out;
  std::atomic<bool> stop{false};
  std::atomic<unsigned long long> done{0};  /* pairs of retired launches */
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  int status = WT_OK;
  std::string message;
  /* The queue of launches: batches as the tasks come (Session::feed), in
   * order; the devices take launches one by one (take()) and wait while
   * it is empty but not closed. A batch never changes once queued, so a
   * launch and its rows stay where they are until the call ends. */
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<std::unique_ptr<Batch>> batches;
  size_t qb = 0, ql = 0;      /* the next launch: batch qb, launch ql */
  bool closed = false;        /* no more batches */

  void fail(int st, const std::string &m)
  {
    {
      std::lock_guard<std::mutex> g(mu);
      if (status == WT_OK) {
        status = st;
        message = m;
      }
    }
    halt();
  }

  /* every device stops at its next launch; waiting ones wake */
  void halt()
  {
    std::lock_guard<std::mutex> g(qmu);
    stop = true;
    qcv.notify_all();
  }

  void push(std::unique_ptr<Batch> b)
  {
    std::lock_guard<std::mutex> g(qmu);
    batches.push_back(std::move(b));
    qcv.notify_all();
  }

  void close()
  {
    std::lock_guard<std::mutex> g(qmu);
    closed = true;
    qcv.notify_all();
  }

  /* the next launch and its batch's rows; false once the queue is closed
   * and empty, or the job stops */
  bool take(const Launch *&L, const std::vector<Row> *&rows)
  {
    std::unique_lock<std::mutex> g(qmu);
    for (;;) {
      if (stop.load()) return false;
      while (qb < batches.size() && ql >= batches[qb]->launches.size()) {
        qb++;
        ql = 0;
      }
      if (qb < batches.size()) {
        L = &batches[qb]->launches[ql++];
        rows = &batches[qb]->rows;
        return true;
      }
      if (closed) return false;
      qcv.wait(g);
    }
  }
};

class Worker {
 public:
  Worker(Shared &sh, int device) : sh_(sh), dev_(device) {}
  ~Worker() { finish(); }

  void run()
  {
    try {
      body();
    } catch (const std::bad_alloc &) {
      failed_ = true;
      sh_.fail(WT_ERR_NOMEM, "host memory allocation failed");
    } catch (const InjectedThreadFault &) {
      failed_ = true;
      char buf[160];
      snprintf(buf, sizeof buf, "the CUDA worker thread of device %d failed%s",
               dev_, fault_note(WT_FAULT_THREAD));
      sh_.fail(WT_ERR_WORKER, buf);
    } catch (...) {
      failed_ = true;
      sh_.fail(WT_ERR_WORKER, "unexpected failure in a CUDA worker thread");
    }
    finish();
  }

  std::vector<unsigned long long> counts;
  std::vector<double> wsums;
  std::vector<double> thsums;  /* angle sums (mean_theta) */
  double ms = 0.0;
  double bulk = 0.0;     /* pairs the fast kernel counted in bulk */

 private:
  Shared &sh_;
  int dev_;
  bool failed_ = false;
  Ctx *ctx_ = nullptr;
  int64_t cap_ = 0;            /* points per resident chunk buffer */
  bool inflight_[2] = {false, false};
  double inflight_pairs_[2] = {0.0, 0.0};
  const void *kfn_ = nullptr;  /* the plan's kernel */
  int max_blocks_ = 0;         /* its blocks resident at once */
  size_t launched_ = 0;        /* launches queued (two event pairs) */

  struct Slot {
    int cat = -1, chunk = -1;
    int64_t n = 0;
  } slot_[2];
  /* Whole catalogs resident (plan_resident()): every chunk is loaded
   * once, into rd/rf at c * CHUNK, and stays for the call; have_[cat][c]
   * once it is queued. Otherwise two slots hold the chunks of the launch
   * at hand, loaded again as launches move between chunk pairs. */
  bool resident_ = false;
  std::vector<char> have_[2];
  /* the device orders each chunk (order.cuh) unless the job's points come
   * in spatial order already (wt_job.ordered: the grid's) */
  bool sort_ = true;

  /* where the packed points of one resident chunk are */
  struct View {
    const DPt *d = nullptr;
    const float4 *f = nullptr;
    const uint32_t *bits = nullptr;   /* PIP words (slots only) */
    int64_t n = 0;
  };

  bool ck(cudaError_t e, const char *what)
  {
    if (e == cudaSuccess) return true;
    failed_ = true;
    sh_.fail(WT_ERR_CUDA, cuda_msg(what, dev_, e));
    return false;
  }

  /* whether the test fault `bit` strikes this device */
  bool faulted(int bit) const
  {
    return (sh_.job->fault & bit) &&
           wt_fault_on_device(sh_.job->fault, dev_);
  }

  /* a test fault: the call it stands for failed */
  bool inject(int bit, cudaError_t e, const char *what)
  {
    if (!faulted(bit)) return false;
    std::string w = std::string(what) + fault_note(bit);
    ck(e, w.c_str());
    return true;
  }

  /* grow-only buffer of at least `bytes`; on a failed allocation the idle
   * contexts of the device are freed and the allocation tried once more */
  bool need(Buf &b, size_t bytes, bool host = false)
  {
    if (b.bytes >= bytes) return true;
    ctx_->loaded.reset();        /* contents of a regrown buffer are gone */
    if (b.p) {
      /* queued work may still use the old buffer */
      if (!ck(cudaStreamSynchronize(ctx_->stream), "cudaStreamSynchronize"))
        return false;
      buf_free(b, host);
    }
    void *p = nullptr;
    cudaError_t e = host ? cudaHostAlloc(&p, bytes, cudaHostAllocDefault)
                         : cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      std::vector<Ctx *> idle = ctx_take_idle(dev_);
      for (Ctx *c : idle) ctx_destroy(c);
      p = nullptr;
      e = host ? cudaHostAlloc(&p, bytes, cudaHostAllocDefault)
               : cudaMalloc(&p, bytes);
    }
    if (e != cudaSuccess) {
      char what[96];
      snprintf(what, sizeof what, "%s of %zu bytes",
               host ? "cudaHostAlloc" : "cudaMalloc", bytes);
      return ck(e, what);
    }
    b.p = p;
    b.bytes = bytes;
    return true;
  }

  void finish()
  {
    if (!ctx_) return;
    bool healthy = !failed_;
    if (ctx_->stream && cudaStreamSynchronize(ctx_->stream) != cudaSuccess)
      healthy = false;
    if (!healthy) cudaGetLastError();
    Ctx *c = ctx_;
    ctx_ = nullptr;
    ctx_release(c, healthy);
  }

  /* the kernel time of the launch that used event pair b, once done; its
   * pairs count as done for the progress report */
  bool retire(int b)
  {
    if (!inflight_[b]) return true;
    inflight_[b] = false;
    if (!ck(cudaEventSynchronize(ctx_->ev1[b]), "kernel execution"))
      return false;
    float t = 0.0f;
    if (!ck(cudaEventElapsedTime(&t, ctx_->ev0[b], ctx_->ev1[b]),
            "cudaEventElapsedTime"))
      return false;
    ms += t;
    sh_.done.fetch_add((unsigned long long)inflight_pairs_[b]);
    return true;
  }

  /* PIP: the words per point (0: none) and the doubles of the device
   * table (pair factors by popcount, then the angular table's chords and
   * weights) */
  int pip_words() const
  {
    return sh_.job->pip ? sh_.job->pip->n_words : 0;
  }
  size_t pip_table_len() const
  {
    const wt_pip *q = sh_.job->pip;
    return (q->n_words > 0 ? 32 * (size_t)q->n_words + 1 : 0) +
           2 * (size_t)q->n_ang + 1;
  }

  /* chunk (cat, c) on the device, its packed copies in v: loaded unless
   * it is there already, into a slot other than `keep` (the slot used in
   * *slot; -1 with whole catalogs resident) */
  bool load_chunk(int cat, int c, int keep, View &v, int &slot, bool fast)
  {
    Ctx &C = *ctx_;
    if (resident_) {
      const size_t off = (size_t)c * (size_t)CHUNK;
      const wt_points &p = cat == 0 ? sh_.job->a : sh_.job->b;
      v.d = static_cast<const DPt *>(C.rd[cat].p) + off;
      v.f = fast ? static_cast<const float4 *>(C.rf[cat].p) + off : nullptr;
      v.bits = nullptr;
      v.n = chunk_len(p.n, c, CHUNK);
      slot = -1;
      if (have_[cat][(size_t)c]) return true;
      have_[cat][(size_t)c] = 1;
      return upload(cat, c, const_cast<float4 *>(v.f),
                    const_cast<DPt *>(v.d), nullptr);
    }
    int s = -1;
    for (int k = 0; k < 2; k++)
      if (slot_[k].cat == cat && slot_[k].chunk == c) s = k;
    if (s < 0) {
      s = keep == 0 ? 1 : 0;
      slot_[s].cat = -1;
      if (!upload(cat, c, fast ? static_cast<float4 *>(C.f[s].p) : nullptr,
                  static_cast<DPt *>(C.d[s].p),
                  static_cast<uint32_t *>(C.bits[s].p)))
        return false;
      slot_[s].cat = cat;
      slot_[s].chunk = c;
      slot_[s].n = chunk_len((cat == 0 ? sh_.job->a : sh_.job->b).n, c,
                             CHUNK);
    }
    v.d = static_cast<const DPt *>(C.d[s].p);
    v.f = fast ? static_cast<const float4 *>(C.f[s].p) : nullptr;
    v.bits = static_cast<const uint32_t *>(C.bits[s].p);
    v.n = slot_[s].n;
    slot = s;
    return true;
  }

  /* chunk (cat, c) to the device: its raw coordinates (and weights, PIP
   * words) are copied, ordered (sort_) and packed into f (when not null),
   * d and bits (PIP). All of it is queued on the stream, behind any
   * kernel still running. */
  bool upload(int cat, int c, float4 *fout, DPt *dout, uint32_t *bout)
  {
    Ctx &C = *ctx_;
    const wt_points &p = cat == 0 ? sh_.job->a : sh_.job->b;
    const int64_t start = (int64_t)c * CHUNK, n = chunk_len(p.n, c, CHUNK);
    double *rx = static_cast<double *>(C.raw.p);
    double *ry = rx + cap_, *rz = ry + cap_;
    double *rw = sh_.plan->weighted ? rz + cap_ : nullptr;
    const size_t nb = (size_t)n * sizeof(double);
    if (!ck(cudaMemcpyAsync(rx, p.x + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates") ||
        !ck(cudaMemcpyAsync(ry, p.y + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates") ||
        !ck(cudaMemcpyAsync(rz, p.z + start, nb, cudaMemcpyHostToDevice,
                            C.stream), "cudaMemcpyAsync of coordinates"))
      return false;
    if (rw && !ck(cudaMemcpyAsync(rw, p.w + start, nb, cudaMemcpyHostToDevice,
                                  C.stream), "cudaMemcpyAsync of weights"))
      return false;
    /* PIP: the chunk's words, one upload per word */
    const int nw = pip_words();
    uint32_t *rb = static_cast<uint32_t *>(C.rawbits.p);
    for (int k = 0; k < nw; k++)
      if (!ck(cudaMemcpyAsync(rb + (size_t)k * cap_,
                              p.bits + (size_t)k * p.n + start,
                              (size_t)n * sizeof(uint32_t),
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of bitwise words"))
        return false;
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    const uint32_t *order = nullptr;
#ifndef WT_CUDA_NOSORT
    if (sort_) {
      unsigned long long *k0 = static_cast<unsigned long long *>(C.key[0].p);
      unsigned long long *k1 = static_cast<unsigned long long *>(C.key[1].p);
      uint32_t *i0 = static_cast<uint32_t *>(C.idx[0].p);
      uint32_t *i1 = static_cast<uint32_t *>(C.idx[1].p);
      const int nbnd = (int)sh_.bounds[cat]->size();
      wt_key_kernel<<<blocks, threads, 0, C.stream>>>(
          rx, ry, rz, (int)n, (long long)start,
          static_cast<const long long *>(C.bnd[cat].p), nbnd, k0, i0);
      if (!ck(cudaGetLastError(), "launch of the ordering kernel"))
        return false;
      int end_bit = KEY_BITS;
      while (end_bit < 64 && ((unsigned long long)nbnd >> (end_bit - KEY_BITS)))
        end_bit++;
      cub::DoubleBuffer<unsigned long long> dk(k0, k1);
      cub::DoubleBuffer<uint32_t> dv(i0, i1);
      size_t tb = 0;
      if (!ck(cub::DeviceRadixSort::SortPairs(nullptr, tb, dk, dv, (int)n, 0,
                                              end_bit, C.stream),
              "cub::DeviceRadixSort (size query)") ||
          !need(C.sort_tmp, tb))
        return false;
      tb = C.sort_tmp.bytes;
      if (!ck(cub::DeviceRadixSort::SortPairs(C.sort_tmp.p, tb, dk, dv,
                                              (int)n, 0, end_bit, C.stream),
              "cub::DeviceRadixSort"))
        return false;
      order = dv.Current();
    }
#endif
    wt_pack_kernel<<<blocks, threads, 0, C.stream>>>(
        rx, ry, rz, rw, order, (int)n, fout, dout);
    if (!ck(cudaGetLastError(), "launch of the packing kernel")) return false;
    if (nw > 0) {
      wt_pack_bits_kernel<<<blocks, threads, 0, C.stream>>>(
          rb, order, (int)n, nw, (long long)cap_, bout);
      if (!ck(cudaGetLastError(), "launch of the bitwise packing kernel"))
        return false;
    }
    return true;
  }

  /* the worker's steps; each returns false once the job has failed (the
   * failure is in sh_) or is stopping */
  void body()
  {
    if (open_device() && prepare_kernel() && reserve_buffers() &&
        upload_plan() && launch_all() && drain())
      copy_back();
  }

  size_t hist_len() const
  {
    return (size_t)sh_.n_out * (size_t)sh_.an->n_slots;
  }

  /* the words of C.ghist: the histograms, then one for the fast kernel's
   * count of pairs counted in bulk (FastArgs.gbulk, at hist_len()) */
  size_t ghist_words() const { return hist_len() + 1; }

  /* the device and a context of it from the pool; the test faults of the
   * worker thread and of the first allocation strike here */
  bool open_device()
  {
    if (!ck(cudaSetDevice(dev_), "cudaSetDevice")) return false;
    ctx_ = ctx_acquire(dev_);
    if (!ck(ctx_setup(*ctx_), "CUDA stream setup")) return false;
    if (faulted(WT_FAULT_THREAD)) throw InjectedThreadFault();
    return !inject(WT_FAULT_ALLOC, cudaErrorMemoryAllocation, "cudaMalloc");
  }

  /* the plan's kernel, its shared memory, and how many of its blocks the
   * device holds at once (the blocks of a launch) */
  bool prepare_kernel()
  {
    const Plan &plan = *sh_.plan;
    const bool pip = sh_.job->pip != nullptr;   /* weighted, exact */
    kfn_ = plan.fast ? fast_kernel_ptr(plan.cfg)
           : plan.wfast ? weighted_kernel_ptr(plan.wwords, plan.wpriv,
                                              plan.wcount)
           : pip ? (plan.angles
                        ? (const void *)wt_exact_kernel<true, true, true>
                        : (const void *)wt_exact_kernel<true, false, true>)
           : plan.angles
               ? (plan.weighted
                      ? (const void *)wt_exact_kernel<true, true, false>
                      : (const void *)wt_exact_kernel<false, true, false>)
           : plan.weighted ? (const void *)wt_exact_kernel<true, false, false>
                           : (const void *)wt_exact_kernel<false, false, false>;
    if (!ck(cudaFuncSetAttribute(kfn_,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)plan.smem),
            "cudaFuncSetAttribute"))
      return false;
    const int threads = plan.fast ? BLOCK : plan.wfast ? WBLOCK : EBLOCK;
    int per_sm = 0;
    if (!ck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kfn_,
                                                          threads, plan.smem),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor"))
      return false;
    if (per_sm < 1) {
      failed_ = true;
      sh_.fail(WT_ERR_CUDA, cuda_msg("kernel occupancy check", dev_,
                                     cudaErrorInvalidConfiguration));
      return false;
    }
    max_blocks_ = per_sm * ctx_->sm_count;
    return true;
  }

  /* buffers, sized to this call (kept if larger) */
  bool reserve_buffers()
  {
    const wt_job *job = sh_.job;
    const Plan &plan = *sh_.plan;
    Ctx &C = *ctx_;
    const bool weighted = plan.weighted;
    const int64_t nA = job->a.n, nB = job->is_auto ? job->a.n : job->b.n;
    cap_ = nA > nB ? nA : nB;
    if (cap_ > CHUNK) cap_ = CHUNK;
    /* items: room for a launch of a block's share each to start with;
     * launch() grows it when a launch needs more */
    const size_t item_cap = (size_t)max_blocks_ * 4;
    const size_t cap = (size_t)cap_;
    if (!plan_resident()) return false;
    for (int s = 0; s < (resident_ ? 0 : job->is_auto && nA <= CHUNK ? 1 : 2);
         s++) {
      if (!need(C.d[s], cap * sizeof(DPt))) return false;
      if (plan.tiled() && !need(C.f[s], cap * sizeof(float4)))
        return false;
    }
    if (!need(C.raw, (weighted ? 4 : 3) * cap * sizeof(double)))
      return false;
    const int nw = pip_words();
    if (nw > 0) {
      if (!need(C.rawbits, (size_t)nw * cap * sizeof(uint32_t))) return false;
      for (int s = 0; s < (job->is_auto && nA <= CHUNK ? 1 : 2); s++)
        if (!need(C.bits[s], (size_t)nw * cap * sizeof(uint32_t)))
          return false;
    }
    if (job->pip && !need(C.pipt, pip_table_len() * sizeof(double)))
      return false;
#ifndef WT_CUDA_NOSORT
    sort_ = !job->ordered;
    if (sort_ && !reserve_ordering()) return false;
#else
    sort_ = false;
#endif
    const size_t n_hist = hist_len();
    return need(C.ghist, ghist_words() * sizeof(unsigned long long)) &&
           (!weighted || need(C.gw, n_hist * sizeof(double))) &&
           (!plan.angles || need(C.gt, n_hist * sizeof(double))) &&
           need(C.counter, sizeof(int)) &&
           need(C.items, item_cap * sizeof(Item)) &&
           need(C.hitems[0], item_cap * sizeof(Item), true) &&
           need(C.hitems[1], item_cap * sizeof(Item), true) &&
           need(C.upper, (size_t)sh_.an->n_slots * sizeof(double));
  }

  /* Whole catalogs resident when they span more than the two slots hold
   * and their packed copies fit in half the device's free memory (PIP
   * words keep to the slots): each chunk is then copied, ordered and
   * packed once, not again each time the launches come back to it
   * (10^8 points in 48 chunks took 279 loads). The buffers stay with the
   * context for the next call, as the others do. */
  bool plan_resident()
  {
    const wt_job *job = sh_.job;
    const int ncat = job->is_auto ? 1 : 2;
    int64_t chunks = 0;
    for (int cat = 0; cat < ncat; cat++)
      chunks += (((cat == 0 ? job->a : job->b).n) + CHUNK - 1) / CHUNK;
    resident_ = false;
    if (chunks <= 2 || pip_words() > 0 || faulted(WT_FAULT_SLOTS))
      return true;
    const bool tiled = sh_.plan->tiled();
    Ctx &C = *ctx_;
    size_t grow = 0;             /* bytes the buffers must grow by */
    for (int cat = 0; cat < ncat; cat++) {
      const size_t n = (size_t)(cat == 0 ? job->a : job->b).n;
      const size_t d = n * sizeof(DPt), f = tiled ? n * sizeof(float4) : 0;
      grow += (d > C.rd[cat].bytes ? d - C.rd[cat].bytes : 0) +
              (f > C.rf[cat].bytes ? f - C.rf[cat].bytes : 0);
    }
    size_t free_b = 0, total_b = 0;
    if (!ck(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
      return false;
    if (grow > free_b / 2) return true;
    for (int cat = 0; cat < ncat; cat++) {
      const size_t n = (size_t)(cat == 0 ? job->a : job->b).n;
      if (!need(C.rd[cat], n * sizeof(DPt)) ||
          (tiled && !need(C.rf[cat], n * sizeof(float4))))
        return false;
      have_[cat].assign((size_t)((n + CHUNK - 1) / CHUNK), 0);
    }
    resident_ = true;
    return true;
  }

#ifndef WT_CUDA_NOSORT
  /* what ordering a chunk needs: keys, indices, the task boundaries of
   * each catalog (copied now) and CUB's scratch space */
  bool reserve_ordering()
  {
    const wt_job *job = sh_.job;
    Ctx &C = *ctx_;
    const size_t cap = (size_t)cap_;
    for (int k = 0; k < 2; k++)
      if (!need(C.key[k], cap * sizeof(unsigned long long)) ||
          !need(C.idx[k], cap * sizeof(uint32_t)))
        return false;
    for (int cat = 0; cat < (job->is_auto ? 1 : 2); cat++) {
      const std::vector<long long> &bv = *sh_.bounds[cat];
      if (!need(C.bnd[cat], (bv.size() + 1) * sizeof(long long)) ||
          !ck(cudaMemcpyAsync(C.bnd[cat].p, bv.data(),
                              bv.size() * sizeof(long long),
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of task boundaries"))
        return false;
    }
    cub::DoubleBuffer<unsigned long long> dk(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> dv(nullptr, nullptr);
    size_t tb = 0;
    return ck(cub::DeviceRadixSort::SortPairs(nullptr, tb, dk, dv, (int)cap_,
                                              0, 64, C.stream),
              "cub::DeviceRadixSort (size query)") &&
           need(C.sort_tmp, tb);
  }
#endif

  /* zeroed histograms, and the plan's edges and lookup table, unless the
   * context holds them already (a plan's are those of its key: get_plan) */
  bool upload_plan()
  {
    const wt_job *job = sh_.job;
    const Plan &plan = *sh_.plan;
    Ctx &C = *ctx_;
    const size_t n_hist = hist_len();
    if (!ck(cudaMemsetAsync(C.ghist.p, 0,
                            ghist_words() * sizeof(unsigned long long),
                            C.stream), "cudaMemsetAsync") ||
        (plan.weighted &&
         !ck(cudaMemsetAsync(C.gw.p, 0, n_hist * sizeof(double), C.stream),
             "cudaMemsetAsync")) ||
        (plan.angles &&
         !ck(cudaMemsetAsync(C.gt.p, 0, n_hist * sizeof(double), C.stream),
             "cudaMemsetAsync")))
      return false;
    if (job->pip) {
      /* the PIP tables, every call (small): factors, chords, weights */
      const wt_pip *q = job->pip;
      const size_t nb = q->n_words > 0 ? 32 * (size_t)q->n_words + 1 : 0;
      double *t = static_cast<double *>(C.pipt.p);
      if ((nb && !ck(cudaMemcpyAsync(t, q->by_count, nb * sizeof(double),
                                     cudaMemcpyHostToDevice, C.stream),
                     "cudaMemcpyAsync of PIP factors")) ||
          (q->n_ang > 0 &&
           (!ck(cudaMemcpyAsync(t + nb, q->ang_d2, q->n_ang * sizeof(double),
                                cudaMemcpyHostToDevice, C.stream),
                "cudaMemcpyAsync of angular weights") ||
            !ck(cudaMemcpyAsync(t + nb + q->n_ang, q->ang_w,
                                q->n_ang * sizeof(double),
                                cudaMemcpyHostToDevice, C.stream),
                "cudaMemcpyAsync of angular weights"))))
        return false;
    }
    const bool loaded = C.loaded == sh_.plan;
    C.loaded.reset();
    if (!loaded &&
        !ck(cudaMemcpyAsync(C.upper.p, job->bins->upper,
                            sh_.an->n_slots * sizeof(double),
                            cudaMemcpyHostToDevice, C.stream),
            "cudaMemcpyAsync of edges"))
      return false;
    if (plan.tiled() && loaded) {
      /* already on the device */
    } else if (plan.wfast) {
      size_t tb = plan.wtab.size() * sizeof(float);
      if (!need(C.thr, tb) ||
          !ck(cudaMemcpyAsync(C.thr.p, plan.wtab.data(), tb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table"))
        return false;
    } else if (plan.fast) {
      size_t tb = plan.ft.thr.size() * sizeof(float);
      size_t mb = plan.ft.cmap.size() * sizeof(int2);
      if (!need(C.thr, tb) || !need(C.cmap, mb) ||
          !ck(cudaMemcpyAsync(C.thr.p, plan.ft.thr.data(), tb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table") ||
          !ck(cudaMemcpyAsync(C.cmap.p, plan.ft.cmap.data(), mb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table"))
        return false;
    } else if (job->bins->table) {
      size_t tb = (size_t)job->bins->table_size * sizeof(uint16_t);
      if (!need(C.btab, tb) ||
          !ck(cudaMemcpyAsync(C.btab.p, job->bins->table, tb,
                              cudaMemcpyHostToDevice, C.stream),
              "cudaMemcpyAsync of the lookup table"))
        return false;
    }
    C.loaded = sh_.plan;
    return true;
  }

  /* Launches are queued one ahead: while the GPU runs launch k, the host
   * prepares k + 1 (its items go through pinned buffer (k + 1) % 2, free
   * once launch k - 1 has finished). Chunk loads are queued on the same
   * stream, so they wait for the kernels that still read the slot. The
   * devices share the launches (sh_.take()), which may come while they
   * count (a walk feeding the job): with whole catalogs resident, every
   * chunk is loaded before the first launch, while the host still plans. */
  bool launch_all()
  {
    std::vector<Item> items;
    if (resident_) {
      const bool fast = sh_.plan->tiled();
      for (int cat = 0; cat < 2; cat++)
        for (size_t c = 0; c < have_[cat].size(); c++) {
          if (sh_.stop.load()) return false;
          View v;
          int s = -1;
          if (!load_chunk(cat, (int)c, -1, v, s, fast)) return false;
        }
    }
    for (;;) {
      const Launch *L = nullptr;
      const std::vector<Row> *rows = nullptr;
      if (!sh_.take(L, rows)) return !sh_.stop.load();
      if (!launch(*L, *rows, items)) return false;
    }
  }

  /* one launch: its chunks resident, its items on the device, the kernel
   * queued between two events; the test fault of a launch strikes after
   * the first */
  bool launch(const Launch &L, const std::vector<Row> &rows,
              std::vector<Item> &items)
  {
    const Plan &plan = *sh_.plan;
    Ctx &C = *ctx_;
    const int b = (int)(launched_ & 1);
    if (!retire(b)) return false;
    int si = -1, sj = -1;
    View vI, vJ;
    if (!load_chunk(0, L.cI, -1, vI, si, plan.tiled())) return false;
    if (L.same) {
      vJ = vI;
    } else if (!load_chunk(sh_.job->is_auto ? 0 : 1, L.cJ, si, vJ, sj,
                           plan.tiled())) {
      return false;
    }
    make_items(L, rows, row_points(plan.tiled()),
               item_align(plan.tiled()), max_blocks_, items);
    if (items.empty()) return true;
    const size_t ib = items.size() * sizeof(Item);
    if (ib > C.hitems[b].bytes || ib > C.items.bytes) {
      /* not expected (item_cap bounds it); grow with nothing in flight */
      if (!retire(1 - b) || !need(C.items, ib) ||
          !need(C.hitems[b], ib, true))
        return false;
    }
    memcpy(C.hitems[b].p, items.data(), ib);
    const int nblocks = (int)(items.size() < (size_t)max_blocks_
                                  ? items.size() : max_blocks_);
    if (!ck(cudaMemcpyAsync(C.items.p, C.hitems[b].p, ib,
                            cudaMemcpyHostToDevice, C.stream),
            "cudaMemcpyAsync of work items") ||
        !ck(cudaMemsetAsync(C.counter.p, 0, sizeof(int), C.stream),
            "cudaMemsetAsync") ||
        !ck(cudaEventRecord(C.ev0[b], C.stream), "cudaEventRecord"))
      return false;
    const bool queued = plan.fast
        ? queue_fast(vI, vJ, (int)items.size(), nblocks)
        : queue_exact(vI, vJ, (int)items.size(), nblocks, plan.wfast);
    if (!queued || !ck(cudaGetLastError(), "kernel launch") ||
        !ck(cudaEventRecord(C.ev1[b], C.stream), "cudaEventRecord"))
      return false;
    inflight_[b] = true;
    inflight_pairs_[b] = L.pairs;
    launched_++;
    return !(launched_ == 1 &&
             inject(WT_FAULT_LAUNCH, cudaErrorLaunchFailure, "kernel launch"));
  }

  /* the arguments both kernels take: resident chunks vI and vJ, the
   * launch's items, the edges and the histograms */
  template <class Args>
  void common_args(Args &a, const View &vI, const View &vJ, int n_items)
  {
    Ctx &C = *ctx_;
    a.dI = vI.d;
    a.dJ = vJ.d;
    a.nI = (int)vI.n;
    a.nJ = (int)vJ.n;
    a.items = static_cast<const Item *>(C.items.p);
    a.n_items = n_items;
    a.counter = static_cast<int *>(C.counter.p);
    a.upper = static_cast<const double *>(C.upper.p);
    a.n_slots = sh_.an->n_slots;
    a.ghist = static_cast<unsigned long long *>(C.ghist.p);
  }

  bool queue_kernel(void **args, int threads, int nblocks)
  {
    return ck(cudaLaunchKernel(kfn_, dim3(nblocks), dim3(threads), args,
                               sh_.plan->smem, ctx_->stream),
              "cudaLaunchKernel");
  }

  bool queue_fast(const View &vI, const View &vJ, int n_items, int nblocks)
  {
    const Plan &plan = *sh_.plan;
    Ctx &C = *ctx_;
    FastArgs a;
    common_args(a, vI, vJ, n_items);
    a.fI = vI.f;
    a.fJ = vJ.f;
    a.thr = static_cast<const float *>(C.thr.p);
    a.cmap = static_cast<const int2 *>(C.cmap.p);
    a.fixoff = plan.fixoff;
    a.fix_shared = plan.fix_shared ? 1 : 0;
    a.joff = plan.joff;
    a.itemoff = plan.itemoff;
    a.qoff = plan.qoff;
    a.capoff = plan.capoff;
    a.gbulk = static_cast<unsigned long long *>(C.ghist.p) + hist_len();
    a.onec = plan.ft.onec;
    a.margin = plan.ft.margin;
    void *args[] = {&a};
    return queue_kernel(args, BLOCK, nblocks);
  }

  /* the exact kernel, or (wfast) the weighted kernel, which takes the
   * same arguments and its own (WFastArgs) */
  bool queue_exact(const View &vI, const View &vJ, int n_items, int nblocks,
                   bool wfast)
  {
    const Plan &plan = *sh_.plan;
    const wt_bins *bins = sh_.job->bins;
    ExactArgs a;
    common_args(a, vI, vJ, n_items);
    a.btab = bins->table ? static_cast<const uint16_t *>(ctx_->btab.p)
                         : nullptr;
    a.bshift = bins->table_shift;
    a.bbase = bins->table_base;
    a.bsize = bins->table_size;
    a.bsteps = bins->table_steps;
    a.gw = plan.weighted ? static_cast<double *>(ctx_->gw.p) : nullptr;

    a.rcols = plan.rcols;
    a.joff = plan.joff;
    a.itemoff = plan.itemoff;
    a.woff = plan.woff;
    AngleArgs t;
    t.gt = plan.angles ? static_cast<double *>(ctx_->gt.p) : nullptr;
    t.toff = plan.toff;
    PipArgs q = {};
    if (const wt_pip *w = sh_.job->pip) {
      const size_t nb = w->n_words > 0 ? 32 * (size_t)w->n_words + 1 : 0;
      const double *tab = static_cast<const double *>(ctx_->pipt.p);
      q.n_words = w->n_words;
      q.bI = vI.bits;
      q.bJ = vJ.bits;
      q.stride = (long long)cap_;
      q.by = tab;
      q.n_ang = w->n_ang;
      q.ang_d2 = tab + nb;
      q.ang_w = tab + nb + w->n_ang;
    }
    if (wfast) {
      Ctx &C = *ctx_;
      const int mb = kCfgs[plan.cfg].mb, oct = kCfgs[plan.cfg].oct;
      WFastArgs f;
      f.fI = vI.f;
      f.fJ = vJ.f;
      f.tab = static_cast<const float2 *>(C.thr.p);
      f.n_cells = (int)plan.ft.thr.size();
      f.shift = 23 - mb - 3;
      /* a cell's key is bits(q) >> (23 - mb), counted from the table's
       * lowest octave (as the fast kernel's Shape::KBASE) */
      f.tbase = plan.taboff - (((unsigned)(129 - oct) << mb) << 3);
      f.onec = plan.ft.onec;
      f.margin = plan.ft.margin;
      f.taboff = plan.taboff;
      f.byoff = plan.byoff;
      f.jfoff = plan.joff;
      f.jwoff = plan.jwoff;
      f.jboff = plan.jboff;
      void *args[] = {&a, &f, &q};
      return queue_kernel(args, WBLOCK, nblocks);
    }
    void *args[] = {&a, &t, &q};
    return queue_kernel(args, EBLOCK, nblocks);
  }

  /* both launches in flight done, the older first */
  bool drain()
  {
    return retire((int)(launched_ & 1)) && retire((int)((launched_ + 1) & 1));
  }

  /* the histograms (and weight sums, angle sums) back to the host, into
   * counts, wsums and thsums; the test fault of the copy strikes here */
  bool copy_back()
  {
    const size_t n_hist = hist_len();
    const bool weighted = sh_.plan->weighted;
    Ctx &C = *ctx_;
    std::vector<unsigned long long> out(ghist_words(), 0ull);
    std::vector<double> wout(weighted ? n_hist : 0, 0.0);
    std::vector<double> tout(sh_.plan->angles ? n_hist : 0, 0.0);
    if (inject(WT_FAULT_COPY, cudaErrorUnknown, "cudaMemcpy of counts"))
      return false;
    if (!ck(cudaMemcpyAsync(out.data(), C.ghist.p,
                            ghist_words() * sizeof(unsigned long long),
                            cudaMemcpyDeviceToHost, C.stream),
            "cudaMemcpy of counts") ||
        (weighted &&
         !ck(cudaMemcpyAsync(wout.data(), C.gw.p, n_hist * sizeof(double),
                             cudaMemcpyDeviceToHost, C.stream),
             "cudaMemcpy of weight sums")) ||
        (sh_.plan->angles &&
         !ck(cudaMemcpyAsync(tout.data(), C.gt.p, n_hist * sizeof(double),
                             cudaMemcpyDeviceToHost, C.stream),
             "cudaMemcpy of angle sums")) ||
        !ck(cudaStreamSynchronize(C.stream), "cudaMemcpy of counts"))
      return false;
    bulk = (double)out[n_hist];
    out.resize(n_hist);
    counts.swap(out);
    wsums.swap(wout);
    thsums.swap(tout);
    return true;
  }
};

}  // namespace

#endif
