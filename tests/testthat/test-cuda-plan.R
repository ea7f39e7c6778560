# The CUDA engine's host planning (src/cuda/plan_*.cxx) is built by the C++
# compiler in every build, with or without nvcc, so these tests run on
# machines without a GPU. They check its plans against computations
# written here independently of the C++.

plan_table <- function(edges, sane = TRUE, r2max = 1, eta = 0,
                       weighted = FALSE, smem = c(233472, 232448),
                       wwords = -1, unit_w = FALSE) {
  .Call(wtheta:::C_cuda_plan_table, as.double(edges),
        c(sane, r2max, eta, weighted, wwords, unit_w), as.double(smem))
}

# tasks: k x 5 (a0, a1, b0, b1, out), 0-based and half-open
plan_work <- function(n_a, n_b, is_auto, tasks, fast = TRUE, chunk = 0,
                      max_pairs = 0, n_devices = 1, n_blocks = 4,
                      threads = 1) {
  .Call(wtheta:::C_cuda_plan_work, c(n_a, n_b, is_auto),
        matrix(as.double(tasks), ncol = 5),
        c(fast, chunk, max_pairs, n_devices, n_blocks, threads))
}

# the table shapes of src/cuda/shape.h (kCfgs): mantissa bits, octaves
table_shapes <- list(c(7, 16), c(8, 16), c(9, 16), c(10, 16), c(11, 8))
# constants of src/cuda/shape.h: i points per row (fast BI, exact EBLOCK),
# j alignment of items (BJ, EBJ), bytes of the warps' queues, chunk size
row_i <- c(fast = 512, exact = 256)
chunk_points <- 2^21

as_float <- function(x) readBin(writeBin(x, raw(), size = 4), "double",
                                n = length(x), size = 4)

# the fast table of shape cfg (0-based), recomputed from the proof in the
# comments of plan_scan.cxx (the margin) and plan_choice.cxx (the table):
# edges are thresholds upper / 2 + c in float; a cell
# [A, B) of q holds +Inf when no threshold lies within 2M of it, the one
# threshold when one does, NaN when several do (and near q = 2, NaN
# unless none lies within 2M + 6u)
expected_table <- function(upper, cfg, r2max = 1, eta = 0) {
  mb <- table_shapes[[cfg + 1]][1]
  oct <- table_shapes[[cfg + 1]][2]
  c0 <- 2^(2 - oct) + 2^(2 - oct - 4)
  edges <- upper[-length(upper)]          # the last slot has no edge
  v <- edges / 2 + c0
  t <- as_float(v)
  ok <- is.finite(v) & v < 4
  max_err <- if (any(ok)) max(abs(t[ok] - v[ok])) else 0
  u <- 2^-24
  e <- (2 * u + u^2) * r2max * (1 + 1e-12) + 3 * u + eta + 1e-15 + 1e-14
  m <- (e + max_err + 1e-15) * 1.02
  key <- (129 - oct) * 2^mb + seq_len(oct * 2^mb) - 1
  cell_start <- function(k) 2^(k %/% 2^mb - 127) * (1 + (k %% 2^mb) / 2^mb)
  a <- cell_start(key)
  b <- cell_start(key + 1)
  list(c = c0, t = t, m = m, a = a, b = b, n_cells = length(key))
}

check_table <- function(p, edges) {
  x <- expected_table(p$upper, p$cfg)
  expect_equal(p$c, x$c)
  expect_length(p$thr, x$n_cells)
  # the margin: the smallest float at or above the bound of the proof
  expect_gte(p$margin, x$m)
  expect_identical(as_float(p$margin), p$margin)
  expect_lt(p$margin - 2^(floor(log2(p$margin)) - 23), x$m)
  m2 <- 2 * p$margin
  u <- 2^-24
  lo <- findInterval(x$a - m2, x$t)        # thresholds <= A - 2M
  hi <- findInterval(x$b + m2, x$t)        # thresholds <= B + 2M
  nrel <- hi - lo
  thr <- ifelse(nrel == 0, Inf, ifelse(nrel == 1, x$t[pmax(lo + 1, 1)], NaN))
  top <- x$b > 2 - 2 * x$c - 2e-5
  wide <- findInterval(x$b + m2 + 6 * u, x$t) -
    findInterval(x$a - m2 - 6 * u, x$t)
  thr[top] <- ifelse(wide[top] == 0, Inf, NaN)
  expect_identical(p$thr, thr)
  expect_identical(p$lo, as.integer(lo))
  expect_identical(p$hi, as.integer(lo + (nrel == 1)))
  multi <- sum(pmax(pmin(x$b, 2 + x$c) - x$a, 0)[is.nan(thr)])
  expect_equal(p$multi, multi, tolerance = 1e-12)
}

test_that("the fast table and its margin match the proof, cell by cell", {
  log_bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
  p <- plan_table(log_bins)
  expect_true(p$fast)
  expect_identical(p$cfg, 0L)
  check_table(p, log_bins)
  lin <- theta_bins(0, 90, width = 0.5)
  q <- plan_table(lin)
  expect_true(q$fast)
  check_table(q, lin)
  # denser edges pick finer tables (fewer cells with several edges)
  dense <- theta_bins(0.001, 10, n = 1000, log = TRUE)
  r <- plan_table(dense)
  expect_identical(r$cfg, 1L)
  check_table(r, dense)
  lin <- theta_bins(0, 10, n = 1000)
  r <- plan_table(lin)
  expect_identical(r$cfg, 2L)
  check_table(r, lin)
})

test_that("the margin grows with the inputs' distance from unit vectors", {
  bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
  m <- vapply(c(0, 1e-9, 1e-7, 5e-7), function(eta)
    plan_table(bins, r2max = 1 + eta, eta = eta)$margin, 0)
  expect_true(all(diff(m) > 0))
  # beyond the proof's range (|X|^2 - 1 above 1e-6): the exact kernel
  expect_false(plan_table(bins, r2max = 1 + 2e-6, eta = 2e-6)$fast)
})

test_that("plans fit the device's shared memory and fall back to exact", {
  bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
  n_slots <- length(bins) + 1
  round16 <- function(x) ceiling(x / 16) * 16
  devices <- list(h100 = c(233472, 232448), a100 = c(167936, 166912),
                  small = c(49152, 49152))
  for (d in devices) {
    p <- plan_table(bins, smem = d)
    expect_lte(p$smem, d[2])
    expect_lte(p$smem + 1024, d[1])
    if (p$fast) {
      shape <- table_shapes[[p$cfg + 1]]
      cells <- shape[2] * 2^shape[1]
      fix <- if (p$fix_shared) round16(n_slots * 4) else 0
      # table (threshold and two counters), per-slot counters, j tile,
      # item slot, the warps' queues (16 warps x 128 entries x 4 bytes),
      # bulk counting's caps (4 slices of 16 bytes, a word for each of the
      # tile's 11 runs of 96 j points)
      expect_identical(p$smem, cells * 12 + 64 + fix + 1024 * 16 + 16 +
                         16 * 128 * 4 + round16(4 * 16 + 11 * 4))
    }
  }
  # 48 KiB holds no fast table with its tile and queues: exact kernel,
  # with as many counter columns as fit
  small <- plan_table(bins, smem = devices$small)
  expect_false(small$fast)
  expect_identical(small$rcols, 32L)
  # exact plans: R columns of 32-bit counters, the most (a power of two up
  # to 32) that fit beside the j tile of 512 double points
  exact_r <- function(n_slots, d, weighted) {
    for (r in 2^(5:0)) {
      s <- round16(n_slots * r * 4) +
        (if (weighted) round16(n_slots * r * 8) else 0) + 512 * 32 + 16
      if (s <= d[2] && s + 1024 <= d[1] && (!weighted || s <= 56 * 1024))
        return(c(r, s))
    }
    c(0, 512 * 32 + 16)
  }
  many <- theta_bins(0, 180, n = 20000)
  for (d in devices) for (w in c(FALSE, TRUE)) {
    p <- plan_table(many, weighted = w, smem = d)
    expect_false(p$fast)
    x <- exact_r(length(many) + 1, d, w)
    expect_identical(c(p$rcols, p$smem), c(as.integer(x[1]), x[2]))
  }
  # weights, and inputs the proof does not cover, take the exact kernel
  expect_false(plan_table(bins, weighted = TRUE)$fast)
  expect_false(plan_table(bins, sane = FALSE)$fast)
})

test_that("PIP counts without individual weights take the count kernel", {
  bins <- theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")
  n_slots <- 22
  h100 <- c(233472, 232448)
  round16 <- function(x) ceiling(x / 16) * 16
  # the count kernel's shared memory: R columns of n_slots x K 32-bit
  # counters (K = 32 words + 1 popcounts), the {threshold, slot} table, the
  # factors, a tile of 128 j points (float4 with the first word, then the
  # other words) and the item
  count_smem <- function(R, K, nw, n_cells) {
    round16(n_slots * K * R * 4) + n_cells * 8 + round16(K * 8) +
      128 * (16 + 4 * (nw - 1)) + 16
  }
  for (nw in c(2, 4)) {
    K <- 32 * nw + 1
    p <- plan_table(bins, weighted = TRUE, wwords = nw, unit_w = TRUE,
                    smem = h100)
    expect_true(p$wfast)
    expect_true(p$wcount)
    expect_false(p$fast)
    # one column of counters, three blocks a multiprocessor at least
    expect_identical(p$rcols, 1L)
    cells <- (p$smem - round16(n_slots * K * p$rcols * 4) - round16(K * 8) -
                128 * (16 + 4 * (nw - 1)) - 16) / 8
    expect_identical(p$smem, count_smem(p$rcols, K, nw, cells))
    expect_true(cells %in% (16 * 2^(7:10)))
    expect_gte(h100[1] %/% (p$smem + 1024), 3)
    # individual weights, or no words: the weighted kernel with its runs
    w <- plan_table(bins, weighted = TRUE, wwords = nw, unit_w = FALSE,
                    smem = h100)
    expect_true(w$wfast)
    expect_false(w$wcount)
  }
  expect_false(plan_table(bins, weighted = TRUE, wwords = 0, unit_w = TRUE,
                          smem = h100)$wcount)
  # counters that do not fit three blocks a multiprocessor (here 400 bins:
  # 402 x 65 x 4 bytes a column): the weighted kernel
  fine <- theta_bins(0.1, 10, n = 400)
  f <- plan_table(fine, weighted = TRUE, wwords = 2, unit_w = TRUE,
                  smem = h100)
  expect_false(f$wcount)
})

# pairs covered by the items, against those of the tasks: cover[i, j]
# counts the items holding pair (i, j) (1-based, j in catalog b, or in a
# for an auto job), lab[i, j] their histogram
cover_of <- function(w, n_a, n_b, chunk) {
  cover <- matrix(0L, n_a, n_b)
  lab <- matrix(NA_integer_, n_a, n_b)
  it <- w$items
  for (k in seq_len(nrow(it))) {
    l <- it[k, 1] + 1
    ci <- w$launches[l, 1]
    cj <- w$launches[l, 2]
    i <- ci * chunk + (it[k, 2]:(it[k, 3] - 1)) + 1
    j <- cj * chunk + (it[k, 4]:(it[k, 5] - 1)) + 1
    m <- if (it[k, 6] == 1) outer(i, j, "<") else TRUE
    cover[i, j] <- cover[i, j] + m
    lab[i, j][m] <- it[k, 7]
  }
  list(cover = cover, lab = lab)
}

tasks_cover <- function(tasks, n_a, n_b, is_auto) {
  cover <- matrix(0L, n_a, n_b)
  lab <- matrix(NA_integer_, n_a, n_b)
  for (k in seq_len(nrow(tasks))) {
    i <- (tasks[k, 1] + 1):tasks[k, 2]
    j <- (tasks[k, 3] + 1):tasks[k, 4]
    diag <- is_auto && tasks[k, 1] == tasks[k, 3]
    m <- if (diag) outer(i, j, "<") else TRUE
    cover[i, j] <- cover[i, j] + m
    lab[i, j][m] <- as.integer(tasks[k, 5])
  }
  list(cover = cover, lab = lab)
}

check_items <- function(w, n_a, n_b, is_auto, chunk, fast, max_pairs) {
  it <- w$items
  L <- w$launches
  bi <- row_i[if (fast) "fast" else "exact"]
  len <- function(n, c) pmin(n - c * chunk, chunk)
  # each item inside its chunks, of at most one row of i points
  expect_true(all(it[, 3] - it[, 2] <= bi & it[, 2] < it[, 3] &
                    it[, 4] < it[, 5]))
  expect_true(all(it[, 3] <= len(n_a, L[it[, 1] + 1, 1])))
  expect_true(all(it[, 5] <= len(if (is_auto) n_a else n_b,
                                 L[it[, 1] + 1, 2])))
  # a launch's pairs are its items', its items within their bound, one
  # resident chunk exactly when an auto job pairs a chunk with itself
  pairs <- ifelse(it[, 6] == 1,
                  vapply(seq_len(nrow(it)), function(k)
                    sum(outer(it[k, 2]:(it[k, 3] - 1),
                              it[k, 4]:(it[k, 5] - 1), "<")), 0),
                  (it[, 3] - it[, 2]) * (it[, 5] - it[, 4]))
  expect_equal(unname(L[, 6]), as.numeric(tapply(pairs, it[, 1], sum)))
  expect_identical(unname(L[, 7]), as.numeric(tabulate(it[, 1] + 1,
                                                       nrow(L))))
  expect_true(all(L[, 7] <= L[, 8]))
  expect_identical(L[, 3] == 1, is_auto & L[, 1] == L[, 2])
  # launches in chunk-pair order, each cut once it reaches max_pairs
  expect_false(is.unsorted(L[, 1] * 1e6 + L[, 2]))
  expect_true(all(L[, 6] < max_pairs + bi * chunk))
}

test_that("items cover every pair of the tasks exactly once", {
  chunk <- 700
  # an auto job cut in patches: each patch with itself, and patch pairs
  cuts <- c(0, 300, 1100, 1650, 2500)
  tk <- NULL
  h <- 0
  for (p in 1:4) for (q in p:4) {
    tk <- rbind(tk, c(cuts[p], cuts[p + 1], cuts[q], cuts[q + 1], h))
    h <- h + 1
  }
  for (fast in c(TRUE, FALSE)) for (nb in c(1, 7)) {
    w <- plan_work(2500, 2500, TRUE, tk, fast = fast, chunk = chunk,
                   max_pairs = 2e5, n_blocks = nb)
    check_items(w, 2500, 2500, TRUE, chunk, fast, 2e5)
    expect_identical(cover_of(w, 2500, 2500, chunk),
                     tasks_cover(tk, 2500, 2500, TRUE))
  }
  # a cross job with ranges that straddle chunks, two histograms
  tk <- rbind(c(0, 1800, 0, 900, 0), c(250, 1300, 900, 1500, 1))
  w <- plan_work(1800, 1500, FALSE, tk, chunk = chunk, max_pairs = 3e5,
                 n_blocks = 3)
  check_items(w, 1800, 1500, FALSE, chunk, TRUE, 3e5)
  expect_identical(cover_of(w, 1800, 1500, chunk),
                   tasks_cover(tk, 1800, 1500, FALSE))
  # empty tasks add nothing
  w <- plan_work(10, 10, TRUE, rbind(c(3, 3, 3, 3, 0)))
  expect_identical(dim(w$items), c(0L, 7L))
})

test_that("a grid's long task list plans the same on any number of threads", {
  # 70500 small tasks (all pairs of tiles of 8 points), shuffled, across
  # 15 chunks: rows are grouped by chunk pair in task order, on 1 thread
  # or by runs of tasks on several
  n <- 3000
  tile <- seq(0, n - 8, by = 8)
  pq <- which(upper.tri(diag(length(tile)), diag = TRUE), arr.ind = TRUE)
  set.seed(3)
  pq <- pq[sample.int(nrow(pq)), ]
  tk <- cbind(tile[pq[, 1]], tile[pq[, 1]] + 8, tile[pq[, 2]],
              tile[pq[, 2]] + 8, pq[, 1] %% 3)
  one <- plan_work(n, n, TRUE, tk, chunk = 200, max_pairs = 1e5,
                   n_blocks = 5)
  expect_identical(plan_work(n, n, TRUE, tk, chunk = 200, max_pairs = 1e5,
                             n_blocks = 5, threads = 3), one)
  check_items(one, n, n, TRUE, 200, TRUE, 1e5)
  expect_identical(cover_of(one, n, n, 200), tasks_cover(tk, n, n, TRUE))
  # launches in chunk pair order
  key <- one$launches[, 1] * 15 + one$launches[, 2]
  expect_false(is.unsorted(key))
})

test_that("the engine's chunks and launch sizes", {
  n <- 2^21 + 102848
  w <- plan_work(n, 3000, FALSE, rbind(c(0, n, 0, 3000, 0)),
                 n_blocks = 264)
  L <- w$launches
  expect_identical(sort(unique(L[, 1])), c(0, 1))
  expect_identical(max(w$items[L[w$items[, 1] + 1, 1] == 1, 3]), 102848L)
  expect_identical(sum(L[, 6]), n * 3000)
  expect_true(all(L[, 6] < 2^34 + 512 * 3000))
  # one device: launches of up to 2^34 pairs (2^30 for the exact kernel);
  # several: about a quarter of a device's share, at least 2^28
  m <- 3e5
  auto <- rbind(c(0, m, 0, m, 0))
  total <- m * (m - 1) / 2
  one <- plan_work(m, m, TRUE, auto, n_blocks = 264)$launches
  expect_identical(sum(one[, 6]), total)
  expect_identical(nrow(one), as.integer(ceiling(total / 2^34)))
  four <- plan_work(m, m, TRUE, auto, n_devices = 4, n_blocks = 264)$launches
  expect_identical(sum(four[, 6]), total)
  expect_gte(nrow(four), 16)
  expect_true(all(four[-nrow(four), 6] >= total / 16))
  expect_true(all(four[, 6] < total / 16 + 512 * m))
  exact <- plan_work(3e4, 3e4, TRUE, rbind(c(0, 3e4, 0, 3e4, 0)),
                     fast = FALSE, n_blocks = 264)$launches
  expect_true(all(exact[-nrow(exact), 6] >= 2^30))
  expect_true(all(exact[, 6] < 2^30 + 256 * 3e4))
})
