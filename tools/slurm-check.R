# Run by tools/slurm-check.sh once its single-node SLURM is up (SLURM_CONF
# set): wtheta through future.batchtools on that SLURM, compared with a
# local run. Stops with an error when something differs.
suppressPackageStartupMessages({
  library(wtheta)
  library(future)
})
tmpl <- system.file("batchtools", "slurm.tmpl", package = "wtheta")
if (!nzchar(tmpl)) stop("the installed wtheta has no batchtools/slurm.tmpl")
# R_LIBS reaches the jobs through the environment (sbatch --export=ALL)
plan(future.batchtools::batchtools_slurm, template = tmpl,
     resources = list(ncpus = 1L, walltime = 600))

set.seed(5)
data <- random_catalog(3000, ra_range = c(0, 30), dec_range = c(-15, 15))
rand <- random_catalog(6000, ra_range = c(0, 30), dec_range = c(-15, 15))
data$w <- runif(3000, 0.5, 1.5)
bins <- theta_bins(0.05, 10, n = 12, log = TRUE)
same <- function(what, a, b) {
  if (!identical(a, b)) stop("SLURM check: ", what, " differ from the reference run")
  cat(sprintf("  %-44s identical\n", what))
}
hist_of <- function(w) lapply(attr(w, "pair_counts"), function(p)
  p[c("counts", "n_below", "n_above", "patch_counts", "patch_margins")])
jobs <- 0
count_s <- 0
tally <- function(w) for (p in attr(w, "pair_counts")) {
  jobs <<- jobs + p$distributed$tasks - p$distributed$reused +
    p$distributed$retried
  count_s <<- count_s + p$distributed$count_s
}

cat("local run\n")
t0 <- proc.time()[["elapsed"]]
loc <- wtheta(data, rand, bins, threads = 1, error = "jackknife",
              n_patches = 4, seed = 1)
t_local <- proc.time()[["elapsed"]] - t0

cat("distributed on SLURM (distribute = 2: 3 + 4 + 3 jobs)\n")
t0 <- proc.time()[["elapsed"]]
slu <- wtheta(data, rand, bins, threads = 1, error = "jackknife",
              n_patches = 4, seed = 1, distribute = 2)
t_slurm <- proc.time()[["elapsed"]] - t0
tally(slu)
same("histograms (DD, DR, RR, patch margins)", hist_of(slu), hist_of(loc))
same("w", slu$w, loc$w)
same("jackknife w_err", slu$w_err, loc$w_err)
print(attr(slu, "pair_counts")$DR)

pc_same <- function(what, a, b) {
  f <- c("counts", "n_below", "n_above", "n_pairs")
  same(what, unclass(a)[f], unclass(b)[f])
}
pc_local <- pair_counts(data, bins = bins, threads = 1)

cat("a job killed mid-block (its Rscript kills itself), retried\n")
once <- tempfile("fault-", tmpdir = getwd())
options(wtheta.test_block_fault = list(block = 2, action = "die",
                                       once = once))
t0 <- proc.time()[["elapsed"]]
rt <- pair_counts(data, bins = bins, threads = 1, distribute = 2,
                  retries = 1)
t_retry <- proc.time()[["elapsed"]] - t0
options(wtheta.test_block_fault = NULL)
if (!file.exists(once)) stop("SLURM check: the fault was not triggered")
if (rt$distributed$retried != 1L) stop("SLURM check: no block was retried")
jobs <- jobs + 4
pc_same("counts after a killed job", rt, pc_local)
cat(sprintf("  retried %d block (%s); %.1f s with the retry\n",
            rt$distributed$retried, rt$distributed$faults, t_retry))

cat("a hung job stopped by timeout = 40 s (scancel), retried\n")
once <- tempfile("fault-", tmpdir = getwd())
options(wtheta.test_block_fault = list(block = 1, action = "hang",
                                       once = once))
t0 <- proc.time()[["elapsed"]]
ht <- pair_counts(data, bins = bins, threads = 1, distribute = 2,
                  timeout = 40)
t_hang <- proc.time()[["elapsed"]] - t0
options(wtheta.test_block_fault = NULL)
if (ht$distributed$retried != 1L) stop("SLURM check: no block was retried")
jobs <- jobs + 4
pc_same("counts after a hung job", ht, pc_local)
cat(sprintf("  retried %d block (%s); %.1f s with the timeout\n",
            ht$distributed$retried, ht$distributed$faults, t_hang))

cat("checkpointed run, two blocks lost, resumed\n")
ck <- file.path(getwd(), "checkpoint")
w1 <- wtheta(data, rand, bins, threads = 1, distribute = 2, checkpoint = ck)
tally(w1)
unlink(file.path(ck, c("data-data-1-2.rds", "random-random-2-2.rds")))
w2 <- wtheta(data, rand, bins, threads = 1, distribute = 2, checkpoint = ck)
tally(w2)
reused <- sum(vapply(attr(w2, "pair_counts"),
                     function(p) p$distributed$reused, 0))
if (reused != 8) stop("SLURM check: ", reused, " blocks reused, not 8")
same("resumed w and counts", list(w2$w, hist_of(w2)),
     list(w1$w, hist_of(w1)))
loc2 <- wtheta(data, rand, bins, threads = 1)
same("w against a local run", w2$w, loc2$w)

cat("\n(future.batchtools prints an 'Error : BatchtoolsExpiration' line",
    "for the killed job's registry when R exits: expected)\n")
cat("\n", jobs, " jobs submitted (slurmctld's log has the count)\n", sep = "")
cat(sprintf(paste0("\nSLURM check passed: %d jobs run. The jackknife ",
                   "wtheta() took %.1f s on SLURM, %.2f s locally;\n",
                   "its 10 jobs counted for %.2f s in all, so scheduling, ",
                   "job start-up and transfers took about %.1f s ",
                   "(%.2f s a job; %d CPUs run jobs at once).\n"),
            jobs, t_slurm, t_local,
            sum(vapply(attr(slu, "pair_counts"),
                       function(p) p$distributed$count_s, 0)),
            t_slurm - sum(vapply(attr(slu, "pair_counts"),
                                 function(p) p$distributed$count_s, 0)) /
              parallel::detectCores(),
            (t_slurm * parallel::detectCores() -
               sum(vapply(attr(slu, "pair_counts"),
                          function(p) p$distributed$count_s, 0))) / 10,
            parallel::detectCores()))
