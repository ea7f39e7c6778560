# Draws the package logo (man/figures/logo.png, used by pkgdown) and the
# site's favicons (pkgdown/favicon/: with them pkgdown does not call
# realfavicongenerator.net, so the site builds offline).
#   Rscript tools/make-logo.R
draw <- function(file, size) {
  grDevices::png(file, size, size, bg = "transparent", type = "cairo")
  on.exit(grDevices::dev.off())
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::plot.window(c(-1.05, 1.05), c(-1.05, 1.05), asp = 1)
  graphics::symbols(0, 0, circles = 1, inches = FALSE, add = TRUE,
                    bg = "#1f3b73", fg = "#1f3b73")
  t <- seq(-0.7, 0.7, length.out = 100)
  graphics::lines(t, 0.75 * exp(-((t + 0.7) / 0.45)^2) - 0.6,
                  col = "#f2b134", lwd = 9 * size / 240)
  if (size >= 100) {
    graphics::text(0, 0.3, "wtheta", col = "white", cex = 3.2 * size / 240,
                   font = 2)
  }
}
dir.create("man/figures", showWarnings = FALSE, recursive = TRUE)
dir.create("pkgdown/favicon", showWarnings = FALSE, recursive = TRUE)
draw("man/figures/logo.png", 240)
draw("pkgdown/favicon/apple-touch-icon.png", 180)
draw("pkgdown/favicon/favicon-32x32.png", 32)
draw("pkgdown/favicon/favicon-16x16.png", 16)
