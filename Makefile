# Shortcuts for tools/do.sh, which does the work (and needs no make).
.PHONY: demo test install
demo:
	sh tools/do.sh demo
test:
	sh tools/do.sh test
install:
	sh tools/do.sh install
