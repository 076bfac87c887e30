# SPDX-License-Identifier: GPL-2.0
#
# incnn top-level Makefile.
#
#   make                 userspace library and tools (build/rel/)
#   make check           everything that can be tested; ends "N passed, N failed"
#   make check-debug     the VM suite on a debug kernel (KASAN, lockdep,
#                        KFENCE; built once from linux-source-6.1, cached in
#                        build/debug-kernel; not part of make check)
#   make fuzz            libFuzzer harnesses for FUZZ_SECONDS each
#   make bench           the codec benchmark (incnn-bench)
#   make bench-ab        codec speed now against BASE=COMMIT (default main)
#   make seeds           the seed methods compared (build/seeds/, not in check)
#   make modules         incnn.ko against KDIR (out-of-tree kbuild, see Kbuild)
#
# Userspace builds live under build/: build/rel (optimised), build/asan
# (AddressSanitizer + UBSan, used by the tests), build/fuzz (clang,
# libFuzzer).

SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(SRC)/build
INCNN_BUILD := $(BUILD)
include $(SRC)/mk/flags.mk
KDIR ?= /lib/modules/$(shell uname -r)/build
FUZZ_SECONDS ?= 300

CC ?= cc
CLANG ?= clang

# the SIMD codec files, and only they, are built for AVX2 (x86-64 hosts);
# the library picks them at run time (incnn_simd_level())
AVX2_CFLAGS := $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine)),-mavx2)

# rel objects also go into libincnn.so: position-independent, and only
# what the public headers mark INCNN_API is exported
REL_CFLAGS := $(INCNN_CFLAGS) $(INCNN_REL_CFLAGS) -fPIC -fvisibility=hidden
ASAN_CFLAGS := $(INCNN_CFLAGS) $(INCNN_ASAN_CFLAGS)
FUZZ_CFLAGS := $(INCNN_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

# libincnn-codec.a: the codec (the module's own sources) and the frame
CODEC_SRCS := $(wildcard $(SRC)/kmod/codec/*.c) \
	$(SRC)/userspace/lib/lz4_glue.c $(SRC)/userspace/lib/gen.c \
	$(SRC)/userspace/lib/codec_param.c
# libincnn-nl.a: generic netlink (libmnl) and the module's configuration
NL_SRCS := $(SRC)/userspace/lib/genl.c $(SRC)/userspace/lib/nl_config.c
# libincnn.a / libincnn.so: the collective
COLL_SRCS := $(wildcard $(SRC)/userspace/collective/*.c)
# libincnn-train.a: the trainer's model and data
TRAIN_SRCS := $(wildcard $(SRC)/userspace/train/*.c)
TOOL_MAINS := $(wildcard $(SRC)/userspace/tools/incnn-*.c)
TOOL_COMMON := $(filter-out $(TOOL_MAINS),$(wildcard $(SRC)/userspace/tools/*.c))
TOOLS := $(patsubst $(SRC)/userspace/tools/%.c,%,$(TOOL_MAINS))

# the shared library: versioned soname, the public incnn_* API only
SO_VERSION := 0.1.0
SO_MAJOR := 0
LIBINCNN_SO := $(BUILD)/rel/lib/libincnn.so.$(SO_MAJOR)
LIBINCNN_SO_REAL := $(BUILD)/rel/lib/libincnn.so.$(SO_VERSION)
# the public headers (make install: $(PREFIX)/include/incnn/)
PUBLIC_HDRS := $(wildcard $(SRC)/userspace/collective/include/incnn/*.h)

# $(call objs,VARIANT,SOURCES)
objs = $(patsubst $(SRC)/%.c,$(BUILD)/$(1)/obj/%.o,$(2))
ALL_OBJS :=

.PHONY: install install-lib install-tools dkms-src dkms-install demo seeds all tools tools-asan incctl \
	incctl-asan lib so modules check selftests-host fuzz fuzzers \
	fuzz-smoke bench bench-ab clean ksft check-debug

all: tools

# $(call variant,VARIANT,CC,CFLAGS)
define variant
$(BUILD)/$(1)/obj/kmod/codec/%_avx2.o: CFLAGS_EXTRA += $(AVX2_CFLAGS)
$(BUILD)/$(1)/obj/kmod/codec/%.o: CFLAGS_EXTRA += \
	-include $(SRC)/userspace/lib/codec_api.h
$(BUILD)/$(1)/obj/%.o: $(SRC)/%.c
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$(CFLAGS_EXTRA) -c $$< -o $$@

$(call incnn_lib,$(1),codec): $(call objs,$(1),$(CODEC_SRCS))
$(call incnn_lib,$(1),nl): $(call objs,$(1),$(NL_SRCS))
$(call incnn_lib,$(1),coll): $(call objs,$(1),$(COLL_SRCS))
$(call incnn_lib,$(1),train): $(call objs,$(1),$(TRAIN_SRCS))
# THC's AVX2 kernels (userspace/collective/thc_avx2.c), like the codecs'
$(BUILD)/$(1)/obj/userspace/collective/%_avx2.o: CFLAGS_EXTRA += $(AVX2_CFLAGS)

$(BUILD)/$(1)/bin/%: $(BUILD)/$(1)/obj/userspace/tools/%.o \
		$(call objs,$(1),$(TOOL_COMMON)) $(call incnn_lib,$(1),coll) \
		$(call incnn_lib,$(1),nl) $(call incnn_lib,$(1),codec)
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$^ $$(TOOL_LDLIBS) $(INCNN_COLL_LDLIBS) -o $$@

# the trainer links its archive; only the benchmark uses zstd
$(BUILD)/$(1)/bin/incnn-train: $(call incnn_lib,$(1),train)
$(BUILD)/$(1)/bin/incnn-train: TOOL_LDLIBS += $(call incnn_lib,$(1),codec)
$(BUILD)/$(1)/bin/incnn-bench: TOOL_LDLIBS += -lzstd

ALL_OBJS += $(call objs,$(1),$(CODEC_SRCS) $(NL_SRCS) $(COLL_SRCS) $(TRAIN_SRCS) \
	$(TOOL_MAINS) $(TOOL_COMMON))
endef

$(BUILD)/%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(eval $(call variant,rel,$(CC),$(REL_CFLAGS)))
$(eval $(call variant,asan,$(CC),$(ASAN_CFLAGS)))
$(eval $(call variant,fuzz,$(CLANG),$(FUZZ_CFLAGS)))
# the math codecs without comparison hooks: a third of fuzz_codec's time,
# and no help on float comparisons (selftests/fuzz/README.md)
$(addprefix $(BUILD)/fuzz/obj/kmod/codec/,inceptionn.o inceptionn_avx2.o \
	ebq.o ebq_avx2.o zebq.o zebq_avx2.o trunc.o): \
	CFLAGS_EXTRA += -fno-sanitize-coverage=trace-cmp

$(LIBINCNN_SO_REAL): $(call objs,rel,$(COLL_SRCS) $(NL_SRCS) $(filter-out \
		$(SRC)/userspace/lib/gen.c,$(CODEC_SRCS)))
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -shared -Wl,-soname,libincnn.so.$(SO_MAJOR) \
		-Wl,--no-undefined -Wl,-z,defs $^ $(INCNN_COLL_LDLIBS) -o $@
$(LIBINCNN_SO): $(LIBINCNN_SO_REAL)
	ln -sf $(notdir $<) $@
$(BUILD)/rel/lib/libincnn.so: $(LIBINCNN_SO)
	ln -sf $(notdir $<) $@

LIBS_REL := $(foreach l,codec nl coll train,$(call incnn_lib,rel,$(l)))
LIBS_ASAN := $(foreach l,codec nl coll train,$(call incnn_lib,asan,$(l)))
lib: $(LIBS_REL)
so: $(BUILD)/rel/lib/libincnn.so
tools: lib so $(addprefix $(BUILD)/rel/bin/,$(TOOLS)) incctl
tools-asan: $(LIBS_ASAN) $(addprefix $(BUILD)/asan/bin/,$(TOOLS)) incctl-asan

# incctl (rules in its fragment)
include $(SRC)/userspace/incctl/incctl.mk

# --- kselftest framework, extracted from Debian's linux-source-6.1 -------
KSFT := $(BUILD)/ksft
ksft: $(KSFT)/lib.mk
$(KSFT)/lib.mk:
	$(SRC)/scripts/check/ksft-extract.sh $(KSFT)

# --- tests ---------------------------------------------------------------
selftests-host: ksft tools-asan
	@mkdir -p $(BUILD)/selftests/codec
	$(MAKE) -C $(SRC)/selftests/codec KSFT=$(KSFT) \
		OUTPUT=$(BUILD)/selftests/codec INCNN_BUILD=$(BUILD) all

check:
	@$(SRC)/scripts/check/check.sh

check-debug:
	@INCNN_BUILD=$(BUILD) $(SRC)/scripts/check/debug-kernel.sh all

demo:
	@$(SRC)/scripts/demo/demo.sh

# the seed methods compared (scripts/seeds/seeds.sh): build/seeds/
seeds:
	@$(SRC)/scripts/seeds/seeds.sh

# --- fuzzing -------------------------------------------------------------
FUZZERS := $(patsubst $(SRC)/selftests/fuzz/%.c,%,$(wildcard $(SRC)/selftests/fuzz/fuzz_*.c))
$(BUILD)/fuzz/bin/fuzz_%: $(BUILD)/fuzz/obj/selftests/fuzz/fuzz_%.o \
		$(call incnn_lib,fuzz,codec)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ $(INCNN_CODEC_LDLIBS) -o $@
$(BUILD)/fuzz/bin/gen_corpus: $(BUILD)/fuzz/obj/selftests/fuzz/gen_corpus.o \
		$(call incnn_lib,fuzz,codec)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $^ $(INCNN_CODEC_LDLIBS) -o $@
ALL_OBJS += $(call objs,fuzz,$(wildcard $(SRC)/selftests/fuzz/*.c))
fuzzers: $(addprefix $(BUILD)/fuzz/bin/,$(FUZZERS) gen_corpus)
fuzz: fuzzers
	$(SRC)/scripts/check/fuzz.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZERS)
fuzz-smoke: fuzzers
	$(SRC)/scripts/check/fuzz.sh $(BUILD) 10 $(FUZZERS)

# --- benchmark -----------------------------------------------------------
bench: tools
	$(BUILD)/rel/bin/incnn-bench

# codec speed of the current tree against BASE (a commit), alternating runs
BASE ?= main
bench-ab:
	$(SRC)/scripts/bench/codec-ab.sh $(BASE)

# --- kernel module -------------------------------------------------------
# On a real host: KDIR defaults to the running kernel's build tree. For the
# VM and CI, scripts/check/kabi.sh resolves Debian's linux-image-amd64 ABI.
modules:
	$(MAKE) -C $(KDIR) M=$(SRC) modules

# --- install on a training host -----------------------------------------
DESTDIR ?=
PREFIX ?= /usr/local
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(SRC)/dkms.conf)
DKMS_SRC := $(DESTDIR)/usr/src/incnn-$(DKMS_VERSION)

install: modules install-tools install-lib install-incctl python-install
	$(MAKE) -C $(KDIR) M=$(SRC) INSTALL_MOD_PATH=$(DESTDIR) modules_install
	$(if $(DESTDIR),,depmod -a $(notdir $(patsubst %/build,%,$(KDIR))) || true)

install-tools: tools
	for t in $(TOOLS); do \
		install -D -m 0755 $(BUILD)/rel/bin/$$t $(DESTDIR)$(PREFIX)/bin/$$t || exit 1; \
	done

# libincnn.so with its symlinks, public headers and pkg-config file
install-lib: so
	install -D -m 0755 $(LIBINCNN_SO_REAL) \
		$(DESTDIR)$(PREFIX)/lib/$(notdir $(LIBINCNN_SO_REAL))
	ln -sf $(notdir $(LIBINCNN_SO_REAL)) \
		$(DESTDIR)$(PREFIX)/lib/$(notdir $(LIBINCNN_SO))
	ln -sf $(notdir $(LIBINCNN_SO)) $(DESTDIR)$(PREFIX)/lib/libincnn.so
	install -d $(DESTDIR)$(PREFIX)/include/incnn
	install -m 0644 $(PUBLIC_HDRS) $(DESTDIR)$(PREFIX)/include/incnn/
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SO_VERSION)|' \
		$(SRC)/mk/incnn.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/incnn.pc

# DKMS rebuilds the module for every kernel the host installs later.
# dkms-src: the module's sources, without build products, in DKMS_SRC
# (selftests/install/dkms.sh builds them with dkms in a scratch tree).
dkms-src:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cd $(SRC) && tar -cf - --exclude='*.o' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
		--exclude='*.a' --exclude='*.d' Kbuild dkms.conf kmod uapi | \
		tar -xf - -C $(DKMS_SRC)

dkms-install: dkms-src
	dkms add -m incnn -v $(DKMS_VERSION)
	dkms build -m incnn -v $(DKMS_VERSION)
	dkms install -m incnn -v $(DKMS_VERSION)
	$(MAKE) -C $(SRC) BUILD=$(BUILD) DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) \
		install-incctl

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C $(KDIR) M=$(SRC) clean 2>/dev/null

# the PyTorch package's rules (python-install), when it is there
-include $(SRC)/userspace/python/python.mk

-include $(ALL_OBJS:.o=.d)
