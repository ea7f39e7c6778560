/* Progress and interrupts: the progress lines or an R progress function
 * for long counts (R/progress.R), and the one interrupt check every file
 * of the boundary uses, from the main thread between chunks of work. */
#include <string.h>
#include <unistd.h>
#include "boundary.h"

/* The condition R raised during the last check (an interrupt, or an error
 * such as setTimeLimit()'s "reached elapsed time limit"), kept from the
 * garbage collector until the boundary has freed everything and raises it
 * again (wtr_raise_caught), or NULL. Main thread only. */
static SEXP raised = NULL;

static void keep_raised(SEXP cond)
{
  if (raised) R_ReleaseObject(raised);
  raised = cond;
  if (cond) R_PreserveObject(cond);
}

static SEXP check_body(void *unused)
{
  (void)unused;
  R_CheckUserInterrupt();
  return R_NilValue;
}

static SEXP check_caught(SEXP cond, void *unused)
{
  (void)unused;
  return cond;
}

/* R_CheckUserInterrupt under tryCatch(error, interrupt), so that the
 * condition itself is kept, not only the fact that the check jumped */
static void check_interrupt(void *caught)
{
  SEXP classes = PROTECT(allocVector(STRSXP, 2));
  SET_STRING_ELT(classes, 0, mkChar("error"));
  SET_STRING_ELT(classes, 1, mkChar("interrupt"));
  SEXP cond = R_tryCatch(check_body, NULL, classes, check_caught, NULL, NULL,
                         NULL);
  if (cond != R_NilValue) {
    keep_raised(cond);
    *(int *)caught = 1;
  }
  UNPROTECT(1);
}

/* R_ToplevelExec around it all: any other jump (a restart invoked from
 * some handler) is stopped here too, and counts as an interrupt */
int wtr_interrupted(void)
{
  int caught = 0;
  keep_raised(NULL);
  if (!R_ToplevelExec(check_interrupt, &caught)) caught = 1;
  return caught;
}

static int is_error(SEXP cond)
{
  return cond && inherits(cond, "error");
}

void wtr_raise_caught_error(void)
{
  if (!is_error(raised)) {
    keep_raised(NULL);
    return;
  }
  SEXP cond = PROTECT(shallow_duplicate(raised));
  keep_raised(NULL);
  /* stop(cond): the same condition, its class and message, to the
   * caller's handlers; its call was the check's own tryCatch
   * (doTryCatch(...)), which says nothing, so none */
  if (TYPEOF(cond) == VECSXP) {
    SEXP nm = getAttrib(cond, R_NamesSymbol);
    for (R_xlen_t k = 0; k < XLENGTH(cond) && !isNull(nm); k++)
      if (!strcmp(CHAR(STRING_ELT(nm, k)), "call"))
        SET_VECTOR_ELT(cond, k, R_NilValue);
  }
  SEXP call = PROTECT(lang2(install("stop"), cond));
  eval(call, R_BaseEnv);
  UNPROTECT(2);
}

void wtr_raise_caught(void)
{
  int was_error = is_error(raised);
  SEXP cond = PROTECT(raised ? raised : R_NilValue);
  if (was_error) wtr_raise_caught_error();
  keep_raised(NULL);
  /* an interrupt, as R raises one for Ctrl-C anywhere else: the condition
   * to the caller's handlers (tryCatch(interrupt = ), withCallingHandlers),
   * options(interrupt), then back to the top level */
  if (cond != R_NilValue) {
    SEXP sig = PROTECT(lang2(install("signalCondition"), cond));
    eval(sig, R_BaseEnv);
    UNPROTECT(1);
  }
  SEXP h = GetOption1(install("interrupt"));
  if (isFunction(h)) {
    SEXP hc = PROTECT(lang1(h));
    eval(hc, R_GlobalEnv);
    UNPROTECT(1);
  }
  SEXP abort = PROTECT(lang2(install("invokeRestart"), mkString("abort")));
  eval(abort, R_BaseEnv);
  UNPROTECT(2);
  errorcall(R_NilValue, "wtheta: interrupted");
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
  if (interrupted) keep_raised(NULL);   /* a count stopped, nothing to raise */
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
