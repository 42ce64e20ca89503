# scripts/bench-lib.sh: sourced by the bench scripts (bash), after
# common.sh and testenv (bench-jobs-check, on the shared test servers,
# takes only bench_median).
# shellcheck shell=bash
#
#   bench_binary            BIN: $CRONGUARD_BIN, else a release build (-O2,
#                           no sanitizers): cg_bench_binary (common.sh)
#   bench_db_start STATE    a dedicated MariaDB (testenv's settings), the
#                           database "bench"; sets DBPORT; sql ARGS... runs
#                           the client against it
#   bench_nginx DIR [SLEEP] Debian's nginx on a free loopback port, one
#                           worker, no access log, keep-alive, answering
#                           200 at once, or after SLEEP seconds (the echo
#                           module's echo_sleep: a slow webhook sink);
#                           sets HTTPPORT; its pid joins BENCH_PIDS
#   bench_fill N [CHANNEL]  a fresh outbox_messages table with N rows of
#                           about 240 bytes of JSON (an order webhook)
#   bench_questions         the server's Questions counter (round trips)
#   bench_cleanup           stop what bench_* started (call it at EXIT)
#   bench_median            the median of the numbers on standard input, one
#                           a line (of an even count, the lower middle one)
#   bench_cpu PID           the user + system seconds process PID has used
#                           so far (/proc/PID/stat, after its command name)

BENCH_PIDS=
BENCH_STATE=
# shellcheck disable=SC2034 # BIN: for the sourcing script
BIN=

bench_binary() { cg_bench_binary; }

bench_median() { sort -n | awk '{ v[NR] = $1 } END { if (NR > 0) print v[int((NR + 1) / 2)] }'; }

bench_cpu()
{
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.3f", ($12 + $13) / hz }' "/proc/$1/stat"
}

sql() { mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$DBPORT" -u root -N -B "$@"; }

bench_db_start()
{
	BENCH_STATE=$1
	mkdir -p "$BENCH_STATE"
	cg_say "starting a dedicated MariaDB"
	testenv_db_start "$BENCH_STATE" || cg_die "MariaDB did not start"
	DBPORT=$(cat "$BENCH_STATE/db.port")
	sql -e "CREATE DATABASE bench CHARACTER SET utf8mb4"
}

bench_nginx()
{
	local dir=$1 sleep=${2:-} load="" body _

	HTTPPORT=$(testenv_free_port)
	mkdir -p "$dir"
	body="return 200 '{\"ok\":true}';"
	if [ -n "$sleep" ]; then
		load="load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;"
		body="echo_sleep $sleep; echo '{\"ok\":true}';"
	fi
	cat > "$dir/nginx.conf" <<-EOF
	$load
	worker_processes 1;
	daemon off;
	pid $dir/nginx.pid;
	error_log $dir/error.log warn;
	events { worker_connections 1024; }
	http {
		access_log off;
		client_body_temp_path $dir/body;
		proxy_temp_path $dir/proxy;
		keepalive_requests 10000000;
		keepalive_timeout 60s;
		server {
			listen 127.0.0.1:$HTTPPORT;
			location / { $body }
		}
	}
	EOF
	cg_say "starting nginx on 127.0.0.1:$HTTPPORT${sleep:+ (each answer after $sleep s)}"
	nginx -e "$dir/error.log" -c "$dir/nginx.conf" -p "$dir" &
	BENCH_PIDS="$BENCH_PIDS $!"
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$HTTPPORT/" && break
		sleep 0.1
	done
	curl -sf -o /dev/null -d '{}' "http://127.0.0.1:$HTTPPORT/hook" ||
	    cg_die "nginx did not answer (the slow sink needs libnginx-mod-http-echo)"
}

bench_fill()
{
	sql bench -e "TRUNCATE outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
	    SELECT '${2:-hook}', 'order.paid', NULL, JSON_OBJECT(
	        'type', 'order.paid', 'timestamp', '2026-11-29T10:00:00Z',
	        'data', JSON_OBJECT('order_id', seq,
	            'customer', CONCAT('customer-', seq, '@example.com'),
	            'amount_cents', 1000 + seq % 9000, 'currency', 'EUR',
	            'note', REPEAT('x', 60)))
	    FROM seq_1_to_$1"
}

bench_questions() { sql -e "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }

bench_cleanup()
{
	local p
	for p in $BENCH_PIDS; do
		kill "$p" 2> /dev/null
	done
	[ -n "$BENCH_STATE" ] && testenv_db_stop "$BENCH_STATE" 2> /dev/null
	return 0
}
