# What a benchmark's first line says about the machine, shared by the
# scripts in bench/ that source it:
#   m <- bench_machine(backend, devices)
# m$cpu: the CPU model; m$gpu: the GPUs the run may use ("none" for the
# CPU backend, "none usable" without one); m$load: the load averages.
bench_machine <- function(backend, devices = NULL) {
  cpu <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"),
                              value = TRUE)[1])
  be <- wtheta::wtheta_backends()
  gpu <- if (backend == "cpu") "none" else {
    g <- be[be$backend == "cuda" & be$available, ]
    if (!nrow(g)) "none usable" else
      paste(unique(g$name[if (is.null(devices)) TRUE else
                            g$device %in% devices]), collapse = ", ")
  }
  load <- tryCatch(paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3],
                         collapse = " "), error = function(e) "?")
  list(cpu = cpu, gpu = gpu, load = load)
}
