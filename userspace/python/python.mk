# SPDX-License-Identifier: GPL-2.0
#
# The Python package incnn (userspace/python/incnn), included by the
# top-level Makefile (SRC, BUILD, DESTDIR, PREFIX, LIBINCNN_SO come from it).
#
#   make python          copy the package to $(BUILD)/python/incnn, so that
#                        PYTHONPATH=build/python python3 -c 'import incnn.torch'
#                        works from the build tree (it loads
#                        build/rel/lib/libincnn.so.0)
#   make python-install  install it into the dist-packages directory of
#                        Debian's /usr/bin/python3 under $(DESTDIR)$(PREFIX)

PYTHON ?= /usr/bin/python3
PY_SRC := $(SRC)/userspace/python
PY_FILES := $(wildcard $(PY_SRC)/incnn/*.py)
PY_BUILT := $(patsubst $(PY_SRC)/%,$(BUILD)/python/%,$(PY_FILES))

# PREFIX /usr: /usr/lib/python3/dist-packages (Debian's own scheme);
# any other PREFIX: PREFIX/lib/python3.X/dist-packages (what Debian's
# python3 puts on sys.path for /usr/local)
PY_SITEDIR = $(shell $(PYTHON) -c 'import sys, sysconfig; p = sys.argv[1]; \
	v = {"base": p, "platbase": p}; \
	s = "deb_system" if p == "/usr" and "deb_system" in sysconfig.get_scheme_names() else "posix_prefix"; \
	print(sysconfig.get_path("purelib", s, vars=v).replace("/site-packages", "/dist-packages"))' \
	$(PREFIX))

.PHONY: python python-install
all: python

python: $(PY_BUILT) $(LIBINCNN_SO)

$(BUILD)/python/incnn/%.py: $(PY_SRC)/incnn/%.py
	@mkdir -p $(dir $@)
	cp $< $@

python-install: $(PY_FILES)
	install -d $(DESTDIR)$(PY_SITEDIR)/incnn
	install -m 644 $(PY_FILES) $(DESTDIR)$(PY_SITEDIR)/incnn/
