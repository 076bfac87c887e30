#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# defaults.sh - nothing lossy unless an administrator asked for it:
#  - a freshly loaded incnn has no rule in any namespace: traffic marked
#    with ToS 0x28 (DSCP 10, AF11) arrives byte-identical, untouched;
#  - the default_rule= module parameter (modinfo documents it) gives
#    every namespace a rule; a bad value fails the load;
#  - superframes (frame version 2) are on in every namespace unless the
#    module is loaded with superframes=0.

# shellcheck disable=SC2034 # read by lib.sh
NO_TEST_RULE=1
. "$(dirname "$0")/lib.sh"

ktap_header "no rule by default; default_rule= parameter"
unload_module 60 || { fail "rmmod incnn"; ktap_finish; exit 1; }
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 50000 141 1e-1
short_timeouts() { # flows expire quickly once closed: rmmod can follow
	incctl "$NS_A" set idle-timeout 1 close-timeout 1 &&
		incctl "$NS_B" set idle-timeout 1 close-timeout 1
}
short_timeouts

rules=$(incctl "$NS_A" rule list; incctl "$NS_B" rule list; "$INCCTL" rule list)
if ! grep -qi codec <<<"$rules"; then
	ok "no rule after insmod (new namespaces and init_net)"
else
	fail "no rule after insmod" "$rules"
fi
if xfer af11 "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/f.bin" "$TMP/af11.out") &&
	[ "$(counter "$NS_A" tx_segs)" = 0 ]; then
	ok "AF11 (ToS 0x28) traffic byte-identical, untouched (tx_segs 0)"
else
	fail "AF11 traffic byte-identical, untouched" "${st:-}" \
		"tx_segs $(counter "$NS_A" tx_segs)"
fi

if modinfo -p "$KO" | grep -q '^default_rule:'; then
	ok "modinfo documents default_rule"
else
	fail "modinfo documents default_rule" "$(modinfo -p "$KO")"
fi

# sf_state NS: "on" or "off", the namespace's superframes switch
sf_state() {
	incctl "$1" show | awk '$1 == "superframes" { print $2 }'
}

# with the parameter, every namespace starts with the rule
unload_module 60
if insmod "$KO" default_rule=0x28:inceptionn:10; then
	short_timeouts
	a=$(sf_state "$NS_A") b=$(sf_state "$NS_B") i=$("$INCCTL" show |
		awk '$1 == "superframes" { print $2 }')
	if [ "$a $b $i" = "on on on" ]; then
		ok "superframes on in every namespace by default (insmod without superframes=)"
	else
		fail "superframes on by default" "A $a, B $b, init_net $i"
	fi
	predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
	if incctl "$NS_A" rule list | grep -q "tos 0x28) codec inceptionn" &&
		xfer param "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/param.out") &&
		[ "$(counter "$NS_A" tx_framed)" -ge 1 ]; then
		ok "default_rule=0x28:inceptionn:10: rule in every namespace, bytes as predicted"
	else
		fail "default_rule=0x28:inceptionn:10: rule, bytes as predicted" "${st:-}" \
			"$(incctl "$NS_A" rule list)"
	fi
else
	fail "insmod default_rule=0x28:inceptionn:10"
fi
unload_module 60
bad=0
for p in 0x2c:inceptionn 0x28:nosuch 0x29:lz4 0x28:inceptionn:99 x; do
	if insmod "$KO" default_rule="$p" 2>/dev/null; then
		bad=$((bad + 1))
		rmmod incnn
	fi
done
if [ $bad = 0 ]; then
	ok "a bad default_rule fails the load"
else
	fail "a bad default_rule fails the load" "$bad bad values accepted"
fi
if insmod "$KO" superframes=0; then
	a=$(sf_state "$NS_A") b=$(sf_state "$NS_B")
	[ "$a $b" = "off off" ] && ok "superframes=0: off in every namespace" ||
		fail "superframes=0: off in every namespace" "A $a, B $b"
	rmmod incnn
else
	fail "insmod superframes=0"
fi
load_module

ktap_finish
