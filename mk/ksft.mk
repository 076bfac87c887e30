# SPDX-License-Identifier: GPL-2.0
#
# Included by selftests/{codec,collective,train}/Makefile after the
# kernel's lib.mk. Its runner reads a directory's "settings" (timeout=)
# from $BASE_DIR/<the directory relative to BASE_DIR>, the kernel tree's
# layout; ours are not below $(KSFT), so it never found them and ran every
# program under its 45 s default: on a loaded host the longer programs
# were killed (TIMEOUT 45 seconds) while working. The same RUN_TESTS as
# lib.mk's, with the directory's own timeout as the default.
define RUN_TESTS
	BASE_DIR="$(selfdir)";			\
	. $(selfdir)/kselftest/runner.sh;	\
	t=$$(sed -n 's/^timeout=\([0-9][0-9]*\)$$/\1/p' settings 2>/dev/null); \
	[ -z "$$t" ] || kselftest_default_timeout=$$t; \
	if [ "X$(summary)" != "X" ]; then       \
		per_test_logging=1;		\
	fi;                                     \
	run_many $(1)
endef
