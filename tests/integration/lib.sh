# shellcheck shell=sh
# tests/integration/lib.sh: sourced by every integration test (POSIX sh:
# make check runs tests with $(SHELL), which may be dash).
#
#   . "$CRONGUARD_SRCDIR/tests/integration/lib.sh"   (or "$(dirname "$0")/lib.sh")
#   need_servers                  # skip (77) without servers; fail under CI
#   write_config "$CONF" 'outbox = { batch_size = 10; };'
#   assert_exit 0 cg db migrate
#   assert_eq 4 "$(mysql_q 'SELECT COUNT(*) FROM cronguard_schema')"
#
# or, in named cases that each report their result and go on after a
# failure (doc/howto.md, "An integration test"):
#
#   test_expect_success 'config check prints the defaults' '
#           write_config "$CONF" &&
#           assert_exit 0 cg config check
#   '
#   test_expect_success SERVERS 'db migrate applies every migration' '
#           assert_exit 0 cg db migrate
#   '
#   test_done
#
# Variables set here:
#   TEST_NAME  t0120-db-migrate        TEST_ID    t0120-db-migrate-<pid>
#   TEST_TMP   private temp directory, removed at exit
#   CONF       $TEST_TMP/cronguard.conf (written by write_config)
#   OUT ERR    files holding the last assert_exit's stdout and stderr
#   TEST_DB    test_<pid>, created by need_servers, dropped at exit
#   HTTP_PORT HTTP_LOG  HTTP_BASE=http://127.0.0.1:PORT/$TEST_ID
#   SMTP_PORT SMTP_DIR SMTP_LOG  SMTP_URL=smtp://127.0.0.1:PORT
#   MAIL_DOMAIN=$TEST_ID.example   use recipients like kim@$MAIL_DOMAIN
# The servers are shared by tests running in parallel: put every HTTP URL
# under $HTTP_BASE and every recipient under @$MAIL_DOMAIN (fault recipients:
# tempfail@$MAIL_DOMAIN, reject@$MAIL_DOMAIN); the http_* and smtp_*
# helpers filter on them by default.  A test that stops a server or counts
# connections starts its own with smtp_private_start / http_private_start.
# Fault grammars and file formats: tests/testservers/*.py, top of file.
#
# Functions: test_expect_success, test_done, test_have_prereq,
# test_set_prereq, test_lazy_prereq, need_servers, at_exit CMD, fail MSG,
# assert_eq, assert_exit,
# assert_grep, wait_for, mysql_q, mysql_admin, write_config, cg,
# http_count, http_requests, http_field, smtp_count, smtp_messages,
# smtp_envelopes, smtp_connections, smtp_private_start/stop,
# http_private_start/stop, db_private_start/stop, cron_private_start/stop,
# user_copy.  Note: fail/exit inside $(...) only ends the subshell.

set -eu

TEST_NAME=$(basename "$0" .sh)
TEST_ID=$TEST_NAME-$$
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cg-$TEST_NAME.XXXXXX")
CONF=$TEST_TMP/cronguard.conf
OUT=$TEST_TMP/out
ERR=$TEST_TMP/err
TEST_DB=
LIB_PY=/usr/bin/python3
# at_exit's commands, one a line, in a file so that a case (a subshell)
# can add to them too.
LIB_AT_EXIT_FILE=$TEST_TMP/.at_exit
# shellcheck disable=SC2034 # MAIL_DOMAIN, SMTP_URL, HTTP_BASE: for the tests
MAIL_DOMAIN=$TEST_ID.example
: "${CRONGUARD_BIN:=${CRONGUARD_BUILDDIR:-.}/cronguard}"
: "${CRONGUARD_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CRONGUARD_TESTENV:=$CRONGUARD_SRCDIR/scripts/testenv}"

HTTP_PORT=${CRONGUARD_TEST_HTTP_PORT:-}
HTTP_LOG=${CRONGUARD_TEST_HTTP_LOG:-/dev/null}
HTTP_BASE=http://127.0.0.1:$HTTP_PORT/$TEST_ID
SMTP_PORT=${CRONGUARD_TEST_SMTP_PORT:-}
SMTP_DIR=${CRONGUARD_TEST_SMTP_DIR:-/nonexistent}
SMTP_LOG=${CRONGUARD_TEST_SMTP_LOG:-/dev/null}
SMTP_URL=smtp://127.0.0.1:$SMTP_PORT

lib_cleanup()
{
	local rc=$? cmd LIB_AT_EXIT=
	set +e
	# Last registered first; read whole, so that no command reads the
	# rest as its stdin.
	[ -s "$LIB_AT_EXIT_FILE" ] &&
	    LIB_AT_EXIT="$(sed -n '1!G;h;$p' "$LIB_AT_EXIT_FILE")
"
	while [ -n "$LIB_AT_EXIT" ]; do
		cmd=${LIB_AT_EXIT%%
*}
		LIB_AT_EXIT=${LIB_AT_EXIT#*
}
		eval "$cmd"
	done
	[ -n "$TEST_DB" ] && mysql_admin "DROP DATABASE IF EXISTS \`$TEST_DB\`"
	if [ "$rc" -ne 0 ] && [ "${CRONGUARD_TEST_KEEP:-}" = 1 ]; then
		echo "kept $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# at_exit CMD: run the shell command CMD (one line) at exit, last
# registered first; from a case as well.
at_exit() { printf '%s\n' "$1" >> "$LIB_AT_EXIT_FILE"; }

# fail MSG: end the test (in a case: the case) as failed.
fail()
{
	echo "FAIL: $TEST_NAME${LIB_CASE:+ ($LIB_CASE)}: $*" >&2
	exit 1
}

# need_servers: exit 77 (skip) when no test servers were started, exit 1
# (fail) under CI=true; otherwise create the test database $TEST_DB.
need_servers()
{
	if [ "${CRONGUARD_TEST_SERVERS:-}" != 1 ]; then
		[ "${CI:-}" = true ] &&
		    fail "test servers not started, and CI=true needs them"
		echo "SKIP: test servers not started (use scripts/test," \
		    "or scripts/testenv run make check)"
		exit 77
	fi
	lib_create_db
}

# lib_create_db: (re)create the test database $TEST_DB.
lib_create_db()
{
	TEST_DB=test_$$
	mysql_admin "DROP DATABASE IF EXISTS \`$TEST_DB\`;
	    CREATE DATABASE \`$TEST_DB\` CHARACTER SET utf8mb4" ||
	    fail "cannot create database $TEST_DB"
}

# ---------------------------------------------------------------- cases
# Named cases, in the shape of git's test-lib.sh (doc/howto.md, "An
# integration test"):
#
#   test_expect_success [PREREQS] NAME BODY
#       run BODY (shell commands, one string) in a subshell under set -e
#       and print "ok N - NAME" or "not ok N - NAME"; the script goes on
#       after a failure.  What a case sets in variables ends with it: set
#       what later cases need before them (or keep it in files).  PREREQS
#       are names joined by commas (SERVERS,ROOT): a case whose
#       prerequisite is missing is skipped ("ok N # skip NAME (missing
#       P)"), but fails under CI=true when CI must have it: SERVERS, ROOT,
#       CRON and those named by test_ci_prereq.
#   test_done
#       print the plan and the counts and exit: 1 when a case failed, 77
#       when every case was skipped, else 0.
#   test_set_prereq NAME            NAME holds from now on
#   test_lazy_prereq NAME SCRIPT    NAME holds when SCRIPT succeeds (run
#                                   once, in a subshell, when first asked)
#   test_ci_prereq NAME             under CI=true a missing NAME fails
#   test_have_prereq NAME[,NAME...] whether each holds.  Built in: SERVERS
#                                   (the test servers are up; the first
#                                   ask creates $TEST_DB, so ask outside
#                                   case bodies, as PREREQS do), ROOT
#                                   (uid 0), CRON (cron_private_start can:
#                                   root, Debian's cron, unshare).  Any
#                                   other name is missing until set.

LIB_CASE=
LIB_NCASES=0
LIB_NFAILED=0
LIB_NSKIPPED=0
LIB_PREREQ_OK=' '
LIB_PREREQ_NO=' '
LIB_PREREQ_CI=' SERVERS ROOT CRON '

test_set_prereq()
{
	lib_prereq_name "$1"
	LIB_PREREQ_OK="$LIB_PREREQ_OK$1 "
}

test_ci_prereq()
{
	lib_prereq_name "$1"
	LIB_PREREQ_CI="$LIB_PREREQ_CI$1 "
}

test_lazy_prereq()
{
	lib_prereq_name "$1"
	eval "LIB_LAZY_$1=\$2"
}

# lib_prereq_name NAME: upper case letters, digits and _ only.
lib_prereq_name()
{
	case $1 in
	'' | *[!A-Z0-9_]*) fail "bad prerequisite name '$1'" ;;
	esac
}

# lib_prereq_check NAME: whether NAME holds, asked for the first time.
lib_prereq_check()
{
	local script
	case $1 in
	SERVERS)
		[ "${CRONGUARD_TEST_SERVERS:-}" = 1 ] || return 1
		lib_create_db
		;;
	ROOT) [ "$(id -u)" = 0 ] ;;
	CRON)
		[ "$(id -u)" = 0 ] && command -v cron > /dev/null &&
		    unshare --mount --propagation private true 2> /dev/null
		;;
	*)
		eval "script=\${LIB_LAZY_$1-}"
		[ -n "$script" ] && (eval "$script") > /dev/null 2>&1
		;;
	esac
}

test_have_prereq()
{
	local rest="$1," p
	while [ -n "$rest" ]; do
		p=${rest%%,*}
		rest=${rest#*,}
		lib_prereq_name "$p"
		case $LIB_PREREQ_OK in *" $p "*) continue ;; esac
		case $LIB_PREREQ_NO in *" $p "*) return 1 ;; esac
		if lib_prereq_check "$p"; then
			LIB_PREREQ_OK="$LIB_PREREQ_OK$p "
		else
			LIB_PREREQ_NO="$LIB_PREREQ_NO$p "
			return 1
		fi
	done
	return 0
}

# lib_ci_needs PREREQS: one of the missing PREREQS is one CI must have.
lib_ci_needs()
{
	local rest="$1," p
	while [ -n "$rest" ]; do
		p=${rest%%,*}
		rest=${rest#*,}
		case $LIB_PREREQ_NO in *" $p "*) ;; *) continue ;; esac
		case $LIB_PREREQ_CI in *" $p "*) return 0 ;; esac
	done
	return 1
}

test_expect_success()
{
	local prereq='' rc
	if [ $# -eq 3 ]; then
		prereq=$1
		shift
	fi
	[ $# -eq 2 ] || fail "usage: test_expect_success [PREREQS] NAME BODY"
	LIB_NCASES=$((LIB_NCASES + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		if [ "${CI:-}" = true ] && lib_ci_needs "$prereq"; then
			echo "FAIL: $TEST_NAME ($1): missing $prereq, and" \
			    "CI=true needs it" >&2
			echo "not ok $LIB_NCASES - $1"
			LIB_NFAILED=$((LIB_NFAILED + 1))
		else
			echo "ok $LIB_NCASES # skip $1 (missing $prereq)"
			LIB_NSKIPPED=$((LIB_NSKIPPED + 1))
		fi
		return 0
	fi
	echo "# case $LIB_NCASES: $1"
	set +e
	(
		set -e
		LIB_CASE=$1
		eval "$2"
	)
	rc=$?
	set -e
	if [ "$rc" -eq 0 ]; then
		echo "ok $LIB_NCASES - $1"
	else
		echo "not ok $LIB_NCASES - $1"
		LIB_NFAILED=$((LIB_NFAILED + 1))
	fi
}

test_done()
{
	local ran=$((LIB_NCASES - LIB_NSKIPPED))
	[ "$LIB_NCASES" -gt 0 ] || fail "test_done before any case"
	echo "1..$LIB_NCASES"
	echo "# $TEST_NAME: $((ran - LIB_NFAILED)) passed, $LIB_NFAILED" \
	    "failed, $LIB_NSKIPPED skipped"
	[ "$LIB_NFAILED" -eq 0 ] || exit 1
	[ "$ran" -gt 0 ] || exit 77
	exit 0
}

# mysql_q SQL: run SQL in $TEST_DB; prints rows tab-separated, no header,
# SQL NULL as the word NULL.  mysql_admin SQL: the same without a database.
mysql_admin()
{
	MYSQL_PWD=${CRONGUARD_TEST_DB_PASSWORD:-} mariadb --no-defaults \
	    --protocol=tcp -h "$CRONGUARD_TEST_DB_HOST" \
	    -P "$CRONGUARD_TEST_DB_PORT" -u "$CRONGUARD_TEST_DB_USER" \
	    --connect-timeout=10 -N -B -e "$1" ${2:+"$2"}
}
mysql_q() { mysql_admin "$1" "$TEST_DB"; }

# lib_pipeline TEXT: TEXT, with outbox.pipeline = $CRONGUARD_TEST_PIPELINE
# when that is set (t0465 reruns tests at another pipeline depth).
lib_pipeline()
{
	local n=${CRONGUARD_TEST_PIPELINE:-}
	case $n:$1 in
	:*)	printf '%s' "$1" ;;
	*"outbox = {"*)
		printf '%s' "$1" |
		    sed "0,/outbox = {/s//outbox = { pipeline = $n;/" ;;
	*)	printf '%s\noutbox = { pipeline = %s; };' "$1" "$n" ;;
	esac
}

# write_config FILE [TEXT]: a configuration whose database section points at
# the test server and $TEST_DB, followed by TEXT (more libconfig settings)
# and, unless TEXT names a runtime_dir, runtime_dir = "$TEST_TMP" on a last
# line of its own: the local flock files stay in the test's directory
# (cronguard's default, /tmp/cronguard-UID, would outlive the test).
write_config()
{
	local file=$1 password='' rundir=''
	[ -n "${CRONGUARD_TEST_DB_PASSWORD:-}" ] &&
	    password="password = \"$CRONGUARD_TEST_DB_PASSWORD\";"
	case ${2:-} in
	*runtime_dir*) ;;
	*) rundir="runtime_dir = \"$TEST_TMP\";" ;;
	esac
	(
		umask 077
		cat > "$file" <<-CONF
		database = {
		  host = "${CRONGUARD_TEST_DB_HOST:-127.0.0.1}";
		  port = ${CRONGUARD_TEST_DB_PORT:-3306};
		  user = "${CRONGUARD_TEST_DB_USER:-root}";
		  $password
		  name = "${TEST_DB:-test}";
		  connect_timeout = "5s";
		};
		$(lib_pipeline "${2:-}")
		$rundir
		CONF
	)
}

# cg ARGS...: cronguard with the test configuration.
cg() { "$CRONGUARD_BIN" -c "$CONF" "$@"; }

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq()
{
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# assert_exit CODE CMD [ARG...]: run CMD, stdout to $OUT, stderr to $ERR,
# and fail (showing both) unless it exits with CODE.
assert_exit()
{
	local want=$1 rc=0
	shift
	echo "+ $* (expect exit $want)"
	"$@" > "$OUT" 2> "$ERR" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "--- stdout:"; cat "$OUT"
		echo "--- stderr:"; cat "$ERR"
		fail "'$*' exited $rc, expected $want"
	fi
}

# assert_grep REGEX FILE: FILE (e.g. $OUT, $ERR) has a line matching REGEX.
assert_grep()
{
	grep -qE -- "$1" "$2" || {
		echo "--- $2:"; cat "$2"
		fail "no line matching '$1' in $2"
	}
}

# wait_for SECONDS CMD [ARG...]: poll CMD every 0.1 s until it succeeds;
# fail after SECONDS.
wait_for()
{
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	fail "timed out waiting for: $*"
}

# ---------------------------------------------------------------- HTTP
# The request log is JSON lines, see tests/testservers/http_server.py.
# PREFIX defaults to /$TEST_ID (everything under $HTTP_BASE).

lib_http_filter()
{
	"$LIB_PY" - "$HTTP_LOG" "$@" <<-'PY'
	import json, sys
	log, mode, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
	field = sys.argv[4] if len(sys.argv) > 4 else None
	n = 0
	with open(log, encoding="utf-8") as f:
	    for line in f:
	        rec = json.loads(line)
	        if not rec["path"].startswith(prefix):
	            continue
	        n += 1
	        if mode == "lines":
	            sys.stdout.write(line)
	        elif mode == "field":
	            v = rec
	            for part in field.split(".", 1):
	                v = v.get(part, "") if isinstance(v, dict) else ""
	            print(v)
	if mode == "count":
	    print(n)
	PY
}

# http_count [PREFIX]: number of requests whose path starts with PREFIX.
http_count() { lib_http_filter count "${1-/$TEST_ID}"; }
# http_requests [PREFIX]: their JSON lines.
http_requests() { lib_http_filter lines "${1-/$TEST_ID}"; }
# http_field FIELD [PREFIX]: one value per request; FIELD is a key (method,
# path, body, status, ...) or headers.NAME (lower case), e.g.
# http_field headers.webhook-id | sort -u | wc -l
http_field() { lib_http_filter field "${2-/$TEST_ID}" "$1"; }

# ---------------------------------------------------------------- SMTP
# Messages are $SMTP_DIR/msg-NNNNNN.eml with a .json envelope beside, see
# tests/testservers/smtp_server.py.  MATCH (default $TEST_ID) selects
# messages having a recipient that contains MATCH; "" selects all.

lib_smtp_filter()
{
	"$LIB_PY" - "$SMTP_DIR" "$@" <<-'PY'
	import glob, json, os, sys
	d, mode, match = sys.argv[1], sys.argv[2], sys.argv[3]
	found = []
	for j in sorted(glob.glob(os.path.join(d, "msg-*.json"))):
	    eml = j[:-5] + ".eml"
	    if not os.path.exists(eml):
	        continue
	    with open(j) as f:
	        env = json.load(f)
	    if match and not any(match in r for r in env["rcpt_tos"]):
	        continue
	    found.append((eml, env))
	if mode == "count":
	    print(len(found))
	elif mode == "files":
	    for eml, env in found:
	        print(eml)
	elif mode == "envelopes":
	    for eml, env in found:
	        print(json.dumps(env))
	elif mode == "conns":
	    print(len({env["conn"] for eml, env in found}))
	PY
}

# smtp_count [MATCH]: number of stored messages.
smtp_count() { lib_smtp_filter count "${1-$TEST_ID}"; }
# smtp_messages [MATCH]: their .eml paths, in arrival order.
smtp_messages() { lib_smtp_filter files "${1-$TEST_ID}"; }
# smtp_envelopes [MATCH]: their envelopes, one JSON object a line.
smtp_envelopes() { lib_smtp_filter envelopes "${1-$TEST_ID}"; }
# smtp_connections [MATCH]: how many distinct SMTP connections delivered
# the matching messages.  With "" on a private server: all connections
# opened (connect events in $SMTP_LOG), even those that sent nothing.
smtp_connections()
{
	local match="${1-$TEST_ID}"
	if [ -z "$match" ]; then
		grep -c '"event": "connect"' "$SMTP_LOG" || true
	else
		lib_smtp_filter conns "$match"
	fi
}

# ---------------------------------------------------------------- private

# smtp_private_start: start (or start again, on the same port) an SMTP
# server of this test's own, and point SMTP_PORT/SMTP_DIR/SMTP_LOG/SMTP_URL
# at it.  smtp_private_stop stops it (the port stays reserved for a later
# smtp_private_start).  Stopped at exit.  http_private_* likewise.
smtp_private_start()
{
	local st=$TEST_TMP/servers
	mkdir -p "$st"
	"$CRONGUARD_TESTENV" smtp-start "$st" || fail "private smtp did not start"
	SMTP_PORT=$(cat "$st/smtp.port")
	SMTP_DIR=$st/smtp/msg
	SMTP_LOG=$st/smtp/log
	# shellcheck disable=SC2034
	SMTP_URL=smtp://127.0.0.1:$SMTP_PORT
	at_exit "\"\$CRONGUARD_TESTENV\" smtp-stop \"$st\""
}
smtp_private_stop() { "$CRONGUARD_TESTENV" smtp-stop "$TEST_TMP/servers"; }

http_private_start()
{
	local st=$TEST_TMP/servers
	mkdir -p "$st"
	"$CRONGUARD_TESTENV" http-start "$st" || fail "private http did not start"
	HTTP_PORT=$(cat "$st/http.port")
	HTTP_LOG=$st/http/requests.jsonl
	# shellcheck disable=SC2034
	HTTP_BASE=http://127.0.0.1:$HTTP_PORT/$TEST_ID
	at_exit "\"\$CRONGUARD_TESTENV\" http-stop \"$st\""
}
http_private_stop() { "$CRONGUARD_TESTENV" http-stop "$TEST_TMP/servers"; }

# db_private_start: start (or start again, on the same port) a MariaDB
# server of this test's own, for tests that change global variables
# (max_connections, wait_timeout) or restart the server; point
# CRONGUARD_TEST_DB_HOST/PORT (so mysql_admin, mysql_q and write_config)
# at it and create $TEST_DB there.  db_private_stop stops it.  Stopped at
# exit.
db_private_start()
{
	local st=$TEST_TMP/servers
	mkdir -p "$st"
	# need_servers made $TEST_DB on the shared server: not used here.
	if [ -n "$TEST_DB" ] && [ ! -s "$st/db.port" ]; then
		mysql_admin "DROP DATABASE IF EXISTS \`$TEST_DB\`"
	fi
	# Once more from scratch if it failed: mariadb-install-db sometimes
	# fails on a loaded machine.
	"$CRONGUARD_TESTENV" db-start "$st" ||
	    { rm -rf "$st/mariadb" && "$CRONGUARD_TESTENV" db-start "$st"; } ||
	    fail "private mariadb did not start"
	CRONGUARD_TEST_DB_HOST=127.0.0.1
	CRONGUARD_TEST_DB_PORT=$(cat "$st/db.port")
	CRONGUARD_TEST_DB_USER=root
	CRONGUARD_TEST_DB_PASSWORD=
	grep -q 'db-stop' "$LIB_AT_EXIT_FILE" 2> /dev/null ||
	    at_exit "\"\$CRONGUARD_TESTENV\" db-stop \"$st\""
	if [ -n "$TEST_DB" ]; then
		mysql_admin "CREATE DATABASE IF NOT EXISTS \`$TEST_DB\`
		    CHARACTER SET utf8mb4"
	fi
}
db_private_stop() { "$CRONGUARD_TESTENV" db-stop "$TEST_TMP/servers"; }

# cron_private_start DIR: start Debian's cron of this test's own, in the
# foreground and known by its PID, in a mount namespace where /etc/cron.d
# is DIR and /etc/crontab, the users' crontabs and /run are empty: it runs
# the files in DIR (root's, mode 0644, names of letters, digits, - and _)
# and nothing else; a cron daemon the machine runs goes on, neither seeing
# DIR nor stopped.  Sets CRON_PID.  cron_private_stop stops it; stopped at
# exit.  Needs root and unshare(1) (test_have_prereq CRON).
cron_private_start()
{
	local empty=$TEST_TMP/cron-empty
	mkdir -p "$empty/crontabs"
	: > "$empty/crontab"
	unshare --mount --propagation private sh -c '
	    mount --bind "$1" /etc/cron.d &&
	    { [ ! -e /etc/crontab ] || mount --bind "$2/crontab" /etc/crontab; } &&
	    { [ ! -d /var/spool/cron/crontabs ] ||
	      mount --bind "$2/crontabs" /var/spool/cron/crontabs; } &&
	    mount -t tmpfs -o mode=0755 cronguard-test /run &&
	    exec cron -f -L 0' sh "$1" "$empty" \
	    < /dev/null > "$TEST_TMP/cron.out" 2>&1 &
	CRON_PID=$!
	echo "$CRON_PID" > "$TEST_TMP/cron.pid"
	at_exit "lib_stop_pid $CRON_PID"
	# Up when its process is cron and stays so for a moment.
	wait_for 30 lib_is_cron "$CRON_PID"
	sleep 1
	lib_is_cron "$CRON_PID" ||
	    { cat "$TEST_TMP/cron.out"; fail "private cron did not start"; }
}
cron_private_stop() { lib_stop_pid "$(cat "$TEST_TMP/cron.pid")"; }
lib_is_cron() { [ "$(cat "/proc/$1/comm" 2> /dev/null)" = cron ]; }

# lib_running PID: PID runs (a zombie does not: an orphan may be reaped
# late or never).  lib_stop_pid PID: SIGTERM, up to 10 s, then SIGKILL.
lib_running() { ps -o stat= -p "$1" 2> /dev/null | grep -qv '^Z'; }
lib_stop_pid()
{
	local n=100
	lib_running "$1" || return 0
	kill -TERM "$1" 2> /dev/null
	while [ "$n" -gt 0 ] && lib_running "$1"; do
		sleep 0.1
		n=$((n - 1))
	done
	kill -KILL "$1" 2> /dev/null || true
}

# user_copy: copy what another user needs to run cronguard (the binary,
# the migrations) into $TEST_TMP/user and point CRONGUARD_BIN and
# CRONGUARD_SQLDIR at the copies: the tree under test may be in a
# directory that user cannot enter (a clone in root's 0700 home).
# $TEST_TMP becomes 0711 (put what the user reads in it, readable);
# everything goes with it at exit.
user_copy()
{
	local dir=$TEST_TMP/user
	chmod 711 "$TEST_TMP"
	mkdir -p "$dir/sql"
	cp "$CRONGUARD_BIN" "$dir/cronguard" || fail "cannot copy $CRONGUARD_BIN"
	cp "${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"/*.sql "$dir/sql/" ||
	    fail "cannot copy the migrations"
	chmod -R a+rX "$dir"
	CRONGUARD_BIN=$dir/cronguard
	CRONGUARD_SQLDIR=$dir/sql
	export CRONGUARD_BIN CRONGUARD_SQLDIR
}
