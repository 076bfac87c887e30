# SPDX-License-Identifier: GPL-2.0
#
# The one set of compiler flags and library paths of incnn's userspace,
# included by the top-level Makefile and by the kselftest directories'
# Makefiles (selftests/*/Makefile, which lib.mk needs to stay Makefiles).
#
#   INCNN_SRC    the repository (from this file's place)
#   INCNN_BUILD  the build tree (default $(INCNN_SRC)/build)

INCNN_SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
INCNN_BUILD ?= $(INCNN_SRC)/build

INCNN_WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 \
	-Wmissing-prototypes -Wstrict-prototypes
# -ffp-contract=off: no fused multiply-add, so incnn-train's float results
# do not depend on the compiler's or CPU's FMA (docs/training.md)
INCNN_CFLAGS := -std=c11 -D_GNU_SOURCE -g $(INCNN_WARN) -ffp-contract=off \
	-MMD -MP -I$(INCNN_SRC)/uapi -I$(INCNN_SRC)/kmod/codec \
	-I$(INCNN_SRC)/userspace/include \
	-I$(INCNN_SRC)/userspace/collective/include
INCNN_REL_CFLAGS := -O2
INCNN_ASAN_CFLAGS := -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all

# $(call incnn_lib,VARIANT,NAME): a static library of a build variant
# (rel, asan, fuzz): codec = libincnn-codec.a (kmod/codec, the frame,
# liblz4 glue, the synthetic data generator), coll = libincnn.a (the
# collective; needs nl and codec), nl = libincnn-nl.a (generic netlink
# with libmnl, the module's configuration), train = libincnn-train.a (the
# trainer's MLP and data; needs codec).
incnn_lib = $(INCNN_BUILD)/$(1)/lib/$(if $(filter coll,$(2)),libincnn.a,libincnn-$(2).a)
# what each library needs from the system
INCNN_CODEC_LDLIBS := -llz4 -lm
INCNN_NL_LDLIBS := -lmnl
INCNN_COLL_LDLIBS := $(INCNN_NL_LDLIBS) $(INCNN_CODEC_LDLIBS) -lpthread
