# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A private PostgreSQL on loopback for the sql output's tests and the SQL
# benchmark.  Needs only bash, python3 and Debian's postgresql (no lib.sh),
# so bench scripts can source it too; inside a test it registers its stop
# with lib.sh's at_exit.
#
#   pg_start DIR      initdb (trust auth, user postgres) + start on a free
#                     127.0.0.1 port; sets PG_PORT, PG_PID, PG_DSN, PG_DIR
#   pg_stop [MODE]    stop the postmaster (fast: SIGINT, smart: SIGTERM,
#                     immediate: SIGQUIT) by PID and wait for it to exit
#   pg_restart        start again the cluster pg_start made (same port)
#   pg_sql SQL...     psql -At against it (ON_ERROR_STOP)
#
# The data directory is DIR/pgdata, owned by postgres; DIR and its parents
# are made reachable (o+x) for that user.  Never leaves a postmaster behind.
# With PG_NETNS set, the server and psql run in that network namespace.

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}

# pg_have: 0 when initdb, pg_ctl, psql and the postgres user exist.
pg_have() {
	[ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && command -v psql >/dev/null &&
		id -u postgres >/dev/null 2>&1
}

_pg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_pg_ns() { if [ -n "${PG_NETNS:-}" ]; then ip netns exec "$PG_NETNS" "$@"; else "$@"; fi; }
_pg_as() { _pg_ns runuser -u postgres -- "$@"; }

# pg_start DIR [EXTRA postgres -c OPTIONS...]
pg_start() {
	local dir="$1" d
	shift
	PG_EXTRA=("$@")
	PG_DIR="$dir/pgdata"
	mkdir -p "$dir"
	# every ancestor must be searchable by postgres (mktemp -d makes 0700)
	d=$dir
	while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
	mkdir -p "$PG_DIR" && chown postgres: "$PG_DIR" && chmod 700 "$PG_DIR"
	_pg_as "$PG_BIN/initdb" -D "$PG_DIR" -U postgres -A trust --no-sync \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
	PG_PORT=$(_pg_free_port)
	PG_DSN="host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres"
	pg_restart
}

# pg_restart: start (again) the cluster in PG_DIR on PG_PORT.
pg_restart() {
	local opts="-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off"
	opts+=" -c full_page_writes=off -c synchronous_commit=off ${PG_EXTRA[*]}"
	_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR" -o "$opts" -l "$PG_DIR/server.log" \
		-t $((30 * ${SLUICE_TEST_TIME_FACTOR:-1})) -w start >/dev/null ||
		{ tail -20 "$PG_DIR/server.log" >&2; return 1; }
	PG_PID=$(head -1 "$PG_DIR/postmaster.pid")
	if declare -F at_exit >/dev/null; then at_exit "pg_stop immediate"; fi
}

# pg_stop [fast|smart|immediate]: signal the postmaster, wait until it exits.
pg_stop() {
	local sig=INT
	case "${1:-fast}" in smart) sig=TERM ;; immediate) sig=QUIT ;; esac
	[ -n "${PG_PID:-}" ] || return 0
	kill -"$sig" "$PG_PID" 2>/dev/null || { PG_PID=; return 0; }
	while kill -0 "$PG_PID" 2>/dev/null; do sleep 0.05; done
	PG_PID=
}

# pg_sql SQL...: run statements, print rows unaligned with tab separators.
pg_sql() {
	_pg_ns psql "$PG_DSN" -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$@"
}
