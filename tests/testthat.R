library(testthat)
library(wtheta)

test_check("wtheta")
