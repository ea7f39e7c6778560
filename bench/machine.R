# Shared by the scripts in bench/ that source it (from the repository root).
#
# bench_opt(args, name, default): the value of --name=VALUE among the
# command's arguments, TRUE for a bare --name, default when absent.
bench_opt <- function(args, name, default) {
  hit <- grep(paste0("^--", name, "(=|$)"), args, value = TRUE)
  if (!length(hit)) return(default)
  if (!grepl("=", hit[1])) return(TRUE)
  sub("^[^=]*=", "", hit[1])
}

# What a benchmark's first line says about the machine and the run, shared
# by the scripts in bench/ that source it: bench_machine(backend, devices)
# is "host: <CPU> (<cores> cores), load <load averages>; GPU: <the GPUs the
# run may use> ("none" for the CPU backend, "none usable" without one);
# wtheta <version>, <R>; backend <backend>[ (devices ...)]"; the script
# adds its own settings.
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
  sprintf("host: %s (%d cores), load %s; GPU: %s; wtheta %s, %s; backend %s%s",
          cpu, parallel::detectCores(), load, gpu,
          utils::packageVersion("wtheta"), R.version.string, backend,
          if (is.null(devices)) "" else
            paste0(" (devices ", paste(devices, collapse = ","), ")"))
}
