#!/bin/sh
# Run a command against a private JACK server (dummy driver, no sound card,
# real-time scheduling where allowed), e.g. for the live tests:
#   scripts/with-jackd.sh ctest -L live --output-on-failure
# The server runs in sync mode (-S): in async mode slow clients' cycles are
# skipped on small machines, which garbles sample-exact recordings.
# Environment: JACK_RATE (48000), JACK_PERIOD (64), JACK_NAME (server name
# prefix, gpufir-ci: the server is PREFIX-0..3, the first name free).
# The command sees JACK_DEFAULT_SERVER=<name>; the script exits with its status.
set -u

rate=${JACK_RATE:-48000}
period=${JACK_PERIOD:-64}
prefix=${JACK_NAME:-gpufir-ci}

if [ $# -eq 0 ]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi
if ! command -v jackd >/dev/null 2>&1; then
	echo "with-jackd.sh: jackd not found (apt-get install jackd2)" >&2
	exit 77
fi

log=$(mktemp "${TMPDIR:-/tmp}/jackd-$prefix.XXXXXX")
# A few fixed names rather than one per run: JACK's registry holds 8 servers,
# and only a server of the same name reclaims the entry of one that died
# without cleaning up. A name is claimed first (a lock file, as the tests'
# own servers claim theirs, tests/lib/jackplay.c): two scripts starting at
# once would otherwise both find a server answering to it. jackd exits at
# once when its name is taken: try the next.
# -R: real-time scheduling where the user may have it, as a desktop's JACK
# runs (its clients' process threads too); where not, jackd says so and runs
# without.
jpid=
for n in 0 1 2 3; do
	name=$prefix-$n
	exec 9>"${TMPDIR:-/tmp}/gpufir-jackd-$name.lock"
	if ! flock -n 9; then
		exec 9>&-
		continue
	fi
	jackd -n "$name" -S -R -d dummy -r "$rate" -p "$period" -C 2 -P 2 >"$log" 2>&1 &
	jpid=$!
	sleep 0.3
	if kill -0 "$jpid" 2>/dev/null; then
		break
	fi
	wait "$jpid" 2>/dev/null
	jpid=
	exec 9>&-
done
if [ -z "$jpid" ]; then
	echo "with-jackd.sh: jackd did not start:" >&2
	cat "$log" >&2
	rm -f "$log"
	exit 1
fi

cleanup() {
	if kill -0 "$jpid" 2>/dev/null; then
		kill -TERM "$jpid" 2>/dev/null
		i=0
		while kill -0 "$jpid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$jpid" 2>/dev/null
		wait "$jpid" 2>/dev/null
	fi
	# A server that did not exit cleanly leaves its files behind; only this
	# server's (named ones) are removed: other servers may be running.
	rm -f /dev/shm/jack_"$name"_* /dev/shm/jack_sem.*_"$name"_* 2>/dev/null
	rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export JACK_DEFAULT_SERVER="$name"
export JACK_NO_START_SERVER=1 # never let a client start a server of its own
# Wait until the server accepts clients (jack_lsp connects as a client).
i=0
until jack_lsp >/dev/null 2>&1; do
	if ! kill -0 "$jpid" 2>/dev/null || [ $i -ge 100 ]; then
		echo "with-jackd.sh: jackd did not start:" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.1
	i=$((i + 1))
done

"$@"
status=$?
exit $status
