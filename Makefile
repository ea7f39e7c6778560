# Shortcuts for tools/do.sh and tools/sanitize.sh, which do the work (and
# need no make).
.PHONY: demo test install site sanitize valgrind
demo:
	sh tools/do.sh demo
test:
	sh tools/do.sh test
install:
	sh tools/do.sh install
# the documentation site into docs/ and its check in headless Chromium
site:
	sh tools/do.sh site
# the testthat suite with the C code built under ASan + UBSan
sanitize:
	sh tools/sanitize.sh asan
# a representative subset under valgrind --leak-check=full
valgrind:
	sh tools/sanitize.sh valgrind
