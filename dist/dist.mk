# SPDX-License-Identifier: MIT
# Installing qpool: make install / uninstall with the GNU directory
# variables, the systemd units, and the sample config. Included by Makefile.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#
# Commands go to bindir, daemons and the wrapper to sbindir: gded sits
# beside qnoded (which finds it there, lib/exe.c, as in build/bin) and an
# admin runs it by hand (gded(8)). The daemons read /etc/qpool/qpool.conf
# whatever the prefix, so sysconfdir defaults to /etc.

PREFIX         ?= /usr/local
prefix         ?= $(PREFIX)
exec_prefix    ?= $(prefix)
bindir         ?= $(exec_prefix)/bin
sbindir        ?= $(exec_prefix)/sbin
datarootdir    ?= $(prefix)/share
mandir         ?= $(datarootdir)/man
docdir         ?= $(datarootdir)/doc/qpool
sysconfdir     ?= /etc
systemdunitdir ?= $(prefix)/lib/systemd/system
INSTALL        ?= install

USER_CMDS  := qsub qstat qwait qdel qhold qrls qacct qalter qsig qrerun qmove qorder qselect tracejob pbsnodes pbs_rsub pbs_rstat pbs_rdel qpool-rsh pbsdsh qexec qpool-pmi
# Slurm's front end, packaged apart as qpool-slurm.
SLURM_CMDS := $(SLURM_CMD_NAMES)
ADMIN_BINS := qpoold qnoded gded gded-byhand qmgr
UNITS      := qpoold.service qnoded.service qpool-cgroup.service
MAN_PAGES  := $(wildcard man/man*/*.[1-8])
# A Prometheus scrape config and alert rules (docs/METRICS.md).
PROM_FILES := $(wildcard dist/prometheus/*.yml)

.PHONY: install uninstall units

$(BUILD)/qpool.conf.sample: $(BIN)/qpoold
	$(BIN)/qpoold --dump-config > $@.tmp && mv $@.tmp $@

# The units with their paths; for systemd-analyze verify and install.
units: $(addprefix $(BUILD)/dist/,$(UNITS))
$(BUILD)/dist/%.service: dist/systemd/%.service.in FORCE
	@mkdir -p $(@D)
	sed 's|@sbindir@|$(sbindir)|g' $< > $@.tmp && mv $@.tmp $@
FORCE:

install: all $(BUILD)/qpool.conf.sample units
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(systemdunitdir) \
		$(DESTDIR)$(sysconfdir)/qpool $(DESTDIR)$(docdir)
	$(INSTALL) -m 0755 $(addprefix $(BIN)/,$(USER_CMDS) $(SLURM_CMDS)) $(DESTDIR)$(bindir)
	$(INSTALL) -m 0755 $(addprefix $(BIN)/,$(ADMIN_BINS)) $(DESTDIR)$(sbindir)
	for p in $(MAN_PAGES); do \
		d=$(DESTDIR)$(mandir)/$$(basename $$(dirname $$p)); \
		$(INSTALL) -d $$d && $(INSTALL) -m 0644 $$p $$d || exit 1; \
	done
	$(INSTALL) -m 0644 $(addprefix $(BUILD)/dist/,$(UNITS)) $(DESTDIR)$(systemdunitdir)
	$(INSTALL) -m 0644 conf/qpool.conf $(DESTDIR)$(docdir)/qpool.conf.example
	$(INSTALL) -m 0644 $(BUILD)/qpool.conf.sample $(DESTDIR)$(docdir)/qpool.conf.sample
	$(INSTALL) -d $(DESTDIR)$(docdir)/prometheus
	$(INSTALL) -m 0644 $(PROM_FILES) $(DESTDIR)$(docdir)/prometheus
	@# An admin's config is never overwritten.
	if [ ! -e $(DESTDIR)$(sysconfdir)/qpool/qpool.conf ]; then \
		$(INSTALL) -m 0644 $(BUILD)/qpool.conf.sample $(DESTDIR)$(sysconfdir)/qpool/qpool.conf; \
	fi

# Leaves the state directory and an edited config alone.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(USER_CMDS) $(SLURM_CMDS)) $(addprefix $(DESTDIR)$(sbindir)/,$(ADMIN_BINS))
	rm -f $(addprefix $(DESTDIR)$(systemdunitdir)/,$(UNITS))
	for p in $(MAN_PAGES); do \
		rm -f $(DESTDIR)$(mandir)/$$(basename $$(dirname $$p))/$$(basename $$p); \
	done
	if [ -f $(DESTDIR)$(docdir)/qpool.conf.sample ] && \
	   cmp -s $(DESTDIR)$(docdir)/qpool.conf.sample $(DESTDIR)$(sysconfdir)/qpool/qpool.conf; then \
		rm -f $(DESTDIR)$(sysconfdir)/qpool/qpool.conf; \
	fi
	rm -f $(DESTDIR)$(docdir)/qpool.conf.example $(DESTDIR)$(docdir)/qpool.conf.sample
	rm -f $(addprefix $(DESTDIR)$(docdir)/prometheus/,$(notdir $(PROM_FILES)))
	-rmdir $(DESTDIR)$(docdir)/prometheus 2>/dev/null
	-rmdir $(DESTDIR)$(docdir) $(DESTDIR)$(sysconfdir)/qpool 2>/dev/null

# --- Debian packages (packaging/debian; dpkg wants debian/ at the top of
# a source tree, so the tree is copied to $(BUILD)/deb with it there).
# qpool-server, qpool-node, qpool-client, and qpool-common (the config).
DIST_DEB_PKGS := debhelper dpkg-dev lintian man-db
ANALYZE_PKGS  := cppcheck shellcheck
DEB_DIR       := $(BUILD)/deb
DEB_SRC       := $(DEB_DIR)/qpool-$(VERSION)

.PHONY: deb deb-check deps-dist analyze

deps-dist:
	@$(MAKE) -s deps DEB_PKGS="$(DIST_DEB_PKGS) $(ANALYZE_PKGS)"

# The tree's content (names, modes, bytes; not times) and HEAD, hashed: a
# second `make deb` of the same tree (deb-check, then vm-check in CI)
# keeps the packages the first built instead of building them again.
DEB_TREE_HASH = { git rev-parse -q HEAD 2>/dev/null; tar -c --sort=name --mtime=@0 \
	--owner=0 --group=0 --numeric-owner --exclude='./build*' --exclude=./.git .; } | sha256sum | cut -c1-32

deb: deps-dist
	@h=$$($(DEB_TREE_HASH)); \
	if [ "$$(cat $(DEB_DIR)/.tree 2>/dev/null)" = "$$h" ] && ls $(DEB_DIR)/*.deb > /dev/null 2>&1; then \
		echo "make deb: $(DEB_DIR) holds this tree's packages ($$h)"; exit 0; fi; \
	$(MAKE) -s deb-build && echo "$$h" > $(DEB_DIR)/.tree

.PHONY: deb-build
deb-build:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	tar -c --exclude='./build*' --exclude=./.git --exclude=./packaging . | tar -x -C $(DEB_SRC)
	cp -r packaging/debian $(DEB_SRC)/debian
	printf 'qpool (%s) unstable; urgency=medium\n\n  * Built from the qpool tree (make deb).\n\n -- qpool developers <qpool-devel@example.org>  %s\n' \
		$(VERSION) "$$(git log -1 --format=%aD 2>/dev/null || date -R)" > $(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && env -u BUILD -u SANITIZE -u CI -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b > ../build.log 2>&1 || \
		{ tail -n 40 ../build.log; exit 1; }
	lintian --fail-on error --tag-display-limit 0 $(DEB_DIR)/qpool_$(VERSION)_*.changes
	@ls $(DEB_DIR)/*.deb

# Builds the packages, installs them on this machine, checks what an admin
# would, removes and purges them (dist/deb-check; root).
deb-check: deb
	dist/deb-check $(DEB_DIR)

# --- Static analysis: cppcheck over the C parts, shellcheck over every
# script; both must be silent. cppcheck's style class is on except
# variableScope (STYLE: declarations open a function) and
# knownConditionTrueFalse (it misreads the `r = r ?: f()` chains).
# Findings that are right but intended carry an inline suppression with
# the reason (cppcheck-suppress / shellcheck disable).
SH_SCRIPTS = $(shell grep -lE '^\#!.*(bash|/sh)' .ci/run dist/* dist/vm/* tests/run tests/manlint tests/demo \
		tests/fuzz/run tests/stress/* tests/integration/* bench/* 2>/dev/null) \
	     tests/integration/lib.sh bench/lib.sh tests/cgroups.sh
C_PARTS := lib client pbs slurm scheduler queue-preproc noded wrappers accounting commands slurm/commands pmi

analyze: deps-dist
	cppcheck -q --error-exitcode=1 --std=c11 -D_GNU_SOURCE -j2 --inline-suppr \
		--enable=warning,style,performance,portability \
		--suppress=variableScope --suppress=knownConditionTrueFalse \
		--suppress=missingIncludeSystem \
		$(addprefix -I,$(C_PARTS)) $(C_PARTS)
	shellcheck -x -S warning $(sort $(SH_SCRIPTS))

# --- Guests: Debian 12 and 13 booted under qemu with systemd and cgroup
# v2, the packages installed, the tests of dist/vm/tests.list run in them
# (dist/vm/vm-check, docs/VM.md; root). Root file systems and the other
# suite's packages are cached in VM_CACHE.
VM_DEB_PKGS := mmdebstrap qemu-system-x86 e2fsprogs debian-archive-keyring
VM_CACHE    ?= /var/cache/qpool-vm

.PHONY: deps-vm vm-check vm-prepare

deps-vm:
	@$(MAKE) -s deps DEB_PKGS="$(VM_DEB_PKGS)"

vm-check: deb deps-vm
	VM_CACHE=$(VM_CACHE) VM_OUT=$(BUILD)/vm dist/vm/vm-check $(DEB_DIR)

# What vm-check would build before booting (each suite's packages, root
# file system, accelerator verdict), built into VM_CACHE and no guest
# booted: .ci/run builds it while make check's tests run.
vm-prepare: deb deps-vm
	VM_PREPARE=1 VM_CACHE=$(VM_CACHE) VM_OUT=$(BUILD)/vm dist/vm/vm-check $(DEB_DIR)
