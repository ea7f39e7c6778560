# What a call allocates, estimated before it starts, and the refusal of a
# call that cannot fit.

# Host memory a count needs beyond the catalogs the user holds, in bytes,
# an estimate on the high side:
#  - per point: checked catalogs (16 bytes), unit vectors (24), copies
#    sorted by patch (24 + 8 for weights), the grid's sorted copies
#    (24 + 8), weights and labels (8 + 4);
#  - per count with patches (n_counts of them: 3 for wtheta(), DD, DR and
#    RR, held together), the arrays of n_bins x n_patches^2: the engine's
#    64-bit slot counts (n_bins + 2 slots) and R's double copy, each again
#    for weight sums; and n_replicates replicate counts per bin;
#  - the CPU engine's buffers: per-thread histogram copies (8 copies of
#    n_bins + 2 32-bit counters, and doubles when weighted), the item
#    records of a chunk (16 MiB), and a count's columns as floats (12 bytes
#    a point, for at most 2^23 points: WT_FLOAT_COPY_MAX in
#    src/cpu/engine.h);
#  - PIP: n_words 32-bit words of the n_points (all catalogs together, as
#    n_points), sorted by the grid and by patch (two copies of 4 bytes a
#    word; the words converted from R are made before the check).
memory_needed <- function(n_points, weighted, patched, n_bins = 0,
                          n_patches = 0, n_replicates = 0, n_counts = 1,
                          threads = 1, word_points = 0) {
  per <- 16 + 24 + 24 + 8 * weighted + 8 * weighted + 4 * patched +
    (24 + 8 * weighted) * patched
  slots <- n_bins + 2
  arrays <- if (patched && n_bins > 0) {
    n_counts * n_patches^2 * (slots * 8 + n_bins * 8) * (1 + weighted) +
      n_counts * n_replicates * n_bins * 8
  } else 0
  buffers <- if (n_bins > 0) {
    threads * 8 * slots * (4 + 8 * weighted) + 2^24 + 12 * min(n_points, 2^23)
  } else 0
  n_points * per + arrays + buffers + 8 * word_points
}

# stops before counting when the estimate exceeds the memory available
# (Linux: MemAvailable of /proc/meminfo; elsewhere not checked)
check_memory <- function(n_points, weighted = FALSE, patched = FALSE,
                         available = memory_available(), ...) {
  need <- memory_needed(n_points, weighted, patched, ...)
  if (!is.na(available) && need > 0.9 * available) {
    stop(sprintf(paste0("counting %s points needs about %.1f GB of memory, ",
                        "but only %.1f GB are available; use fewer points, ",
                        "bins or patches, or distribute = TRUE with a plan ",
                        "whose workers have more memory."),
                 format_n(n_points), need / 1e9, available / 1e9),
         call. = FALSE)
  }
  invisible(need)
}

memory_available <- function() {
  f <- "/proc/meminfo"
  if (!file.exists(f)) return(NA_real_)
  m <- grep("^MemAvailable:", readLines(f, warn = FALSE), value = TRUE)
  if (!length(m)) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", m)) * 1024
}
