# The instruction sets the CPU engine can run on this machine and build:
# the exactness tests run on each of them (WTHETA_CPU_ISA), so the AVX2 and
# plain kernels are tested on an AVX-512 host too.
machine_isas <- function() .Call(wtheta:::C_cpu_isa)$supported

# evaluates code with WTHETA_CPU_ISA set to isa, then restores it
with_cpu_isa <- function(isa, code) {
  old <- Sys.getenv("WTHETA_CPU_ISA", NA)
  Sys.setenv(WTHETA_CPU_ISA = isa)
  on.exit(if (is.na(old)) Sys.unsetenv("WTHETA_CPU_ISA")
          else Sys.setenv(WTHETA_CPU_ISA = old))
  force(code)
}
