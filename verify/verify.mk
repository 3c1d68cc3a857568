# SPDX-License-Identifier: MIT
# Model checking of the sleep and latch protocols (verify/README.md).
# The top-level Makefile can `include verify/verify.mk` and list `verify`
# among the prerequisites of `test`.
.PHONY: verify verify-all

verify:
	verify/run.sh

verify-all:
	verify/run.sh --all
