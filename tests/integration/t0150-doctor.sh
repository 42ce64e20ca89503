#!/bin/sh
# doctor: one line per check, the exit code the worst status.  Each check
# is shown failing against the real server: migrations pending and changed,
# the claim index dropped, a wait_timeout below a job's heartbeat, a
# SERIALIZABLE session, a world-readable or group-writable secret file,
# an empty one or a group-writable configuration (refused, 78), a stopped
# SMTP server, and the database unreachable (exit 3).
# Cases: a fresh database; migrated; JSON; the claim index dropped; a
# changed migration; wait_timeout; SERIALIZABLE; file modes; the SMTP
# server stopped; the database unreachable.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
smtp_private_start
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

secret=$TEST_TMP/smtp.pw
(umask 077 && printf 'pw\n' > "$secret")
# conf [OPTION_FILE_LINE]: the test configuration, a guarded job with a 30 s
# heartbeat, an SMTP channel and an HTTP channel with a signing secret
# file; with an argument, an option file whose [client] group holds that
# line.  The channels' own checks in depth: t0151.
conf()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"/bin/true\" ]; heartbeat = \"30s\"; }; };
channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\";
  from = \"cg@example.com\"; };
  hooks = { type = \"http\"; url = \"$HTTP_BASE/hooks\";
    signing_secret_file = \"$secret\"; }; };"
	if [ -n "${1:-}" ]; then
		printf '[client]\n%s\n' "$1" > "$TEST_TMP/my.cnf"
		sed -i "s|^database = {|database = { option_file = \"$TEST_TMP/my.cnf\";|" "$CONF"
	fi
}
# the verdict first (t1251), then every line is STATUS name: finding[;
# fix: ...], and a non-OK line has a fix
lines_well_formed()
{
	if ! head -n 1 "$OUT" |
	    grep -qE '^DOCTOR (OK|WARNING|CRITICAL|UNKNOWN) - .+'; then
		cat "$OUT"
		fail "the first line of doctor is not its verdict"
	fi
	if tail -n +2 "$OUT" |
	    grep -vqE '^(OK|WARNING|CRITICAL|UNKNOWN) [a-z_]+: .+'; then
		cat "$OUT"
		fail "a line of doctor is not STATUS name: finding"
	fi
	if grep -E '^(WARNING|CRITICAL|UNKNOWN) ' "$OUT" | grep -vq '; fix: .'; then
		cat "$OUT"
		fail "a failing check without a fix"
	fi
}

# --- fresh database: migrations pending, no claim table
fresh()
{
	conf
	assert_exit 2 cg doctor
	lines_well_formed
	assert_grep '^CRITICAL migrations: [0-9]+ migration\(s\) pending; fix: cronguard db migrate$' "$OUT"
	assert_grep '^CRITICAL claim_index: EXPLAIN of the claim failed: .*; fix: cronguard db migrate' "$OUT"
}
test_expect_success 'a fresh database: migrations pending, no claim table' fresh

# --- migrated: everything OK
migrated()
{
	assert_exit 0 cg db migrate
	assert_exit 0 cg doctor
	lines_well_formed
	assert_grep '^OK server: (MariaDB|MySQL) [0-9]+\.[0-9]+' "$OUT"
	assert_grep '^OK skip_locked: ' "$OUT"
	assert_grep '^OK claim_index: the claim ranges over ix_outbox_due' "$OUT"
	assert_grep '^OK wait_timeout: ' "$OUT"
	assert_grep '^OK wsrep: ' "$OUT"
	assert_grep '^OK isolation: transaction_isolation REPEATABLE-READ$' "$OUT"
	assert_grep '^OK clock: clocks within [0-9]+ ms' "$OUT"
	assert_grep '^OK migrations: ' "$OUT"
	assert_grep "^OK config_file: $CONF mode 0600\$" "$OUT"
	assert_grep "^OK secret_file: $secret mode 0600\$" "$OUT"
	assert_grep "^OK channel_connect: mail: connected to 127\\.0\\.0\\.1 port $SMTP_PORT in [0-9]+ ms\$" "$OUT"
	assert_grep '^OK channel_smtp: mail: EHLO answered.*; nothing sent$' "$OUT"
	assert_grep '^OK channel_http: hooks: HEAD answered 200: reachable$' "$OUT"
}
test_expect_success 'migrated: every check OK' migrated

# --- JSON: the same checks, parsed
json_checks()
{
	assert_exit 0 cg doctor --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "doctor --format json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "OK", d
names = [c["name"] for c in d["checks"]]
for n in ("server", "skip_locked", "claim_index", "wait_timeout", "wsrep",
          "isolation", "clock", "migrations", "config_file", "secret_file",
          "channel_dns", "channel_connect", "channel_smtp", "channel_http"):
    assert n in names, (n, names)
assert all(c["status"] == "OK" and c["fix"] is None for c in d["checks"]), d
PY
	assert_exit 64 cg doctor --format prometheus
	assert_exit 64 cg doctor extra
}
test_expect_success 'JSON carries the same checks; another format or an argument: 64' \
    json_checks

# --- the claim index dropped: CRITICAL, then restored
claim_index()
{
	mysql_q "DROP INDEX ix_outbox_due ON outbox_messages"
	assert_exit 2 cg doctor
	assert_grep "^CRITICAL claim_index: EXPLAIN of the claim failed: .*ix_outbox_due.*; fix: " "$OUT"
	assert_exit 2 cg doctor --format json
	"$LIB_PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "CRITICAL", d
c = [c for c in d["checks"] if c["name"] == "claim_index"][0]
assert c["status"] == "CRITICAL" and c["fix"], c' "$OUT" || fail "json CRITICAL"
	mysql_q "ALTER TABLE outbox_messages ADD KEY ix_outbox_due (status, next_attempt_at)"
	assert_exit 0 cg doctor
}
test_expect_success 'the claim index dropped: CRITICAL, in JSON too; restored: OK' \
    claim_index

# --- a changed applied migration
changed_migration()
{
	mysql_q "UPDATE cronguard_schema SET checksum = REPEAT('0', 64) WHERE version = 1"
	assert_exit 2 cg doctor
	assert_grep '^CRITICAL migrations: 1 applied migration\(s\) changed, 0 without a file; fix: ' "$OUT"
	mysql_q "UPDATE cronguard_schema SET checksum = '$(sha256sum "$CRONGUARD_SQLDIR/001_schema.sql" | cut -c1-64)' WHERE version = 1"
}
test_expect_success 'a changed applied migration: CRITICAL' changed_migration

# --- wait_timeout below the job's heartbeat (this session only)
wait_timeout()
{
	conf 'init-command=SET SESSION wait_timeout = 20'
	assert_exit 1 cg doctor
	lines_well_formed
	assert_grep '^WARNING wait_timeout: job nightly: heartbeat 30s is not below wait_timeout 20s: .*; fix: raise wait_timeout' "$OUT"
}
test_expect_success 'wait_timeout below a job'"'"'s heartbeat: WARNING' \
    wait_timeout

# --- a SERIALIZABLE session
serializable()
{
	conf 'init-command=SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE'
	assert_exit 1 cg doctor
	assert_grep '^WARNING isolation: transaction_isolation SERIALIZABLE; fix: ' "$OUT"
	conf
}
test_expect_success 'a SERIALIZABLE session: WARNING' serializable

# --- secret and configuration file permissions: the one rule that loading
# applies too (cronguard.conf(5), FILES): group-readable secrets are fine,
# readable by others or writable by anyone but the owner is refused
file_modes()
{
	chmod 640 "$secret"
	assert_exit 0 cg doctor
	assert_grep "^OK secret_file: $secret mode 0640\$" "$OUT"
	chmod 644 "$secret"
	assert_exit 2 cg doctor
	assert_grep "^CRITICAL secret_file: $secret is readable by others \\(mode 0644\\); fix: chmod o-r $secret\$" "$OUT"
	chmod 660 "$secret"
	assert_exit 2 cg doctor
	assert_grep "^CRITICAL secret_file: $secret is writable by its group \\(mode 0660\\); fix: chmod go-w $secret\$" "$OUT"
	# An empty secret file is there but unusable: a configuration error (78),
	# as for config check (t1252)
	: > "$secret"
	chmod 640 "$secret"
	assert_exit 78 cg doctor
	assert_grep "signing_secret_file: $secret is empty \\(write the secret into it\\)\$" "$ERR"
	printf 'pw\n' > "$secret"
	chmod 600 "$secret"
	# A configuration others can change is not loaded at all: exit 78
	chmod 620 "$CONF"
	assert_exit 78 cg doctor
	assert_grep "$CONF is writable by its group \\(mode 0620\\) \\(chmod go-w $CONF\\)" "$ERR"
	chmod 600 "$CONF"
	assert_exit 0 cg doctor
}
test_expect_success 'secret and configuration file modes: the rule loading applies' \
    file_modes

# --- the SMTP server stopped: CRITICAL; started again: OK
smtp_stopped()
{
	smtp_private_stop
	assert_exit 2 cg doctor
	lines_well_formed
	assert_grep "^CRITICAL channel_connect: mail: cannot connect to 127\\.0\\.0\\.1 port $SMTP_PORT: .*; fix: start the server, or correct channels\\.mail\\.url\$" "$OUT"
	assert_grep '^OK channel_dns: mail: ' "$OUT"
	if grep -q '^[A-Z]* channel_smtp: mail:' "$OUT"; then
		fail "a stage after the failed connect was reported"
	fi
	smtp_private_start
	assert_exit 0 cg doctor
}
test_expect_success 'the SMTP server stopped: CRITICAL; started again: OK' \
    smtp_stopped

# --- the database unreachable: exit 3, the file checks still run
unreachable()
{
	local closed
	closed=$("$LIB_PY" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
	sed -i "s|^  port = .*|  port = $closed;|" "$CONF"
	chmod 644 "$secret"
	assert_exit 3 cg doctor
	lines_well_formed
	assert_grep "^UNKNOWN database: .*127\\.0\\.0\\.1:$closed.*; fix: " "$OUT"
	assert_grep "^CRITICAL secret_file: " "$OUT"
	chmod 600 "$secret"
}
test_expect_success 'the database unreachable: exit 3, the file checks still run' \
    unreachable

test_done
