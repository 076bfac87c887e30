#!/bin/bash
#
# vm.sh - run one command as root inside a throw-away QEMU (TCG) VM that boots
# Debian's stock kernel (package linux-image-amd64) and sees the host root
# file system read-only over 9p.  Used for everything that needs a kernel:
# loading incnn's module, network namespaces, qdiscs, netfilter.
#
# Usage:
#   lab/vm.sh [OPTIONS] -- COMMAND [ARG...]
#
#   COMMAND is an argv (no shell parsing); for a shell snippet use
#   `-- sh -c '...'`.  It runs as root, cwd = repo root, stdin /dev/null,
#   stdout/stderr streamed live to this script's stdout.
#
# Options:
#   --out DIR       results dir (default $INCNN_BUILD/vm/out); created and
#                   emptied per run (only if empty or made by vm.sh), writable
#                   in the guest at $VM_OUT=/tmp/out.  Use one per parallel run.
#   --mem SIZE      guest RAM (default 2G)
#   --smp N         guest CPUs (default 2)
#   --timeout SECS  wall-clock limit for the whole VM (default 900)
#   --env NAME=VAL  extra environment variable for COMMAND (repeatable)
#   --append ARGS   extra kernel command line arguments
#   --rebuild       rebuild the initramfs even if the cached one is current
#   -h, --help      this text
#
# Environment (host):
#   INCNN_BUILD        build dir (default <repo>/build); the VM uses $INCNN_BUILD/vm
#   INCNN_VM_ABI       kernel ABI to boot (default: resolved from the installed
#                      linux-image-amd64 package, e.g. 6.1.0-56-amd64)
#   INCNN_VM_KERNEL    boot this kernel image instead of /boot/vmlinuz-$ABI
#                      (make check-debug's); needs INCNN_VM_ABI (its release)
#                      and INCNN_VM_MODROOT
#   INCNN_VM_MODROOT   the tree holding lib/modules/$ABI of that kernel
#                      (modules_install's INSTALL_MOD_PATH): read for the
#                      initramfs, and bind-mounted over the guest's
#                      /lib/modules (modprobe)
#   INCNN_VM_DMESG_IGNORE  extended regex; dmesg lines matching it are not
#                      counted as kernel problems
#   All host variables named INCNN_* and CI are passed to COMMAND.
#
# Environment seen by COMMAND (guest):
#   VM_OUT=/tmp/out (the --out dir), VM_REPO=<repo root, same absolute path as
#   on the host>, VM_ABI=<kernel ABI>, INCNN_IN_VM=1, HOME=/tmp,
#   PATH=/usr/local/sbin:...:/bin, LANG=C.UTF-8.  The host root is mounted
#   read-only (9p, cache=loose: build on the host before the run); /tmp,
#   /var/tmp, /run, /dev/shm are fresh tmpfs.  modprobe and module
#   auto-loading use the host's /lib/modules/$VM_ABI.
#
# Exit status:
#   the status of COMMAND if it failed; otherwise
#   0    COMMAND exited 0 and the kernel log/taint are clean
#   99   COMMAND exited 0 but dmesg shows WARNING/BUG/Oops/leak/... or the
#        kernel got tainted W/D/B/M/L
#   124  timeout;  125  the guest never reported a status (boot failure,
#   panic, crash);  2  usage error or missing prerequisite.
#
# Files left in the --out dir besides what COMMAND wrote: vm-console.log
# (serial console), vm-dmesg.txt, vm-tainted, vm-status.

set -euo pipefail

SELF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELF_DIR/.." && pwd)
PROG=lab/vm.sh

die() { # status message...
	local rc=$1
	shift
	echo "$PROG: error: $*" >&2
	exit "$rc"
}
need_pkg() { # what package
	die 2 "$1 not found; install the Debian package: apt-get install -y $2"
}
usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit "${1:-0}"
}

# --- options ----------------------------------------------------------------
BUILD=${INCNN_BUILD:-$REPO/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
VMDIR=$BUILD/vm
OUT=
MEM=2G
SMP=2
TIMEOUT=900
APPEND=
REBUILD=0
EXTRA_ENV=()

while [ $# -gt 0 ]; do
	case $1 in
	--out) OUT=${2:?--out needs a dir}; shift 2 ;;
	--out=*) OUT=${1#*=}; shift ;;
	--mem) MEM=${2:?--mem needs a size}; shift 2 ;;
	--mem=*) MEM=${1#*=}; shift ;;
	--smp) SMP=${2:?--smp needs a number}; shift 2 ;;
	--smp=*) SMP=${1#*=}; shift ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--env) EXTRA_ENV+=("${2:?--env needs NAME=VALUE}"); shift 2 ;;
	--env=*) EXTRA_ENV+=("${1#*=}"); shift ;;
	--append) APPEND="$APPEND ${2:?--append needs arguments}"; shift 2 ;;
	--append=*) APPEND="$APPEND ${1#*=}"; shift ;;
	--rebuild) REBUILD=1; shift ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	*) echo "$PROG: unknown option '$1' (the command goes after --)" >&2; usage 2 >&2 ;;
	esac
done
[ $# -gt 0 ] || { echo "$PROG: no command given" >&2; usage 2 >&2; }
[[ $SMP =~ ^[1-9][0-9]*$ ]] || die 2 "--smp: not a number: $SMP"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die 2 "--timeout: not a number of seconds: $TIMEOUT"
for kv in "${EXTRA_ENV[@]}"; do
	[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die 2 "--env: expected NAME=VALUE, got '$kv'"
done
OUT=${OUT:-$VMDIR/out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac

# --- prerequisites ----------------------------------------------------------------
QEMU=$(command -v qemu-system-x86_64 || true)
[ -n "$QEMU" ] || need_pkg qemu-system-x86_64 qemu-system-x86
command -v cpio >/dev/null || need_pkg cpio cpio
command -v timeout >/dev/null || need_pkg timeout coreutils
command -v sha256sum >/dev/null || need_pkg sha256sum coreutils

is_static_elf64() { # file: true if it has no PT_INTERP program header
	local phoff phentsize phnum i type
	[ "$(od -An -c -N4 "$1" 2>/dev/null | tr -d ' ')" = '177ELF' ] || return 1
	phoff=$(od -An -tu8 -j32 -N8 "$1" | tr -d ' ')
	phentsize=$(od -An -tu2 -j54 -N2 "$1" | tr -d ' ')
	phnum=$(od -An -tu2 -j56 -N2 "$1" | tr -d ' ')
	for ((i = 0; i < phnum; i++)); do
		type=$(od -An -tu4 -j$((phoff + i * phentsize)) -N4 "$1" | tr -d ' ')
		[ "$type" != 3 ] || return 1 # PT_INTERP
	done
}
BUSYBOX=
for b in ${INCNN_VM_BUSYBOX:-} /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && is_static_elf64 "$b"; then
		BUSYBOX=$b
		break
	fi
done
[ -n "$BUSYBOX" ] || need_pkg "a statically linked busybox" busybox-static

ABI=${INCNN_VM_ABI:-}
MODROOT=${INCNN_VM_MODROOT:-}
if [ -n "${INCNN_VM_KERNEL:-}" ]; then
	[ -n "$ABI" ] && [ -n "$MODROOT" ] ||
		die 2 "INCNN_VM_KERNEL needs INCNN_VM_ABI and INCNN_VM_MODROOT"
	case $MODROOT in /*) ;; *) MODROOT=$PWD/$MODROOT ;; esac
fi
if [ -z "$ABI" ]; then
	command -v dpkg-query >/dev/null || die 2 "dpkg-query not found: cannot resolve the kernel ABI (set INCNN_VM_ABI)"
	deps=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) ||
		need_pkg "kernel package linux-image-amd64" linux-image-amd64
	ABI=$(grep -o -m1 -E 'linux-image-[0-9][^ ,|()]*' <<<"$deps" | head -n1 | sed 's/^linux-image-//')
	ABI=${ABI%-unsigned}
	[ -n "$ABI" ] || die 2 "cannot resolve the kernel ABI from linux-image-amd64's Depends: '$deps'"
fi
KERNEL=${INCNN_VM_KERNEL:-/boot/vmlinuz-$ABI}
MODDIR=$MODROOT/lib/modules/$ABI
[ -r "$KERNEL" ] || need_pkg "readable kernel image $KERNEL" "linux-image-$ABI"
[ -r "$MODDIR/modules.dep" ] || need_pkg "$MODDIR/modules.dep" "linux-image-$ABI"

# --- initramfs (cached) ---------------------------------------------------------
# modules for 9p over virtio-pci, with their dependencies, in load order
BOOT_MODULES="virtio_pci 9pnet_virtio 9p"

resolve_modules() { # prints the module paths (relative to MODDIR) in load order
	awk -v want="$BOOT_MODULES" '
		function base(p,  b) { b = p; sub(/.*\//, "", b); sub(/\.ko(\.(xz|zst|gz))?$/, "", b); gsub(/-/, "_", b); return b }
		function visit(m,  n, i, d) {
			if (m in done) return
			done[m] = 1
			if (!(m in path)) { missing = missing " " m; return }
			n = split(deps[m], d, " ")
			for (i = n; i >= 1; i--) visit(base(d[i]))
			print path[m]
		}
		FILENAME ~ /modules\.builtin$/ { builtin[base($1)] = 1; next }
		{ sub(/:$/, "", $1); m = base($1); path[m] = $1; $1 = ""; deps[m] = $0 }
		END {
			n = split(want, w, " ")
			for (i = 1; i <= n; i++) { if (w[i] in builtin) done[w[i]] = 1 }
			for (m in builtin) done[m] = 1
			for (i = 1; i <= n; i++) visit(w[i])
			if (missing != "") { print "MISSING" missing; exit 1 }
		}' "$MODDIR/modules.builtin" <(sed 's/: */: /' "$MODDIR/modules.dep")
}

MODLIST=$(resolve_modules) || die 2 "kernel $ABI lacks modules needed to boot the VM: ${MODLIST#MISSING}"
INITRD=$VMDIR/initramfs-$ABI.cpio
STAMP=$INITRD.stamp
stamp=$(
	{
		echo "abi=$ABI"
		sha256sum "$BUSYBOX" "$SELF_DIR/guest-init.sh" "${BASH_SOURCE[0]}"
		for m in $MODLIST; do stat -c '%n %s %Y' "$MODDIR/$m"; done
	} | sha256sum | cut -d' ' -f1
)

build_initramfs() {
	local stage m name
	mkdir -p "$VMDIR"
	stage=$(mktemp -d "$VMDIR/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,mnt,ctl,etc,lib/modules/vm}
	cp "$BUSYBOX" "$stage/bin/busybox"
	cp "$SELF_DIR/guest-init.sh" "$stage/init"
	chmod 0755 "$stage/init" "$stage/bin/busybox"
	: >"$stage/etc/vm-modules"
	for m in $MODLIST; do
		name=${m##*/}
		case $name in
		*.ko.xz) xz -dc "$MODDIR/$m" >"$stage/lib/modules/vm/${name%.xz}" ;;
		*.ko.zst) zstd -q -dc "$MODDIR/$m" >"$stage/lib/modules/vm/${name%.zst}" ;;
		*.ko.gz) gzip -dc "$MODDIR/$m" >"$stage/lib/modules/vm/${name%.gz}" ;;
		*) cp "$MODDIR/$m" "$stage/lib/modules/vm/$name" ;;
		esac || die 2 "cannot decompress $MODDIR/$m (need xz-utils / zstd / gzip)"
		echo "${name%.ko*}.ko" >>"$stage/etc/vm-modules"
	done
	# /dev/console for the kernel to open as init's stdio (needs root;
	# without it the init script reopens the console itself)
	if [ "$(id -u)" = 0 ]; then mknod -m 600 "$stage/dev/console" c 5 1; fi
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$stage.cpio"
	mv -f "$stage.cpio" "$INITRD"
	echo "$stamp" >"$STAMP"
	rm -rf "$stage"
}

if [ "$REBUILD" = 1 ] || [ ! -s "$INITRD" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$stamp" ]; then
	echo "$PROG: building initramfs for $ABI in $VMDIR" >&2
	build_initramfs
fi

# The uncompressed ELF vmlinux (extracted from the bzImage, cached) boots via
# PVH and skips the in-guest decompression: ~3 s faster under TCG.  Falls
# back to the bzImage if extraction fails.
extract_vmlinux() { # bzImage out
	local magic dec off
	for magic in '\xfd7zXZ\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -qdc' '\x1f\x8b\x08:gzip -dc'; do
		dec=${magic#*:}
		command -v "${dec%% *}" >/dev/null || continue
		while read -r off; do
			# shellcheck disable=SC2086 # $dec is "program options"
			tail -c +$((off + 1)) "$1" | $dec 2>/dev/null >"$2.tmp"
			if [ "$(od -An -c -N4 "$2.tmp" 2>/dev/null | tr -d ' ')" = '177ELF' ]; then
				mv -f "$2.tmp" "$2"
				return 0
			fi
		done < <(LC_ALL=C grep -obUaP "${magic%%:*}" "$1" 2>/dev/null | cut -d: -f1 | head -n 4)
	done
	rm -f "$2.tmp"
	return 1
}
VMLINUX=$VMDIR/vmlinux-$ABI
kstamp=$(stat -c '%s %Y' "$KERNEL")
BOOT_KERNEL=$KERNEL
if [ -n "${INCNN_VM_KERNEL:-}" ]; then
	: # a kernel of our own (make check-debug's) need not have CONFIG_PVH
elif [ "$(cat "$VMLINUX.stamp" 2>/dev/null)" = "$kstamp" ] && [ -s "$VMLINUX" ]; then
	BOOT_KERNEL=$VMLINUX
elif extract_vmlinux "$KERNEL" "$VMLINUX"; then
	echo "$kstamp" >"$VMLINUX.stamp"
	BOOT_KERNEL=$VMLINUX
else
	rm -f "$VMLINUX" "$VMLINUX.stamp"
fi

# --- per-run dirs ----------------------------------------------------------------
if [ -e "$OUT" ]; then
	[ -d "$OUT" ] || die 2 "--out $OUT is not a directory"
	# only ever empty a dir that we created (marker) or that is already empty
	if [ -n "$(ls -A "$OUT")" ] && [ ! -e "$OUT/.incnn-vm-out" ]; then
		die 2 "--out $OUT is not empty and was not created by vm.sh; refusing to empty it"
	fi
	find "$OUT" -mindepth 1 -delete
else
	mkdir -p "$OUT"
fi
OUT=$(cd "$OUT" && pwd)
: >"$OUT/.incnn-vm-out"
mkdir -p "$VMDIR"
CTL=$(mktemp -d "$VMDIR/ctl.XXXXXX")
trap 'rm -rf "$CTL"' EXIT
NONCE=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
echo "$NONCE" >"$CTL/nonce"
# Host paths the guest must still see under its tmpfs mounts (/tmp,
# /var/tmp, /run): a checkout in /tmp, a build dir there.
printf '%s\n' "$REPO" "$BUILD" >"$CTL/keep"
# another kernel's modules: the guest mounts them over /lib/modules
[ -z "$MODROOT" ] || printf '%s\n' "$MODROOT/lib/modules" >"$CTL/moddir"

shq() { # single-quote for POSIX sh
	printf "'%s'" "${1//\'/\'\\\'\'}"
}
{
	echo "# generated by $PROG"
	echo "cd $(shq "$REPO") || exit 125"
	printf 'exec /usr/bin/env -i'
	for kv in \
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		HOME=/tmp TERM=dumb LANG=C.UTF-8 USER=root LOGNAME=root \
		VM_OUT=/tmp/out "VM_REPO=$REPO" "VM_ABI=$ABI" INCNN_IN_VM=1 \
		"INCNN_BUILD=$BUILD"; do
		printf ' %s' "$(shq "$kv")"
	done
	while IFS= read -r name; do
		case $name in INCNN_BUILD | INCNN_IN_VM) continue ;; esac
		printf ' %s' "$(shq "$name=${!name}")"
	done < <(compgen -e | grep -E '^(INCNN_[A-Za-z0-9_]*|CI)$' || true)
	for kv in "${EXTRA_ENV[@]}"; do printf ' %s' "$(shq "$kv")"; done
	for a in "$@"; do printf ' %s' "$(shq "$a")"; done
	echo
} >"$CTL/cmd.sh"

# --- run ----------------------------------------------------------------------
CMDLINE="console=ttyS0,115200 loglevel=4 printk.devkmsg=on log_buf_len=4M"
CMDLINE+=" panic_on_warn=1 oops=panic panic=-1 panic_print=0x20"
CMDLINE+=" slub_debug=FZPU page_poison=1"
CMDLINE+=" rdinit=/init tsc=reliable no_timer_check mitigations=off"
CMDLINE+=" 8250.nr_uarts=1 random.trust_cpu=on$APPEND"

qesc() { printf '%s' "${1//,/,,}"; } # qemu option value: double the commas
LOG=$OUT/vm-console.log
echo "$PROG: booting $ABI (tcg, smp $SMP, mem $MEM, timeout ${TIMEOUT}s): $*" >&2
start=$(date +%s)
set +e
timeout --foreground -k 10 "$TIMEOUT" "$QEMU" \
	-nodefaults -no-user-config -no-reboot -display none \
	-machine q35 -accel tcg -cpu max -smp "$SMP" -m "$MEM" \
	-kernel "$BOOT_KERNEL" -initrd "$INITRD" -append "$CMDLINE" \
	-chardev stdio,id=con0,signal=on -serial chardev:con0 \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$(qesc "$CTL"),mount_tag=incnnctl,security_model=none,readonly=on" \
	-virtfs "local,path=$(qesc "$OUT"),mount_tag=incnnout,security_model=none,multidevs=remap" \
	</dev/null | tee "$LOG"
qrc=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

# --- verdict ------------------------------------------------------------------
fail() { echo "$PROG: FAIL: $*" >&2; }

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	fail "timeout after ${TIMEOUT}s (console log: $LOG)"
	exit 124
fi
status=$(tr -d '\r' <"$LOG" | sed -n "s/.*INCNN-VM-EXIT:$NONCE:\([0-9]\{1,3\}\).*/\1/p" | tail -n1)
if [ -z "$status" ] && [ -s "$OUT/vm-dmesg.txt" ]; then
	# the marker line can be garbled by concurrent console output; init
	# writes vm-status (after vm-dmesg.txt) just before printing it
	status=$(grep -x -E '[0-9]{1,3}' "$OUT/vm-status" 2>/dev/null || true)
fi
if [ -z "$status" ]; then
	[ "$qrc" = 0 ] || fail "qemu exited with status $qrc"
	if tr -d '\r' <"$LOG" | grep -E -q 'Kernel panic|Oops|BUG:|WARNING:'; then
		fail "guest kernel crashed; relevant console lines:"
		tr -d '\r' <"$LOG" | grep -E -B2 -A25 -m3 'Kernel panic|Oops|BUG:|WARNING:' | head -n 120 >&2
	else
		fail "guest did not report an exit status; last console lines:"
		tr -d '\r' <"$LOG" | tail -n 30 >&2
	fi
	exit 125
fi

# kernel problems: dmesg patterns (the command line echo is not one) + taint
PATTERN='WARNING:|BUG:|BUG [^ ]+ \(|kernel BUG|Oops|general protection|Call Trace|unreferenced object|[Ll]eak|[Pp]anic|UBSAN|KASAN|KFENCE|list_(add|del) corruption|refcount_t:|detected stalls?|stall on CPU|soft lockup|hard LOCKUP|blocked for more than|Poison overwritten|Redzone|Object padding'
problems=
if [ -s "$OUT/vm-dmesg.txt" ]; then
	hits=$(grep -n -E "$PATTERN" "$OUT/vm-dmesg.txt" | grep -v -E 'Kernel command line:|Command line:' || true)
	if [ -n "$hits" ] && [ -n "${INCNN_VM_DMESG_IGNORE:-}" ]; then
		hits=$(grep -v -E -- "$INCNN_VM_DMESG_IGNORE" <<<"$hits" || true)
	fi
	if [ -n "$hits" ]; then
		problems=1
		fail "kernel log problems in $OUT/vm-dmesg.txt:"
		head -n 60 <<<"$hits" >&2
	fi
else
	problems=1
	fail "no dmesg captured ($OUT/vm-dmesg.txt missing)"
fi
taint=$(cat "$OUT/vm-tainted" 2>/dev/null || echo 0)
# taint_text N: N and its flags (tainted-kernels.rst); O and E, what
# loading the out-of-tree, unsigned incnn.ko sets, are said to be expected
taint_text() {
	local t=$1 i flags= other=
	local -a f=("P proprietary module" "F module force-loaded"
		"S out-of-spec system" "R module force-unloaded"
		"M machine check" "B bad page" "U set by userspace"
		"D kernel died" "A ACPI table overridden" "W warning"
		"C staging driver" "I firmware workaround"
		"O out-of-tree module" "E unsigned module" "L soft lockup"
		"K live-patched" "X auxiliary" "T randstruct" "N test")
	[ "$t" = 0 ] && { echo 0; return; }
	for i in "${!f[@]}"; do
		[ $((t >> i & 1)) = 1 ] || continue
		flags+="${flags:+, }${f[i]}"
		[ "$i" = 12 ] || [ "$i" = 13 ] || other=1
	done
	if [ -z "$other" ]; then
		echo "$t = $flags: expected, incnn.ko is an out-of-tree, unsigned module"
	else
		echo "$t = $flags"
	fi
}
# B=bad page(5) M=machine check(4) D=died(7) W=warning(9) L=soft lockup(14)
if [ $((taint & ((1 << 4) | (1 << 5) | (1 << 7) | (1 << 9) | (1 << 14)))) != 0 ]; then
	problems=1
	fail "kernel tainted: $(taint_text "$taint") (see Documentation/admin-guide/tainted-kernels.rst)"
fi

if [ "$status" != 0 ]; then
	fail "command exited with status $status (${elapsed}s)"
	exit "$status"
fi
if [ -n "$problems" ]; then
	fail "command succeeded but the kernel reported problems (${elapsed}s)"
	exit 99
fi
echo "$PROG: PASS (${elapsed}s, taint $(taint_text "$taint"))" >&2
exit 0
