# SPDX-License-Identifier: GPL-2.0
#
# incnn top-level Makefile.
#
#   make                 userspace library and tools (build/rel/)
#   make check           everything that can be tested; ends "N passed, N failed"
#   make fuzz            libFuzzer harnesses for FUZZ_SECONDS each
#   make bench           the codec benchmark (incnn-bench)
#   make modules         incnn.ko against KDIR (out-of-tree kbuild, see Kbuild)
#
# Userspace builds live under build/: build/rel (optimised), build/asan
# (AddressSanitizer + UBSan, used by the tests), build/fuzz (clang,
# libFuzzer).

SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(SRC)/build
KDIR ?= /lib/modules/$(shell uname -r)/build
FUZZ_SECONDS ?= 300

CC ?= cc
CLANG ?= clang

WARN := -Wall -Wextra -Werror
# -ffp-contract=off: no fused multiply-add, so incnn-train's float results
# do not depend on the compiler's or CPU's FMA (docs/training.md)
COMMON_CFLAGS := -std=c11 -D_GNU_SOURCE -g $(WARN) -ffp-contract=off \
	-I$(SRC)/uapi -I$(SRC)/kmod/codec -I$(SRC)/userspace/include \
	-I$(SRC)/userspace/collective/include -DINCNN_COLLECTIVE_LINKED
# kernel-style callbacks have parameters some codecs do not use
CODEC_CFLAGS := -Wno-unused-parameter
LDLIBS := -llz4 -lzstd -lm -lpthread
# the SIMD codec files, and only they, are built for AVX2 (x86-64 hosts);
# the library picks them at run time (incnn_simd_level())
AVX2_CFLAGS := $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine)),-mavx2)

REL_CFLAGS := $(COMMON_CFLAGS) -O2
ASAN_CFLAGS := $(COMMON_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := $(COMMON_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

CODEC_SRCS := $(wildcard $(SRC)/kmod/codec/*.c)
LIB_SRCS := $(wildcard $(SRC)/userspace/lib/*.c) \
	$(wildcard $(SRC)/userspace/collective/*.c) \
	$(wildcard $(SRC)/userspace/train/*.c)
TOOL_MAINS := $(wildcard $(SRC)/userspace/tools/incnn-*.c)
TOOL_COMMON := $(filter-out $(TOOL_MAINS),$(wildcard $(SRC)/userspace/tools/*.c))
HDRS := $(wildcard $(SRC)/uapi/linux/*.h $(SRC)/kmod/codec/*.h \
	$(SRC)/userspace/include/*/*.h $(SRC)/userspace/tools/*.h \
	$(SRC)/userspace/collective/*.h $(SRC)/userspace/collective/include/*/*.h \
	$(SRC)/userspace/train/*.h)

# $(call objs,VARIANT,SOURCES)
objs = $(patsubst $(SRC)/%.c,$(BUILD)/$(1)/obj/%.o,$(2))

.PHONY: install dkms-install demo all tools tools-asan incctl incctl-asan lib modules check selftests-host fuzz fuzzers \
	fuzz-smoke bench clean ksft

all: tools

define variant
$(BUILD)/$(1)/obj/kmod/codec/%_avx2.o: CODEC_CFLAGS += $(AVX2_CFLAGS)
$(BUILD)/$(1)/obj/kmod/codec/%.o: $(SRC)/kmod/codec/%.c $(HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$(CODEC_CFLAGS) -c $$< -o $$@

$(BUILD)/$(1)/obj/%.o: $(SRC)/%.c $(HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(3) -c $$< -o $$@

# THC's AVX2 kernels (userspace/collective/thc_avx2.c), like the codecs'
$(BUILD)/$(1)/obj/userspace/collective/%_avx2.o: \
		$(SRC)/userspace/collective/%_avx2.c $(HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(3) $(AVX2_CFLAGS) -c $$< -o $$@

$(BUILD)/$(1)/libincnn.a: $(call objs,$(1),$(CODEC_SRCS) $(LIB_SRCS))
	@rm -f $$@
	ar rcs $$@ $$^

$(BUILD)/$(1)/bin/%: $(BUILD)/$(1)/obj/userspace/tools/%.o \
		$(call objs,$(1),$(TOOL_COMMON)) $(BUILD)/$(1)/libincnn.a
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$^ $(LDLIBS) -o $$@
endef

$(eval $(call variant,rel,$(CC),$(REL_CFLAGS)))
$(eval $(call variant,asan,$(CC),$(ASAN_CFLAGS)))
$(eval $(call variant,fuzz,$(CLANG),$(FUZZ_CFLAGS)))

TOOLS := $(patsubst $(SRC)/userspace/tools/%.c,%,$(TOOL_MAINS))
lib: $(BUILD)/rel/libincnn.a
tools: lib $(addprefix $(BUILD)/rel/bin/,$(TOOLS)) incctl
tools-asan: $(BUILD)/asan/libincnn.a $(addprefix $(BUILD)/asan/bin/,$(TOOLS)) \
	incctl-asan

# incctl has its own Makefile (userspace/incctl/Makefile)
incctl:
	$(MAKE) -C $(SRC)/userspace/incctl BUILD=$(BUILD) all
incctl-asan:
	$(MAKE) -C $(SRC)/userspace/incctl BUILD=$(BUILD) asan tests

# --- kselftest framework, extracted from Debian's linux-source-6.1 -------
KSFT := $(BUILD)/ksft
ksft: $(KSFT)/lib.mk
$(KSFT)/lib.mk:
	$(SRC)/scripts/ksft-extract.sh $(KSFT)

# --- tests ---------------------------------------------------------------
selftests-host: ksft tools-asan
	@mkdir -p $(BUILD)/selftests
	$(MAKE) -C $(SRC)/selftests KSFT=$(KSFT) OUTPUT=$(BUILD)/selftests \
		INCNN_BUILD=$(BUILD) all

check:
	@$(SRC)/scripts/check.sh

demo:
	@$(SRC)/scripts/demo.sh

# --- fuzzing -------------------------------------------------------------
FUZZERS := $(patsubst $(SRC)/selftests/fuzz/%.c,%,$(wildcard $(SRC)/selftests/fuzz/fuzz_*.c))
$(BUILD)/fuzz/bin/fuzz_%: $(SRC)/selftests/fuzz/fuzz_%.c $(BUILD)/fuzz/libincnn.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(BUILD)/fuzz/libincnn.a $(LDLIBS) -o $@
$(BUILD)/fuzz/bin/gen_corpus: $(SRC)/selftests/fuzz/gen_corpus.c $(BUILD)/fuzz/libincnn.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $< $(BUILD)/fuzz/libincnn.a $(LDLIBS) -o $@
fuzzers: $(addprefix $(BUILD)/fuzz/bin/,$(FUZZERS) gen_corpus)
fuzz: fuzzers
	$(SRC)/scripts/fuzz.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZERS)
fuzz-smoke: fuzzers
	$(SRC)/scripts/fuzz.sh $(BUILD) 10 $(FUZZERS)

# --- benchmark -----------------------------------------------------------
bench: tools
	$(BUILD)/rel/bin/incnn-bench

# --- kernel module -------------------------------------------------------
# On a real host: KDIR defaults to the running kernel's build tree. For the
# VM and CI, scripts/kabi.sh resolves Debian's linux-image-amd64 ABI.
modules:
	$(MAKE) -C $(KDIR) M=$(SRC) modules

# --- install on a training host -----------------------------------------
DESTDIR ?=
PREFIX ?= /usr/local
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(SRC)/dkms.conf)
DKMS_SRC := $(DESTDIR)/usr/src/incnn-$(DKMS_VERSION)

install: modules tools
	$(MAKE) -C $(KDIR) M=$(SRC) INSTALL_MOD_PATH=$(DESTDIR) modules_install
	$(if $(DESTDIR),,depmod -a $(notdir $(patsubst %/build,%,$(KDIR))) || true)
	$(MAKE) -C $(SRC)/userspace/incctl BUILD=$(BUILD) DESTDIR=$(DESTDIR) \
		PREFIX=$(PREFIX) install
	for t in $(TOOLS); do \
		install -D -m 0755 $(BUILD)/rel/bin/$$t $(DESTDIR)$(PREFIX)/bin/$$t || exit 1; \
	done

# DKMS rebuilds the module for every kernel the host installs later.
dkms-install:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cp -r $(SRC)/Kbuild $(SRC)/dkms.conf $(SRC)/kmod $(SRC)/uapi $(DKMS_SRC)/
	dkms add -m incnn -v $(DKMS_VERSION)
	dkms build -m incnn -v $(DKMS_VERSION)
	dkms install -m incnn -v $(DKMS_VERSION)
	$(MAKE) -C $(SRC)/userspace/incctl BUILD=$(BUILD) DESTDIR=$(DESTDIR) \
		PREFIX=$(PREFIX) all install

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C $(KDIR) M=$(SRC) clean 2>/dev/null
