test_that("[ keeps the covariance and bins that remain", {
  f <- fake_cross()
  attr(f, "cov") <- matrix(1:9, 3, 3)
  attr(f, "replicates") <- matrix(1:6, 3, 2)
  attr(f, "n_outside") <- c(D1D2 = 5)
  s <- f[2:3, ]
  expect_s3_class(s, "wtheta")
  expect_identical(nrow(s), 2L)
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3)[2:3, 2:3])
  expect_identical(attr(s, "replicates"), matrix(1:6, 3, 2)[2:3, ])
  expect_identical(attr(s, "edges"), c(1, 2, 3))
  expect_null(attr(s, "n_outside"))
  expect_identical(attr(s, "estimator"), "LS")
  expect_identical(s$w, f$w[2:3])
  expect_match(capture.output(print(s))[1],
               "2 bins from 1 to 3 deg, width 1", fixed = TRUE)
  expect_identical(dim(wtheta_cov(s)), c(2L, 2L))
  # logical rows, and bins that are no longer adjacent
  s <- f[c(TRUE, FALSE, TRUE), ]
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3)[c(1, 3), c(1, 3)])
  expect_null(attr(s, "edges"))
  expect_match(capture.output(print(s))[1], "2 bins, not adjacent, from 0 to 3",
               fixed = TRUE)
  # columns only: everything stays
  s <- f[, c("theta_lo", "theta_hi", "theta", "w")]
  expect_s3_class(s, "wtheta")
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3))
  expect_identical(attr(s, "n_outside"), c(D1D2 = 5))
  # reordered, repeated or without w: a plain data frame
  expect_identical(class(f[c(3, 1), ]), "data.frame")
  expect_identical(class(f[c(1, 1), ]), "data.frame")
  expect_identical(class(f[c("theta", "w_err")]), "data.frame")
  expect_identical(f[["w"]], c(0.4, 0.05, -0.02))
  expect_identical(f[, "w"], c(0.4, 0.05, -0.02))
  # a real result: the summary of the subset is that of its bins
  w <- small_result()
  s <- w[3:5, ]
  expect_equal(summary(s)$pairs, c(DD = sum(w$DD[3:5]), DR = sum(w$DR[3:5]),
                                   RR = sum(w$RR[3:5])))
})

test_that("[ on a simulated catalog keeps only what is still true", {
  sim <- simulate_catalog(300, seed = 4)
  expect_s3_class(sim, "wtheta_catalog")
  whole <- sim[, c("ra", "dec")]
  expect_identical(attr(whole, "footprint"), attr(sim, "footprint"))
  expect_identical(attr(whole, "model"), attr(sim, "model"))
  part <- sim[sim$ra < 5, ]
  expect_identical(class(part), "data.frame")
  expect_null(attr(part, "footprint"))
  expect_null(attr(part, "model"))
  expect_identical(part$ra, sim$ra[sim$ra < 5])
  expect_null(attr(sim["ra"], "footprint"))
  expect_identical(sim$ra[1:3], sim[1:3, "ra"])
  ran <- random_catalog(100, like = sim, seed = 5)
  expect_null(attr(ran[1:10, ], "footprint"))
  expect_identical(attr(ran[, c("ra", "dec")], "footprint"),
                   attr(sim, "footprint"))
})
