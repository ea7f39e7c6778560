# The narrow kernel's width (WTHETA_CPU_NARROW): the CPU workload of
# bench/scale.R (N data resampled from the classic galaxies x N randoms,
# 20 log bins 0.01-10 deg, wtheta() DD+DR+RR, grid on) at each width, the
# widths interleaved over REPS rounds. Prints wall and CPU seconds (user +
# system of this process, less sensitive to other load on a shared
# machine), minimum and median per width; counts must be identical.
#   Rscript bench/narrow.R [N] [REPS] [WIDTHS] [DATA_DIR]
#   e.g. Rscript bench/narrow.R 3e5 3 0,2,3,4,5,6
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 3e5
reps <- if (length(args) >= 2) as.integer(args[2]) else 3L
widths <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else c("0", "3")
dir <- if (length(args) >= 4) args[4] else file.path("..", "shared", "data")
bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
D0 <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
set.seed(1)
pick <- sample.int(nrow(D0), n, replace = TRUE)
D <- data.frame(ra = (D0$ra[pick] + rnorm(n, sd = 1 / 60)) %% 360,
                dec = pmin(90, pmax(-90, D0$dec[pick] + rnorm(n, sd = 1 / 60))))
R <- random_catalog(n, ra_range = c(0, 90), dec_range = c(0, 90), seed = 2)
options(wtheta.grid = TRUE, wtheta.progress = FALSE)
cpu <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"),
                            value = TRUE)[1])
cat(sprintf("%s, %d threads; %s x %s, 20 log bins 0.01-10 deg, grid on\n",
            cpu, wtheta_threads(), format(n), format(n)))
rows <- list()
ref <- NULL
for (r in seq_len(reps)) for (w in widths) {
  Sys.setenv(WTHETA_CPU_NARROW = w)
  t0 <- proc.time()
  v <- wtheta(D, R, bins, backend = "cpu", error = "none")
  t <- proc.time() - t0
  if (is.null(ref)) ref <- v
  stopifnot(identical(ref$DD, v$DD), identical(ref$DR, v$DR),
            identical(ref$RR, v$RR))
  rows[[length(rows) + 1]] <- data.frame(
    width = w, wall = t[["elapsed"]],
    cpu = t[["user.self"]] + t[["sys.self"]])
}
Sys.unsetenv("WTHETA_CPU_NARROW")
tab <- do.call(rbind, rows)
out <- do.call(rbind, lapply(split(tab, tab$width), function(d)
  data.frame(width = d$width[1], runs = nrow(d), wall_min = min(d$wall),
             wall_median = stats::median(d$wall), cpu_min = min(d$cpu),
             cpu_median = stats::median(d$cpu))))
print(out[match(widths, out$width), ], row.names = FALSE, digits = 4)
utils::write.csv(tab, "bench/results/narrow-results.csv", row.names = FALSE)
