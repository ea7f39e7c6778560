# Checkpoints of distributed counts: the directory opened (or made) before
# anything is counted, checked writable, its inputs' hash; each block file
# written atomically with its identity, and a block that does not match
# what the call asks for is recounted. The blocks themselves are run by
# R/distribute.R.

# Opens (or creates) the checkpoint directory of a distributed call, before
# anything is counted. `key` holds everything the counts depend on
# (unit vectors, weights, patch numbers, edges, options); its hash must
# match the one the directory was made with, or the call is refused. The
# number of blocks is part of the checkpoint: `distribute = TRUE` adopts
# the directory's, a different number is refused.
checkpoint_open <- function(how, what, key) {
  dir <- how$checkpoint
  if (is.null(how$n_blocks) || how$n_blocks == 0L || is.null(dir)) return(how)
  hash <- input_hash(list(what = what, key = key))
  manifest <- file.path(dir, "manifest.rds")
  if (dir.exists(dir)) check_checkpoint_writable(dir)
  if (file.exists(manifest)) {
    m <- tryCatch(readRDS(manifest), error = function(e) NULL)
    if (!is.list(m) || is.null(m$hash)) {
      stop("`checkpoint`: ", dQuote(manifest, FALSE), " cannot be read as ",
           "a wtheta checkpoint; use another directory.", call. = FALSE)
    }
    if (!identical(m$hash, hash)) {
      stop("`checkpoint` directory ", dQuote(dir, FALSE), " holds blocks ",
           "of another count (", m$what, ", inputs hash ", m$hash, "; this ",
           what, "() call's inputs hash ", hash, "): the catalogs, bins, ",
           "weights, patches or options differ. Use another directory, or ",
           "delete this one to start afresh.", call. = FALSE)
    }
    if (m$n_blocks != how$n_blocks && !how$auto_blocks) {
      stop("`checkpoint` directory ", dQuote(dir, FALSE), " holds ",
           m$n_blocks, " blocks per catalog, but `distribute` is ",
           how$n_blocks, "; use distribute = ", m$n_blocks, " (or TRUE) to ",
           "resume, or another directory.", call. = FALSE)
    }
    how$n_blocks <- as.integer(m$n_blocks)
  } else {
    if (dir.exists(dir) && length(list.files(dir, all.files = TRUE,
                                             no.. = TRUE))) {
      stop("`checkpoint` directory ", dQuote(dir, FALSE), " is not empty ",
           "and holds no wtheta manifest; use an empty or new directory.",
           call. = FALSE)
    }
    if (!dir.exists(dir) && !dir.create(dir, recursive = TRUE,
                                        showWarnings = FALSE)) {
      stop("`checkpoint` directory ", dQuote(dir, FALSE), " cannot be ",
           "created.", call. = FALSE)
    }
    save_atomic(list(format = 1L, what = what, hash = hash,
                     n_blocks = how$n_blocks,
                     created = format(Sys.time(), tz = "UTC", usetz = TRUE),
                     version = format(utils::packageVersion("wtheta"))),
                manifest)
  }
  check_checkpoint_writable(dir)
  how$checkpoint_hash <- hash
  how
}

# Blocks are written to the checkpoint as they finish: a directory that
# cannot take them is refused before anything is counted (a file is made
# and removed, which also catches what file.access() does not, such as a
# read-only file system or a root user)
check_checkpoint_writable <- function(dir) {
  probe <- file.path(dir, ".wt-probe")
  ok <- file.access(dir, 2L) == 0L &&
    suppressWarnings(tryCatch(file.create(probe), error = function(e) FALSE))
  if (file.exists(probe)) unlink(probe)
  if (!isTRUE(ok)) {
    stop("`checkpoint` directory ", dQuote(dir, FALSE), " is not writable: ",
         "the finished blocks could not be saved. Use a directory this ",
         "process can write.", call. = FALSE)
  }
}

# md5 of an object's serialization (through a temporary file: base R has
# no in-memory digest before R 4.5)
input_hash <- function(x) {
  tmp <- tempfile("wtheta-hash-")
  on.exit(unlink(tmp), add = TRUE)
  con <- file(tmp, "wb")
  serialize(x, con, xdr = FALSE, version = 3L)
  close(con)
  unname(tools::md5sum(tmp))
}

# saveRDS to a temporary name in the same directory, then rename: a
# reader sees the whole file or none
save_atomic <- function(x, path) {
  tmp <- tempfile(".tmp-", tmpdir = dirname(path))
  saveRDS(x, tmp)
  if (!file.rename(tmp, path)) {
    unlink(tmp)
    stop("`checkpoint`: cannot write ", dQuote(path, FALSE), ".",
         call. = FALSE)
  }
}

# why a block file is not the block wanted
block_mismatch <- function(got, want) {
  if (is.null(got)) return("says nothing of the block it holds")
  if (!identical(got$hash, want$hash)) return("holds a block of other inputs")
  if (!identical(got$n_blocks, want$n_blocks)) {
    return(paste0("holds a block of a count cut into ", got$n_blocks,
                  " blocks, not ", want$n_blocks))
  }
  paste0("holds block pair ", got$label, "-", got$i, "-", got$j, ", not ",
         want$label, "-", want$i, "-", want$j)
}
