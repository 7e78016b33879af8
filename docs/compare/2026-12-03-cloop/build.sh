#!/bin/sh
# Builds bin/cloop from the loops' own C sources (run from the module root).
set -e
cc -O2 -Wall -Wextra -Werror -I internal/loops -o bin/cloop -pthread docs/compare/2026-12-03-cloop/cloop.c \
	internal/loops/atomic.c internal/loops/read.c internal/loops/setup.c -libverbs
