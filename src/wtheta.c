/* R loads the package through R_init_wtheta (R_init_<package>), which
 * hands over to the R boundary: wtr_init() in r/init.c registers the
 * .Call entry points and sets up the threads. It stands here, at the top
 * of src/, because R CMD check wants a source file there ("Subdirectory
 * 'src' contains no source files" otherwise); it names R's DllInfo by its
 * struct tag (R_ext/Rdynload.h: typedef struct _DllInfo DllInfo) so that
 * no R header is included outside r/. */
struct _DllInfo;
void wtr_init(struct _DllInfo *dll);
void R_init_wtheta(struct _DllInfo *dll);

void R_init_wtheta(struct _DllInfo *dll)
{
  wtr_init(dll);
}

/* R calls R_unload_wtheta when it unloads the package: the worker threads,
 * which run the package's code, stop first */
void wt_team_release(void);
void R_unload_wtheta(struct _DllInfo *dll);

void R_unload_wtheta(struct _DllInfo *dll)
{
  (void)dll;
  wt_team_release();
}
