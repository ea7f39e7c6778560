# The README's example and its plot, man/figures/README-example.png (the
# README shows the same five lines). Run from the repository root after
# installing the package:
#   Rscript tools/make-readme-figure.R
library(wtheta)
sim <- simulate_catalog(20000, n_clusters = 200, sigma = 0.3, seed = 1)
ran <- random_catalog(40000, like = sim, seed = 2)
w <- wtheta(sim, ran, theta_bins(0.01, 2, n = 12, log = TRUE), error = "jackknife")
png("man/figures/README-example.png", width = 720, height = 480, res = 96)
plot(w, model = sim)
invisible(dev.off())
print(w)
