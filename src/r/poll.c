/* Progress and interrupts: the progress lines or an R progress function
 * for long counts (R/progress.R), and the one interrupt check every file
 * of the boundary uses, from the main thread between chunks of work. */
#include <string.h>
#include <unistd.h>
#include "boundary.h"

static void check_interrupt(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
}

int wtr_interrupted(void)
{
  return !R_ToplevelExec(check_interrupt, NULL);
}

/* progress as the caller asked for it (see wtr_progress) */
void wtr_progress_init(wtr_progress *prog, SEXP progress)
{
  memset(prog, 0, sizeof *prog);
  prog->fun = isFunction(progress) ? progress : NULL;
  prog->show = !prog->fun && asLogical(progress) == TRUE;
  prog->tty = isatty(2);
  prog->start = wt_seconds();
}

/* fun(done, total), evaluated with the caller's condition handlers in
 * place (R_ToplevelExec would hide them from progressr). Its errors are
 * ignored: progress must not stop a count. An interrupt during the call
 * is caught here and returned as 1, so that the count stops cleanly. */
static SEXP progress_body(void *call)
{
  return eval((SEXP)call, R_GlobalEnv);
}

static SEXP progress_caught(SEXP cond, void *interrupted)
{
  if (inherits(cond, "interrupt")) *(int *)interrupted = 1;
  return R_NilValue;
}

static int call_progress(SEXP fun, double done, double total)
{
  SEXP d = PROTECT(ScalarReal(done));
  SEXP t = PROTECT(ScalarReal(total));
  SEXP call = PROTECT(lang3(fun, d, t));
  SEXP classes = PROTECT(allocVector(STRSXP, 2));
  SET_STRING_ELT(classes, 0, mkChar("error"));
  SET_STRING_ELT(classes, 1, mkChar("interrupt"));
  int interrupted = 0;
  R_tryCatch(progress_body, call, classes, progress_caught, &interrupted,
             NULL, NULL);
  UNPROTECT(4);
  return interrupted;
}

/* called by the core from the main thread between chunks */
int wtr_poll(void *ctx, double done, double total)
{
  wtr_progress *p = (wtr_progress *)ctx;
  if (p && p->fun) {
    double t = wt_seconds();
    if (t - p->last >= 0.25) {
      p->last = t;
      if (call_progress(p->fun, done, total)) return 1;
    }
  } else if (p && p->show) {
    double t = wt_seconds(), el = t - p->start;
    if (el >= 2.0 && t - p->last >= (p->tty ? 0.5 : 5.0)) {
      p->last = t;
      if (done > 0 && total > 0) {
        double f = done / total;
        REprintf("%swtheta: %5.1f%% of %.3g pairs, %.1f s elapsed, about %.0f s left%s",
                 p->tty ? "\r" : "", 100.0 * f, total, el,
                 el * (1.0 - f) / f, p->tty ? "   " : "\n");
      } else {
        REprintf("%swtheta: counting %.3g pairs, %.1f s elapsed%s",
                 p->tty ? "\r" : "", total, el, p->tty ? "   " : "\n");
      }
      p->printed = 1;
    }
  }
  return wtr_interrupted();
}

void wtr_progress_done(wtr_progress *p, int status)
{
  if (p->printed)
    REprintf("%swtheta: %s after %.1f s%40s\n", p->tty ? "\r" : "",
             status == WT_OK ? "counted" : "stopped", wt_seconds() - p->start,
             "");
  p->printed = 0;
}
