#!/bin/sh
# jobs pause is fleet-wide: a pause made with host A's configuration is seen
# by host B's (same database, their own runtime directories), --all also
# covers a job configured only on B, --for expires by itself (database
# clock), resume ends it (and reports a job that was not paused); jobs ack
# keeps who and why; bad input is a usage error (64) with nothing written.
# Cases: setup; a pause on A; seen from B; --for; resume; both pauses;
# --all; ack; ack
# without a failed slot; bad input; a reason at the limit, with a newline.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
CONF_A=$TEST_TMP/a.conf
CONF_B=$TEST_TMP/b.conf
cga() { "$CRONGUARD_BIN" -c "$CONF_A" "$@"; }
cgb() { "$CRONGUARD_BIN" -c "$CONF_B" "$@"; }
# The pauses in effect (a resumed one stays, ended, for jobs check).
pauses() { mysql_q "SELECT COUNT(*) FROM cronguard_job_pauses
    WHERE until_at IS NULL OR until_at > NOW(6)"; }
acks() { mysql_q "SELECT COUNT(*) FROM cronguard_job_acks"; }
me="$(id -un)@$(hostname -s 2>/dev/null || hostname):[0-9]+"

setup()
{
	mkdir "$TEST_TMP/a" "$TEST_TMP/b"
	write_config "$CONF_A" "runtime_dir = \"$TEST_TMP/a\";
jobs = {
  accrual = { command = [ \"true\" ]; };
  report = { command = [ \"true\" ]; };
};"
	write_config "$CONF_B" "runtime_dir = \"$TEST_TMP/b\";
jobs = {
  accrual = { command = [ \"true\" ]; };
  report = { command = [ \"true\" ]; };
  only_b = { command = [ \"true\" ]; };
};"
	assert_exit 0 cga db migrate
}
test_expect_success 'setup: hosts A and B, one job only on B, db migrate' setup

# Paused on A, with options after the name as the synopsis has them.
paused_on_a()
{
	assert_exit 0 cga jobs pause accrual --for 1h --reason "ledger migration"
	assert_grep "^paused accrual by $me until [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$" "$OUT"
	assert_eq 1 "$(wc -l < "$OUT")" "pause prints one line"
	assert_eq "accrual	ledger migration	1" "$(mysql_q "SELECT job, reason,
    until_at BETWEEN NOW(6) + INTERVAL 59 MINUTE AND NOW(6) + INTERVAL 1 HOUR
    FROM cronguard_job_pauses")"
	mysql_q "SELECT paused_by FROM cronguard_job_pauses" | grep -qE "^$me$" ||
	    fail "paused_by is not user@host:pid: $(mysql_q 'SELECT paused_by FROM cronguard_job_pauses')"
}
test_expect_success 'a pause on A, the options after the name' paused_on_a

# Seen from B: under the job's row, the rest of the table as before.
seen_from_b()
{
	assert_exit 0 cgb jobs list
	assert_grep '^JOB +GUARD +LOCK +LAST RUN +OUTCOME +LAST SUCCESS +FENCE$' "$OUT"
	assert_grep "^accrual +named_lock +[^ ]+ +- +- +- +-$" "$OUT"
	assert_grep "^  paused by $me since [0-9-]{10} [0-9:]{8} until [0-9-]{10} [0-9:]{8}: ledger migration$" "$OUT"
	assert_eq 1 "$(grep -c '^  paused' "$OUT")" "only accrual is paused"
	assert_exit 0 cgb jobs list --format json
	/usr/bin/python3 -c 'import json, sys
d = {x["job"]: x for x in json.load(open(sys.argv[1]))}
p = d["accrual"]["paused"]
assert p["reason"] == "ledger migration" and p["until_at"] and p["paused_at"], p
assert p["all_jobs"] is False and "@" in p["paused_by"], p
assert d["report"]["paused"] is None and d["only_b"]["paused"] is None, d' "$OUT" ||
	    fail "jobs list json: $(cat "$OUT")"
}
test_expect_success 'seen from B: under the job'"'"'s row, and in JSON' \
    seen_from_b

# --for expires by itself, by the database clock.
expires()
{
	assert_exit 0 cgb jobs pause report --for 2s
	assert_grep "^paused report by $me until .* UTC$" "$OUT"
	assert_exit 0 cga jobs list
	assert_grep '^  paused by .* until .*[0-9]$' "$OUT"
	assert_eq 2 "$(grep -c '^  paused' "$OUT")" "accrual and report paused"
	sleep 2.5
	assert_exit 0 cga jobs list
	assert_eq 1 "$(grep -c '^  paused' "$OUT")" "report's pause expired"
}
test_expect_success 'a pause --for expires by itself, by the database clock' \
    expires

# Resume; a second resume is reported, not an error.
resumed()
{
	assert_exit 0 cgb jobs resume accrual
	assert_grep '^resumed accrual$' "$OUT"
	assert_exit 0 cga jobs resume accrual report
	assert_grep '^not paused: accrual, report$' "$OUT"
	assert_eq 0 "$(pauses)" "resume ends the rows"
	assert_exit 0 cga jobs list
	assert_eq 0 "$(grep -c '^  paused' "$OUT" || true)" "nothing paused"
}
test_expect_success 'resume; a second resume is reported, not an error' resumed

# A job's own pause and every job's at once: the one that holds longest
# is the job's (jobs list, jobs check --format json), whichever it is;
# the other jobs have every job's.
longest()
{
	assert_exit 0 cgb jobs pause accrual --reason own
	assert_exit 0 cgb jobs pause --all --for 1h --reason all
	assert_exit 0 cgb jobs list
	assert_grep "^  paused by $me since [0-9-]{10} [0-9:]{8} until resumed: own$" "$OUT"
	assert_eq 2 "$(grep -cE '^  paused \(every job\) by .* until [0-9-]{10} [0-9:]{8}: all$' "$OUT")" "the others: every job's"
	assert_exit 0 cgb jobs check --format json
	/usr/bin/python3 -c 'import json, sys
d = {x["job"]: x for x in json.load(open(sys.argv[1]))["jobs"]}
assert d["accrual"]["paused"]["all_jobs"] is False, d
assert d["only_b"]["paused"]["all_jobs"] is True, d' "$OUT" || fail "json: $(cat "$OUT")"
	assert_exit 0 cgb jobs resume --all
	assert_exit 0 cgb jobs pause accrual --for 1h --reason own
	assert_exit 0 cgb jobs pause --all --reason all
	assert_exit 0 cgb jobs list
	assert_eq 3 "$(grep -cE '^  paused \(every job\) by .* until resumed: all$' "$OUT")" "every job's holds longest"
	assert_exit 0 cgb jobs resume --all
}
test_expect_success 'both pauses: the one that holds longest' longest

# --all from A pauses only_b, configured only on B; a job's own resume
# does not end it; resume --all does, every row with it.
all_jobs()
{
	assert_exit 0 cga jobs pause --all --reason "freeze"
	assert_grep "^paused every job by $me until resumed$" "$OUT"
	assert_eq "*" "$(mysql_q "SELECT job FROM cronguard_job_pauses
    WHERE until_at IS NULL OR until_at > NOW(6)")"
	# ...and the single jobs' ended pauses stay, for jobs check.
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM cronguard_job_pauses
    WHERE job IN ('accrual', 'report') AND until_at <= NOW(6)")" "pause history kept"
	assert_exit 0 cgb jobs list
	assert_eq 3 "$(grep -cE "^  paused \(every job\) by $me since .* until resumed: freeze$" "$OUT")" "every job of B paused"
	assert_exit 0 cgb jobs list --format json
	/usr/bin/python3 -c 'import json, sys
d = {x["job"]: x for x in json.load(open(sys.argv[1]))}
assert d["only_b"]["paused"]["all_jobs"] is True, d
assert d["only_b"]["paused"]["until_at"] is None, d' "$OUT" || fail "json: $(cat "$OUT")"
	assert_exit 0 cgb jobs pause only_b --for 1h
	assert_exit 0 cgb jobs resume only_b
	assert_grep "^resumed only_b; every job stays paused by $me \(jobs resume --all\)$" "$OUT"
	assert_exit 0 cgb jobs list
	assert_grep '^  paused \(every job\)' "$OUT"
	assert_exit 0 cga jobs pause accrual
	assert_exit 0 cga jobs resume --all
	assert_grep '^resumed every job \(2 pauses ended\)$' "$OUT"
	assert_eq 0 "$(pauses)" "resume --all ends every row"
	assert_exit 0 cga jobs resume --all
	assert_grep '^resumed every job \(none was paused\)$' "$OUT"
}
test_expect_success '--all covers a job only on B; only resume --all ends it' \
    all_jobs

# ack: the latest failed slot by default, or --slot as a local time (the
# server's zone, UTC here: these jobs have no timezone) or RFC 3339.
acked()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
    outcome, exit_status, slot) VALUES
    ('accrual', 'a', 1, NOW(6), NOW(6), 'failure', 1, '2026-11-30 01:30:00'),
    ('accrual', 'a', 2, NOW(6), NOW(6), 'failure', 1, '2026-12-01 01:30:00'),
    ('accrual', 'a', 3, NOW(6), NULL, 'running', NULL, '2026-12-02 01:30:00'),
    ('report', 'a', 4, NOW(6), NOW(6), 'success', 0, '2026-12-01 01:30:00')"
	assert_exit 0 cgb jobs ack accrual --reason "bank holiday, rerun by hand"
	assert_grep "^acknowledged accrual slot 2026-12-01T01:30:00\+00:00 by $me$" "$OUT"
	assert_exit 0 cga jobs ack --slot 2026-11-30T02:30:00+01:00 --reason "known" accrual
	assert_grep '^acknowledged accrual slot 2026-11-30T01:30:00\+00:00 by ' "$OUT"
	assert_exit 0 cga jobs ack accrual --slot "2026-11-29 23:15" --reason "x"
	assert_grep '^acknowledged accrual slot 2026-11-29T23:15:00\+00:00 by ' "$OUT"
	assert_eq "2026-11-29 23:15:00.000000	x
2026-11-30 01:30:00.000000	known
2026-12-01 01:30:00.000000	bank holiday, rerun by hand" "$(mysql_q "SELECT slot, reason FROM cronguard_job_acks WHERE job = 'accrual' ORDER BY slot")"
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM cronguard_job_acks WHERE acked_by REGEXP '^$me\$' AND acked_at > NOW(6) - INTERVAL 1 MINUTE")" "acked_by, acked_at"
}
test_expect_success 'ack: the latest failed slot, or --slot local or RFC 3339' \
    acked

# report has no failed slot: 65, nothing written.
nothing_to_ack()
{
	assert_exit 65 cga jobs ack report --reason "nothing to ack"
	assert_grep 'no slot of report has a failed run \(give --slot\)' "$ERR"
}
test_expect_success 'ack of a job with no failed slot: 65, nothing written' \
    nothing_to_ack

# Bad input: 64, the reason on stderr, nothing written.
# check_bad WANT CMD...: CMD exits 64 with WANT on stderr, nothing written.
check_bad()
{
	local want=$1
	shift
	assert_exit 64 "$@"
	assert_grep "$want" "$ERR"
	[ ! -s "$OUT" ] || fail "stdout not empty: $(cat "$OUT")"
	assert_eq 0 "$(pauses)" "no pause written by: $*"
	assert_eq "$n_acks" "$(acks)" "no ack written by: $*"
}
bad_input()
{
	local long n_acks
	long=$(/usr/bin/python3 -c 'print("r" * 1025)')
	n_acks=$(acks)
	check_bad '^cronguard: no job "nosuch" in .*a.conf$' cga jobs pause accrual nosuch
	check_bad '^cronguard: no job "only_b" in ' cga jobs pause only_b
	check_bad '^cronguard: no job "nosuch" in ' cga jobs resume nosuch
	check_bad '^cronguard: no job "nosuch" in ' cga jobs ack nosuch --reason x
	check_bad '^cronguard: --for: -1s: ' cga jobs pause accrual --for -1s
	check_bad '^cronguard: --for: 0: must be more than 0$' cga jobs pause accrual --for 0
	check_bad '^cronguard: --for: soon: ' cga jobs pause accrual --for soon
	check_bad '^cronguard: --reason is 1025 bytes, more than the limit of 1024$' cga jobs pause accrual --reason "$long"
	check_bad '^cronguard: --reason is 1025 bytes, more than the limit of 1024$' cga jobs ack accrual --reason "$long"
	check_bad '^cronguard: --reason is required$' cga jobs ack accrual
	check_bad '^cronguard: --reason is required$' cga jobs ack accrual --slot "2026-12-01 01:30"
	check_bad '^cronguard: --slot: bad time .2026-13-01 01:30.: expected' cga jobs ack accrual --slot "2026-13-01 01:30" --reason x
	check_bad '^cronguard: --slot: bad time' cga jobs ack accrual --slot "2026-02-30 01:30" --reason x
	check_bad '^cronguard: --all and job names exclude each other$' cga jobs pause --all accrual
	check_bad '^cronguard: no job named \(or --all\)$' cga jobs pause --for 1h
	check_bad '^cronguard: no job named \(or --all\)$' cga jobs resume
	check_bad '^cronguard: missing argument$' cga jobs ack --reason x
}
test_expect_success 'bad input: 64, the reason on stderr, nothing written' \
    bad_input

# At the limit exactly: accepted.
limit()
{
	assert_exit 0 cga jobs pause accrual --reason "$(/usr/bin/python3 -c 'print("r" * 1024)')"
	assert_eq 1024 "$(mysql_q "SELECT LENGTH(reason) FROM cronguard_job_pauses WHERE job = 'accrual'")"
	# A newline in a reason is kept in the database, shown as \n in the
	# listing (cronguard(1), OUTPUT).
	assert_exit 0 cga jobs pause report --reason "$(printf 'line one\nline two')"
	assert_exit 0 cga jobs list
	assert_grep '^  paused by .*: line one\\nline two$' "$OUT"
	assert_eq 2 "$(mysql_q "SELECT LENGTH(reason) - LENGTH(REPLACE(reason, '\n', '')) + 1 FROM cronguard_job_pauses WHERE job = 'report'")" "reason lines"
}
test_expect_success 'a reason at the limit accepted; a newline kept, listed as \n' \
    limit

test_done
