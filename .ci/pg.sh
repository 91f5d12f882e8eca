#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 on a random port for
# the pgstore tests, and prints the lines to eval:
#   eval "$(.ci/pg.sh start)"   # exports TEAMRUN_TEST_PG_URL, TEAMRUN_TEST_PG_DIR, TEAMRUN_TEST_PG_CTL
#   .ci/pg.sh stop "$TEAMRUN_TEST_PG_DIR"
# initdb refuses root, so as root the cluster runs as the postgres user in a
# temp folder it owns. The restart test starts a cluster of its own and restarts it with
# its TEAMRUN_TEST_PG_CTL (a pg_ctl command line for that cluster).
set -euo pipefail

cmd=${1:-start}

find_bin() {
	for d in /usr/local/bin /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return
		fi
	done
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		dirname "$(command -v initdb)"
		return
	fi
	return 1
}

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	if ! bin=$(find_bin); then
		echo "initdb missing: installing postgresql" >&2
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
		bin=$(find_bin)
	fi
	dir=$(mktemp -d /tmp/teamrun-pg.XXXXXX)
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$dir"
	fi
	chmod 0700 "$dir"
	password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	printf '%s\n' "$password" >"$dir/pwfile"
	chmod 0600 "$dir/pwfile"
	[ "$(id -u)" = 0 ] && chown postgres "$dir/pwfile"
	as_owner "$bin/initdb" -D "$dir/data" -U teamrun --pwfile="$dir/pwfile" -A scram-sha-256 -E UTF8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	rm -f "$dir/pwfile"
	for try in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 20000))
		opts="-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=on -c synchronous_commit=on"
		if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -o "$opts" -w -t 30 start >&2; then
			break
		fi
		port=
	done
	[ -n "$port" ] || { cat "$dir/log" >&2; exit 1; }
	url="postgres://teamrun:$password@127.0.0.1:$port/postgres?sslmode=disable"
	ctl="$bin/pg_ctl -D $dir/data -l $dir/log -o '$opts'"
	if [ "$(id -u)" = 0 ]; then
		ctl="runuser -u postgres -- $ctl"
	fi
	echo "export TEAMRUN_TEST_PG_URL='$url'"
	echo "export TEAMRUN_TEST_PG_DIR='$dir'"
	printf 'export TEAMRUN_TEST_PG_CTL=%q\n' "$ctl"
	;;
stop)
	dir=${2:?usage: pg.sh stop DIR}
	bin=$(find_bin)
	as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
	rm -rf "$dir"
	;;
*)
	echo "usage: pg.sh start | stop DIR" >&2
	exit 2
	;;
esac
