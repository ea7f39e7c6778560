# Reading a saved result back (read_wtheta(), read_pair_counts(); the
# writers are in R/results_io.R): the table and its sidecar, each checked
# against the other and against what the file says it holds, so that a
# damaged file or an edited result stops with an error naming the file
# rather than passing as good.

read_result <- function(file, extname, what) {
  check_file(file)
  src <- open_source(file)
  if (src$fits) {
    need_fits(file)
    blob <- tryCatch(fits_read_table(file, hdu = "R_OBJECT"),
                     error = function(e) conditionMessage(e))
    if (is.character(blob)) {
      if (!grepl("no HDU with EXTNAME \"R_OBJECT\"", blob, fixed = TRUE)) {
        stop("`file` \"", file, "\": its R_OBJECT HDU cannot be read (",
             sub("[.]$", "", blob), "); the file is damaged.", call. = FALSE)
      }
      if (extname == "WTHETA") return(rebuild_wtheta(file))
      stop("`file` \"", file, "\" has no R_OBJECT extension: it was not ",
           "written by wtheta; read its tables with read_catalog() or ",
           "another FITS reader.", call. = FALSE)
    }
    tab <- tryCatch(fits_read_table(file, hdu = extname),
                    error = function(e) conditionMessage(e))
    if (is.character(tab)) {
      if (grepl("no HDU with EXTNAME", tab, fixed = TRUE)) {
        other <- if (extname == "PAIR_COUNTS") "WTHETA" else "PAIR_COUNTS"
        has <- function(e) !is.null(tryCatch(
          .Call(C_fits_info, path.expand(file), -1L, e),
          error = function(err) NULL))
        hint <- if (has(other) || (other == "WTHETA" && has("WTHETA_MULTI")))
          wrong_reader(file, if (other == "WTHETA") "w(theta)" else
            "pair counts") else ""
        stop("`file` \"", file, "\" holds no ", extname, " table: it is ",
             "not ", what, " that wtheta wrote", hint, ".", call. = FALSE)
      }
      stop(tab, call. = FALSE)
    }
    robject <- unserialize_hdu(blob, file)
    table <- tab$columns
  } else {
    lines <- readLines(file, n = 40L, warn = FALSE)
    wrote <- sub("^# wtheta [^:]*: ", "", lines[1L])
    if (!length(lines) || !grepl("^# wtheta [^:]*: ", lines[1L])) {
      stop("`file` \"", file, "\" is not a CSV file that wtheta wrote ",
           "(its first line is not \"# wtheta <version>: ...\").",
           call. = FALSE)
    }
    if (!identical(wrote, what)) {
      stop("`file` \"", file, "\" holds ", wrote, ", not ", what,
           wrong_reader(file, wrote), ".", call. = FALSE)
    }
    rds <- sub("^# r_object: ", "", grep("^# r_object: ", lines,
                                         value = TRUE))
    if (length(rds) != 1L) {
      stop("`file` \"", file, "\" names no r_object file: it was not ",
           "written by wtheta.", call. = FALSE)
    }
    rds <- file.path(dirname(file), rds)
    if (!file.exists(rds)) {
      stop("`file` \"", file, "\" names \"", rds, "\", which does not ",
           "exist: keep the files written beside it.", call. = FALSE)
    }
    side <- tryCatch(readRDS(rds), error = function(e) {
      stop("`file` \"", file, "\": its sidecar \"", rds, "\" cannot be ",
           "read (", conditionMessage(e), ").", call. = FALSE)
    })
    table <- read_csv_numbers(file)
    robject <- check_sidecar(side, table, file, rds, lines, what)
  }
  if (extname == "PAIR_COUNTS") {
    return(check_counts_table(robject$object, table, file))
  }
  n <- length(attr(structure(list(), row.names = robject$row.names),
                   "row.names"))
  if (!is.null(robject$row.names) &&
      any(lengths(table) != n)) {
    stop("`file` \"", file, "\" has ", length(table[[1L]]), " rows, but ",
         "the result it was written from had ", n, ": it was edited.",
         call. = FALSE)
  }
  out <- table
  attributes(out) <- c(list(names = names(table)), robject)
  out
}

# " (read it with ...)" for a file of another kind of result
wrong_reader <- function(file, wrote = NULL) {
  if (is.null(wrote)) {
    lines <- tryCatch(readLines(file, n = 1L, warn = FALSE),
                      error = function(e) "")
    wrote <- sub("^# wtheta [^:]*: ", "", lines[1L] %||% "")
  }
  if (identical(wrote, "pair counts")) "; read it with read_pair_counts()"
  else if (wrote %in% c("w(theta)", "w(theta) of several samples"))
    "; read it with read_wtheta()" else ""
}

# the R_OBJECT HDU's bytes as the object they serialize, after checking
# them against their md5 (keyword SERMD5; files written before it had none)
unserialize_hdu <- function(blob, file) {
  bytes <- as.raw(blob$columns$SERIAL)
  damaged <- function(why) {
    stop("`file` \"", file, "\": its R_OBJECT HDU cannot be read back (",
         why, "); the file is damaged.", call. = FALSE)
  }
  kw <- blob$keywords
  i <- match("SERMD5", kw$name)
  if (!is.na(i) && !identical(keyword_value(kw$value[i]), raw_md5(bytes))) {
    damaged("its bytes do not have the md5 that SERMD5 gives")
  }
  tryCatch(unserialize(bytes), error = function(e) {
    damaged(conditionMessage(e))
  })
}

# The sidecar of a CSV result, checked against the table read from the
# CSV and the extra tables (covariance) the CSV names: the same columns,
# rows and values, or an error naming the file. Sidecars from before the
# table was kept in them (the object alone) are checked by size only.
check_sidecar <- function(side, table, file, rds, lines, what) {
  if (!(is.list(side) && identical(side$wtheta_csv, 2L))) return(side)
  differs <- function(why) {
    stop("`file` \"", file, "\" does not match its sidecar \"", rds,
         "\": ", why, ". The table or the sidecar was edited or comes from ",
         "another result; write the result again.", call. = FALSE)
  }
  if (!identical(side$what, what)) {
    differs(paste0("the sidecar is of ", side$what))
  }
  if (!identical(names(side$table), names(table))) {
    differs(paste0("the table has columns ", paste(names(table),
                                                  collapse = ", "),
                   ", the sidecar ", paste(names(side$table),
                                           collapse = ", ")))
  }
  if (length(table[[1L]]) != length(side$table[[1L]])) {
    differs(paste0("the table has ", length(table[[1L]]), " rows, the ",
                   "sidecar ", length(side$table[[1L]])))
  }
  for (nm in names(table)) {
    bad <- which(!(table[[nm]] == side$table[[nm]] |
                     (is.na(table[[nm]]) & is.na(side$table[[nm]]))) |
                   xor(is.na(table[[nm]]), is.na(side$table[[nm]])))
    if (length(bad)) {
      differs(paste0("row ", bad[1L], " of column ", nm, " is ",
                     format(table[[nm]][bad[1L]], digits = 17), " in the ",
                     "table but ", format(side$table[[nm]][bad[1L]],
                                          digits = 17), " in the sidecar"))
    }
  }
  for (nm in names(side$extra)) {
    f <- sub(paste0("^# ", tolower(nm), ": "), "",
             grep(paste0("^# ", tolower(nm), ": "), lines, value = TRUE))
    if (length(f) != 1L) differs(paste0("the table names no ", nm, " file"))
    f <- file.path(dirname(file), f)
    if (!file.exists(f)) {
      stop("`file` \"", file, "\" names \"", f, "\", which does not ",
           "exist: keep the files written beside it.", call. = FALSE)
    }
    m <- unname(as.matrix(as.data.frame(read_csv_numbers(f))))
    want <- unname(as.matrix(side$extra[[nm]]))
    if (!identical(dim(m), dim(want)) ||
        !isTRUE(all(m == want | (is.na(m) & is.na(want))))) {
      differs(paste0("its ", nm, " file \"", f, "\" holds other values"))
    }
  }
  side$robject
}

# The pair counts of a file, checked against the table it holds (counts,
# bin edges, mean angles): a table edited, or a row deleted, is refused.
check_counts_table <- function(pc, table, file) {
  if (!inherits(pc, "pair_counts")) {
    stop("`file` \"", file, "\" does not hold pair counts.", call. = FALSE)
  }
  cols <- c("theta_lo", "theta_hi", "counts",
            if (!is.null(pc$theta_mean)) c("theta_mean", "theta_sum"))
  for (nm in cols) {
    v <- table[[nm]]
    want <- as.double(pc[[nm]])
    if (is.null(v) || length(v) != length(want)) {
      stop("`file` \"", file, "\" has ", if (is.null(v)) "no column " else
        paste0(length(v), " rows of column "), nm, " for pair counts of ",
        length(want), " bins: it was edited, or holds other counts.",
        call. = FALSE)
    }
    bad <- which(!(v == want | (is.na(v) & is.na(want))) |
                   xor(is.na(v), is.na(want)))
    if (length(bad)) {
      stop("`file` \"", file, "\" column ", nm, " row ", bad[1L], " is ",
           format(v[bad[1L]], digits = 17), " but the pair counts stored ",
           "with it say ", format(want[bad[1L]], digits = 17), ": it was ",
           "edited, or its parts come from other counts.", call. = FALSE)
    }
  }
  pc
}
