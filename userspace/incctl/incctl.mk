# SPDX-License-Identifier: GPL-2.0
#
# incctl, the incnn control tool: a fragment of the top-level Makefile
# (which defines SRC, BUILD, the variants' flags and objs).
#
#   make incctl         $(BUILD)/rel/bin/incctl
#   make incctl-asan    $(BUILD)/asan/bin/incctl and the ASan test programs
#                       $(BUILD)/asan/test/incctl-fake (incctl against a
#                       fake kernel) and $(BUILD)/asan/test/json-test
#   make man-check      render incctl.8 with man -l (fails on warnings)
#   make install-incctl the rel binary and the man page

INCCTL_DIR := $(SRC)/userspace/incctl
# its tests: selftests/incctl (test-cli.sh, test-fake.sh run by check.sh)
INCCTL_TESTS := $(SRC)/selftests/incctl
INCCTL_SRCS := $(addprefix $(INCCTL_DIR)/,incctl.c ctx.c json.c \
	parse.c codec_table.c kcodecs.c config.c cmd_config.c cmd_rule.c \
	cmd_stats.c cmd_flows.c cmd_codecs.c)
# the codec library: incctl's built-in codec descriptions (older kernels)
# and the one parser of codec settings
INCCTL_LDLIBS := $(INCNN_NL_LDLIBS) $(INCNN_CODEC_LDLIBS)

$(BUILD)/rel/bin/incctl: $(call objs,rel,$(INCCTL_SRCS)) \
		$(call incnn_lib,rel,nl) $(call incnn_lib,rel,codec)
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) $^ $(INCCTL_LDLIBS) -o $@
$(BUILD)/asan/bin/incctl: $(call objs,asan,$(INCCTL_SRCS)) \
		$(call incnn_lib,asan,nl) $(call incnn_lib,asan,codec)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $^ $(INCCTL_LDLIBS) -o $@

# incctl with libmnl's socket calls answered by
# selftests/incctl/fake_kernel.c, and
# the JSON writer's unit test
$(BUILD)/asan/test/incctl-fake: $(call objs,asan,$(INCCTL_SRCS) \
		$(INCCTL_TESTS)/fake_kernel.c) $(call incnn_lib,asan,nl) \
		$(call incnn_lib,asan,codec)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $^ $(INCCTL_LDLIBS) -o $@
$(BUILD)/asan/obj/selftests/incctl/json_test.o: CFLAGS_EXTRA += -I$(INCCTL_DIR)
$(BUILD)/asan/test/json-test: $(call objs,asan,$(INCCTL_TESTS)/json_test.c \
		$(INCCTL_DIR)/json.c)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $^ -o $@

ALL_OBJS += $(call objs,rel,$(INCCTL_SRCS)) \
	$(call objs,asan,$(INCCTL_SRCS) $(INCCTL_TESTS)/fake_kernel.c \
		$(INCCTL_TESTS)/json_test.c)

incctl: $(BUILD)/rel/bin/incctl
incctl-asan: $(BUILD)/asan/bin/incctl $(BUILD)/asan/test/incctl-fake \
	$(BUILD)/asan/test/json-test

# man prints troff warnings on stderr; any of them fails the check
man-check:
	@out=$$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l $(INCCTL_DIR)/incctl.8 2>&1 >/dev/null); \
	if [ -n "$$out" ]; then echo "$$out" >&2; exit 1; fi; \
	echo "incctl.8 renders without warnings"

install-incctl: incctl
	install -D -m 0755 $(BUILD)/rel/bin/incctl $(DESTDIR)$(PREFIX)/sbin/incctl
	install -D -m 0644 $(INCCTL_DIR)/incctl.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/incctl.8

.PHONY: man-check install-incctl
