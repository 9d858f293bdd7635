#!/bin/sh
# The installed systemd units, the system one and the user one (systemctl
# --user): install the build into a staging DESTDIR (never the live system),
# then `systemd-analyze verify` each. verify can print problems
# and still exit 0, so any line it prints about the unit is a failure.
# Usage: test_systemd_unit.sh BUILD_DIR. Exit 77 (skip) without systemd-analyze.
set -u
build=${1:-${GPUFIR_BINARY_DIR:-}}
[ -n "$build" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze not installed"; exit 77; }

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-unit-XXXXXX")
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR="$stage/root" cmake --install "$build" >"$stage/install.log" 2>&1 ||
	{ cat "$stage/install.log"; fail "cmake --install into a staging DESTDIR failed"; }
unit=$(find "$stage/root" -path '*/systemd/system/gpufir.service' | head -n 1)
[ -n "$unit" ] || fail "gpufir.service was not installed"
sysusers=$(find "$stage/root" -path '*/sysusers.d/gpufir.conf' | head -n 1)
[ -n "$sysusers" ] || fail "sysusers.d/gpufir.conf was not installed"

# Settings the daemon relies on (notify protocol, reload, status socket).
for want in '^Type=notify$' '^NotifyAccess=main$' '^ExecReload=/bin/kill -HUP \$MAINPID$' \
	'^WatchdogSec=' '^User=gpufir$' '^RuntimeDirectory=gpufir$' '^LimitMEMLOCK=infinity$' \
	'^LimitRTPRIO=' '^ExecStart=/[^ ]*/gpufir --live -c /[^ ]*/gpufir\.conf$'; do
	grep -q -- "$want" "$unit" || fail "installed unit lacks a line matching $want"
done
# Hardening the issue "hostile input and a local attacker" asked for: no network
# (audio servers use filesystem sockets), a memory and task cap since locked
# memory is unlimited, recordings for the service's user only, and no restart
# loop on a bad command line (2) or config (6, EXIT_NOTCONFIGURED).
for want in '^PrivateNetwork=yes$' '^MemoryMax=[0-9]' '^TasksMax=[0-9]' '^UMask=0077$' \
	'^StateDirectoryMode=0700$' '^RestartPreventExitStatus=.*\<2\>' '^RestartPreventExitStatus=.*\<6\>'; do
	grep -q -- "$want" "$unit" || fail "installed unit lacks a line matching $want"
done
grep -Eq '@[A-Z_]+@' "$unit" && fail "unconfigured @VARIABLE@ left in the unit: $(grep -E '@[A-Z_]+@' "$unit")"

# The unit names the installed path (e.g. /usr/local/bin/gpufir); verify checks
# that ExecStart is executable, so point it at the staged copy of that binary.
bin=$(sed -n 's|^ExecStart=\(/[^ ]*\) .*|\1|p' "$unit")
[ -x "$stage/root$bin" ] || fail "ExecStart binary $bin is not installed"
mkdir "$stage/verify"
sed "s|^ExecStart=$bin |ExecStart=$stage/root$bin |" "$unit" >"$stage/verify/gpufir.service"

out=$(cd "$stage/verify" && systemd-analyze verify ./gpufir.service 2>&1)
rc=$?
if printf '%s\n' "$out" | grep -q 'gpufir'; then
	printf '%s\n' "$out"
	fail "systemd-analyze verify reported problems with the unit"
fi
[ -n "$out" ] && printf 'note (not about the unit): %s\n' "$out"
[ $rc -eq 0 ] || echo "note: systemd-analyze verify exited $rc without naming the unit"

# sysusers.d entry: parse it against the staging root (writes nothing).
if command -v systemd-sysusers >/dev/null 2>&1; then
	sout=$(systemd-sysusers --root="$stage/root" --dry-run 2>&1) ||
		{ printf '%s\n' "$sout"; fail "systemd-sysusers rejected sysusers.d/gpufir.conf"; }
	printf '%s\n' "$sout" | grep -q "Creating user 'gpufir'" ||
		{ printf '%s\n' "$sout"; fail "sysusers.d/gpufir.conf does not create user gpufir"; }
fi

# Exposure score: printed, and held at or below 0.8 (1.5 before PrivateNetwork=,
# IPAddressDeny=, UMask=0077 and the rest; lower is safer). An older
# systemd-analyze without --offline prints nothing: then it is only skipped.
exposure=$(cd "$stage/verify" && systemd-analyze security --offline=yes ./gpufir.service 2>/dev/null |
	grep 'Overall exposure')
if [ -n "$exposure" ]; then
	echo "$exposure"
	score=$(printf '%s\n' "$exposure" | sed -n 's/.*: \([0-9.]*\) .*/\1/p')
	awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 0.8) }' ||
		fail "systemd-analyze security exposure $score is above 0.8"
else
	echo "note: systemd-analyze security --offline gave no score"
fi

# The user units: the same notify, watchdog, reload and restart settings; the
# config under $XDG_CONFIG_HOME (%E), the sockets under $XDG_RUNTIME_DIR (%t,
# RuntimeDirectory=); no setting a user manager cannot apply (User=, the
# namespace sandbox, raised limits) or that would hide the session's audio
# server socket (ProtectHome=). gpufir.service runs ~/.config/gpufir/gpufir.conf;
# the template gpufir@.service's instance NAME runs NAME.conf with runtime and
# state directories of its own, so gpufir and gpufir@speakers run side by side.
# check_user_unit FILE CONF RUNDIR STATEDIR SEED INSTANCE: FILE's config is
# %E/gpufir/CONF.conf, its directories RUNDIR and STATEDIR, its first config
# config/examples/SEED.conf, checked with %i = INSTANCE.
check_user_unit() {
	unitf=$1 conf=$2 rundir=$3 statedir=$4 seedname=$5 inst=$6
	name=$(basename "$unitf")
	for want in '^Type=notify$' '^NotifyAccess=main$' '^ExecReload=/bin/kill -HUP \$MAINPID$' '^WatchdogSec=' \
		"^RuntimeDirectory=$rundir\$" "^StateDirectory=$statedir\$" \
		"^ExecStart=/[^ ]*/gpufir --live -c %E/gpufir/$conf\\.conf\$" \
		'^RestartPreventExitStatus=.*\<2\>' '^RestartPreventExitStatus=.*\<6\>' '^Restart=on-failure$' \
		'^NoNewPrivileges=yes$' '^SystemCallFilter=' '^UMask=0077$' '^WantedBy=default\.target$'; do
		grep -q -- "$want" "$unitf" || fail "installed user unit $name lacks a line matching $want"
	done
	for bad in '^User=' '^Group=' '^ProtectHome=' '^ProtectSystem=' '^PrivateTmp=' '^PrivateNetwork=' \
		'^PrivateUsers=' '^DeviceAllow=' '^LimitRTPRIO=' '^LimitMEMLOCK=' '^CapabilityBoundingSet=' \
		'^WantedBy=multi-user'; do
		grep -q -- "$bad" "$unitf" &&
			fail "user unit $name has a line a user manager cannot apply: $(grep -- "$bad" "$unitf")"
	done
	grep -Eq '@[A-Z_]+@' "$unitf" && fail "unconfigured @VARIABLE@ left in the user unit $name"
	# With no config of the user's, the first start writes the example (installed);
	# a config already there is kept.
	seed=$(sed -n "s|^ExecStartPre=.* cp \\(/[^ ]*/$seedname\\.conf\\) .*|\\1|p" "$unitf")
	[ -n "$seed" ] || fail "$name does not write $seedname.conf at first start"
	seed=$(printf '%s' "$seed" | sed "s|%i|$inst|g")
	[ -f "$stage/root$seed" ] || fail "$name copies $seed, which is not installed"
	mine=$stage/cfg-$inst/gpufir/$(printf '%s' "$conf" | sed "s|%i|$inst|g").conf
	pre=$(sed -n "s|^ExecStartPre=/bin/sh -c '\\(.*\\)'\$|\\1|p" "$unitf" |
		sed "s|%E|$stage/cfg-$inst|g; s|%i|$inst|g; s|$seed|$stage/root$seed|")
	[ -n "$pre" ] || fail "ExecStartPre of $name is not one /bin/sh -c '...' command"
	sh -c "$pre" && cmp -s "$stage/root$seed" "$mine" || fail "ExecStartPre of $name did not write $mine from $seed"
	echo "# the user's edit" >"$mine"
	sh -c "$pre" && grep -q "the user's edit" "$mine" || fail "ExecStartPre of $name replaced a config the user had"
	ubin=$(sed -n 's|^ExecStart=\(/[^ ]*\) .*|\1|p' "$unitf")
	[ "$ubin" = "$bin" ] || fail "the user unit $name runs $ubin, the system unit $bin"
	mkdir -p "$stage/user" "$stage/rt" && chmod 0700 "$stage/rt"
	sed "s|^ExecStart=$bin |ExecStart=$stage/root$bin |" "$unitf" >"$stage/user/$name"
	# --user needs a runtime directory (the user manager's); a private one here. A
	# template is verified as its instance.
	vname=$(printf '%s' "$name" | sed "s|@\\.service\$|@$inst.service|")
	out=$(cd "$stage/user" && XDG_RUNTIME_DIR="$stage/rt" systemd-analyze --user verify "./$vname" 2>&1)
	rc=$?
	if printf '%s\n' "$out" | grep -q 'gpufir'; then
		printf '%s\n' "$out"
		fail "systemd-analyze --user verify reported problems with the user unit $vname"
	fi
	[ -n "$out" ] && printf 'note (not about the user unit %s): %s\n' "$vname" "$out"
	[ $rc -eq 0 ] || echo "note: systemd-analyze --user verify exited $rc without naming $vname"
	# A user unit cannot have the system unit's namespaces, so its score is higher;
	# held at the 6.3 of the hardening it has (seccomp, no new privileges, umask).
	exposure=$(cd "$stage/user" && XDG_RUNTIME_DIR="$stage/rt" systemd-analyze --user security --offline=yes \
		"./$vname" 2>/dev/null | grep 'Overall exposure')
	if [ -n "$exposure" ]; then
		echo "user unit $vname: $exposure"
		score=$(printf '%s\n' "$exposure" | sed -n 's/.*: \([0-9.]*\) .*/\1/p')
		awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 6.3) }' ||
			fail "systemd-analyze security exposure of the user unit $vname $score is above 6.3"
	fi
}
uunit=$(find "$stage/root" -path '*/systemd/user/gpufir.service' | head -n 1)
[ -n "$uunit" ] || fail "the user unit systemd/user/gpufir.service was not installed"
tunit=$(find "$stage/root" -path '*/systemd/user/gpufir@.service' | head -n 1)
[ -n "$tunit" ] || fail "the template user unit systemd/user/gpufir@.service was not installed"
check_user_unit "$uunit" gpufir gpufir gpufir desktop-mic mic
check_user_unit "$tunit" %i gpufir-%i gpufir/%i desktop-%i speakers
check_user_unit "$tunit" %i gpufir-%i gpufir/%i desktop-%i mic
echo "test_systemd_unit: ok ($unit, $uunit, $tunit)"
exit 0
