# Helpers for the hardening tests (hostile input, faults, concurrency).

# tools/sanitize.sh sets WTHETA_SANITIZE: tests that only repeat a code path
# on a much larger input (minutes under ASan or valgrind) skip themselves
skip_if_sanitizing <- function() {
  if (nzchar(Sys.getenv("WTHETA_SANITIZE"))) {
    skip("large input: skipped under sanitizers (WTHETA_SANITIZE is set)")
  }
}

# Starts R code in a separate Rscript process that loads wtheta from the
# library this session uses. Returns list(out = output file, done = a file
# that exists once the child has finished, pid = file holding its process id)
# at once when wait = FALSE; with wait = TRUE waits and returns the output
# lines. env: extra "NAME=value" strings.
start_child <- function(code, env = character(), wait = FALSE) {
  dir <- tempfile("wtheta-child")
  dir.create(dir)
  files <- list(script = file.path(dir, "child.R"),
                out = file.path(dir, "out.txt"),
                done = file.path(dir, "done"),
                pid = file.path(dir, "pid"))
  writeLines(c(
    sprintf("writeLines(as.character(Sys.getpid()), %s)", deparse(files$pid)),
    "suppressMessages(library(wtheta))",
    code,
    sprintf("file.create(%s)", deparse(files$done))), files$script)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  rscript <- file.path(R.home("bin"), "Rscript")
  system2(rscript, c("--vanilla", shQuote(files$script)),
          env = c(paste0("R_LIBS=", libs), env),
          stdout = files$out, stderr = files$out, wait = wait)
  if (wait) return(readLines(files$out))
  files
}

# Waits for a child from start_child() to finish; its output lines
wait_child <- function(child, timeout = 120) {
  t0 <- Sys.time()
  while (!file.exists(child$done)) {
    if (as.numeric(Sys.time() - t0, units = "secs") > timeout) {
      stop("child process did not finish in ", timeout, " s:\n",
           paste(readLines(child$out), collapse = "\n"))
    }
    Sys.sleep(0.05)
  }
  Sys.sleep(0.1)
  readLines(child$out)
}

# Waits until a file exists (a child's pid or a marker it writes)
wait_file <- function(path, timeout = 60) {
  t0 <- Sys.time()
  while (!file.exists(path) || !length(readLines(path, warn = FALSE))) {
    if (as.numeric(Sys.time() - t0, units = "secs") > timeout) {
      stop("no ", path, " after ", timeout, " s")
    }
    Sys.sleep(0.05)
  }
  readLines(path, warn = FALSE)
}

# Runs R code in a fresh Rscript (wtheta loaded from this session's
# library) under a time limit, so that a crash or a hang fails the calling
# test instead of ending the suite. Returns list(status, out): the exit
# status (124 when the limit was hit, as coreutils' timeout says) and the
# output lines. env: extra "NAME=value" strings.
run_child <- function(code, env = character(), timeout = 60) {
  script <- tempfile("wtheta-child", fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c("suppressMessages(library(wtheta))", code), script)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  rscript <- file.path(R.home("bin"), "Rscript")
  limit <- Sys.which("timeout")
  cmd <- if (nzchar(limit)) limit else rscript
  args <- c(if (nzchar(limit)) c("-k", "5", timeout, shQuote(rscript)),
            "--vanilla", shQuote(script))
  out <- suppressWarnings(system2(cmd, args, stdout = TRUE, stderr = TRUE,
                                  env = c(paste0("R_LIBS=", libs), env)))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, out = as.character(out))
}

# the text after "tag: " on the child's output line that starts with it
child_says <- function(res, tag) {
  line <- grep(paste0("^", tag, ": "), res$out, value = TRUE)
  if (length(line) != 1L) {
    stop("no single line \"", tag, ": ...\" in the child's output:\n",
         paste(res$out, collapse = "\n"))
  }
  sub(paste0("^", tag, ": "), "", line)
}
