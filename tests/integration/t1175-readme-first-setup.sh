#!/bin/sh
# README tested literally (2 of 3): "First setup", command by command as
# written, against a MariaDB of its own: the SQL of step 1 (the database,
# the user, the GRANTs) and its time-zone tables (the README's job names
# Europe/Berlin), the secret files of step 2, then step 4 (config check,
# db migrate, doctor green) as a user in the group that owns the secrets,
# with the README's Configuration block as the configuration file (0640
# root:GROUP, as the package installs it); the systemctl lines are replaced
# by what their units run (cronguard-job@.service: run JOB;
# cronguard-dispatch.service: outbox dispatch), the first run and the first
# dispatch; before step 4's db migrate, doctor's output compared in shape
# with the README's sample.  Rewritten, and only these: /etc/cronguard to a temporary
# directory, the database name app and the user 'cronguard'@'10.0.%' to
# throwaway ones, '...' to a password, hosts and URLs to the test servers,
# group cronguard to a throwaway group (as root; else this user's group),
# the job's command to one that exists here, the amqp channel dropped
# (no broker in this test; its configuration is checked by t1174), and
# the package's /run/cronguard (tmpfiles.d: 3775 root:cronguard) to a
# directory of the test's own, given as RUNTIME_DIRECTORY (else the run
# would leave /tmp/cronguard-UID behind).
# Cases: the blocks extracted; step 1; the time-zone tables; step 2; the
# configuration; doctor's sample; step 4; the first run and dispatch.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
smtp_private_start
# A server of its own, started as the test servers are (scripts/testenv,
# mariadbd from Debian's package): First setup may load its time-zone
# tables, which the shared server must not change under other tests.
db_private_start

DBU=cg1175_$$
PW=pw$$x
ETC=$TEST_TMP/etc/cronguard
at_exit "mysql_admin \"DROP USER IF EXISTS '$DBU'@'%'\""
if [ "$(id -u)" = 0 ]; then
	U=cgu1175_$$
	G=cgg1175_$$
	groupadd "$G" || fail "groupadd"
	at_exit "groupdel $G"
	useradd -M -N -g nogroup -G "$G" -s /bin/sh "$U" || fail "useradd"
	at_exit "userdel $U"
	as_user() { (cd / && runuser -u "$U" -- env PATH="$PATH" "$@"); }
	user_copy	# the tree may be in a directory $U cannot enter
else
	G=$(id -gn)
	as_user() { "$@"; }
fi
chmod 711 "$TEST_TMP"
mkdir -p "$ETC" "$TEST_TMP/bin" "$TEST_TMP/run"
chgrp "$G" "$TEST_TMP/run" && chmod 3775 "$TEST_TMP/run" ||
    fail "cannot make the runtime directory"
RUNTIME_DIRECTORY=$TEST_TMP/run
export RUNTIME_DIRECTORY
ln -s "$CRONGUARD_BIN" "$TEST_TMP/bin/cronguard"
PATH=$TEST_TMP/bin:$PATH
export PATH
CRONGUARD_CONFIG=$ETC/cronguard.conf
export CRONGUARD_CONFIG

extracted()
{
	"$LIB_PY" - "$CRONGUARD_SRCDIR/README.md" "$TEST_TMP" <<'PY' || fail "cannot extract First setup"
import re, sys
readme, tmp = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
setup = text.split("\n## First setup\n", 1)[1].split("\n## ", 1)[0]
conf = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```$", setup, re.S | re.M)
# Each block by what it does; a block this test cannot place fails it.
names = {}
for ind, tag, body in blocks:
    lines = [l[len(ind):] for l in body.split("\n")]
    if tag == "" and lines[0].startswith("DOCTOR "):
        open("%s/doctor.sample" % tmp, "w").write("\n".join(lines))
        names["doctor.sample"] = 1
        continue
    if tag not in ("sql", "sh"):
        sys.exit("First setup: a block this test does not know:\n" + body)
    if tag == "sql":
        name = "step1.sql"
    elif "mariadb-tzinfo-to-sql" in body:
        name = "tz.sh"
    elif "install -m" in body:
        name = "step2.sh"
    elif "cronguard config check" in body:
        name = "step4.sh"
    else:
        sys.exit("First setup: a block this test does not know:\n" + body)
    if name in names:
        sys.exit("First setup: two blocks for %s" % name)
    names[name] = 1
    open("%s/%s" % (tmp, name), "w").write("\n".join(lines))
for name in ("step1.sql", "step2.sh", "step4.sh", "doctor.sample"):
    if name not in names:
        sys.exit("First setup: no block for %s" % name)
cb = re.findall(r"^```libconfig\n(.*?)^```$", conf, re.S | re.M)
if not cb:
    sys.exit("Configuration: no libconfig block")
open("%s/readme.conf" % tmp, "w").write(cb[0])
PY
}
test_expect_success 'README.md'"'"'s First setup and Configuration blocks are extracted' \
    extracted

# --- step 1, the SQL as written (one statement a line or continued)
step1()
{
	sed -e "s/'cronguard'@'10\\.0\\.%'/'$DBU'@'%'/g" \
	    -e "s/IDENTIFIED BY '\\.\\.\\.'/IDENTIFIED BY '$PW'/" \
	    -e "s/\\bapp\\b/$TEST_DB/g" "$TEST_TMP/step1.sql" > "$TEST_TMP/step1.run"
	grep -q "CREATE DATABASE" "$TEST_TMP/step1.run" || fail "First setup creates no database"
	mysql_admin "DROP DATABASE \`$TEST_DB\`"
	mysql_admin "$(cat "$TEST_TMP/step1.run")" || fail "First setup step 1 failed"
}
test_expect_success 'step 1: the SQL as written' step1

# --- the time-zone tables, as written, into this test's own server
tz_tables()
{
	if [ -f "$TEST_TMP/tz.sh" ]; then
		sed "s#| mariadb mysql#| MYSQL_PWD= mariadb --no-defaults --protocol=tcp -h $CRONGUARD_TEST_DB_HOST -P $CRONGUARD_TEST_DB_PORT -u root mysql#" \
		    "$TEST_TMP/tz.sh" > "$TEST_TMP/tz.run"
		grep -q -- "--no-defaults" "$TEST_TMP/tz.run" || fail "the time-zone step changed: $(cat "$TEST_TMP/tz.sh")"
		sh -e "$TEST_TMP/tz.run" > "$TEST_TMP/tz.out" 2>&1 ||
		    { cat "$TEST_TMP/tz.out"; fail "loading the time-zone tables failed"; }
	fi
}
test_expect_success 'the time-zone tables as written' tz_tables

# --- step 2, the secrets as written
step2()
{
	sed -e "s|/etc/cronguard|$ETC|g" -e "s/-g cronguard/-g $G/g" \
	    -e "s/'%s' '\\.\\.\\.'/'%s' '$PW'/" \
	    -e "s/'whsec_\\.\\.\\.'/'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'/" \
	    "$TEST_TMP/step2.sh" > "$TEST_TMP/step2.run"
	if [ "$(id -u)" != 0 ]; then
		sed -i 's/ -o root//' "$TEST_TMP/step2.run"
	fi
	echo "--- step 2:"; cat "$TEST_TMP/step2.run"
	sh -e "$TEST_TMP/step2.run" || fail "First setup step 2 failed"
}
test_expect_success 'step 2: the secret files as written' step2

# --- the configuration: the README's Configuration block
configured()
{
	"$LIB_PY" - "$TEST_TMP/readme.conf" "$CONF" <<PY || fail "cannot adapt the configuration"
import re, sys
s = open(sys.argv[1]).read()
s = s.replace('host = "127.0.0.1"; port = 3306;',
              'host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;')
s = s.replace('user = "cronguard";', 'user = "$DBU";')
s = s.replace('name = "app";', 'name = "$TEST_DB";')
s = s.replace("/etc/cronguard", "$ETC")
s = s.replace('"/usr/local/bin/accrue-leave", "--today"', '"/bin/true"')
s = s.replace("https://hooks.example.com/billing", "$HTTP_BASE/billing")
s = s.replace("smtp://127.0.0.1:25", "$SMTP_URL")
s = re.sub(r"\n  events = \{.*?\};\n", "\n", s, flags=re.S)
for want in ("$CRONGUARD_TEST_DB_PORT", "$DBU", "$TEST_DB", "$HTTP_BASE", "$SMTP_URL", "/bin/true"):
    if want not in s:
        sys.exit("the README configuration changed: %s not substituted" % want)
open(sys.argv[2], "w").write(s)
PY
	install -m 0640 "$CONF" "$CRONGUARD_CONFIG"
	chgrp "$G" "$CRONGUARD_CONFIG"
}
test_expect_success 'the README'"'"'s Configuration block, installed 0640 in the group' \
    configured

# --- the README's doctor sample (step 4): doctor as the user before db
# migrate, with the webhook secret's file readable by others, compared
# line by line in shape: this test's paths and names as the README's
# (/etc/cronguard, app), every number as N.
doctor_sample()
{
	local rc
	chmod 644 "$ETC/billing.secret"
	rc=0
	as_user cronguard doctor > "$TEST_TMP/doctor.out" 2> "$ERR" < /dev/null || rc=$?
	chmod 640 "$ETC/billing.secret"
	cat "$TEST_TMP/doctor.out" "$ERR"
	assert_eq 2 "$rc" "doctor's exit status before db migrate"
	"$LIB_PY" - "$TEST_TMP/doctor.sample" "$TEST_TMP/doctor.out" "$ETC" "$TEST_DB" <<'PY' ||
import re, sys
sample, out, etc, db = sys.argv[1:]
def shape(line):
    line = line.replace(etc, "/etc/cronguard").replace(db + ".", "app.")
    return re.sub(r"\d+", "N", line)
want = [shape(l) for l in open(sample).read().strip("\n").split("\n")]
got = [shape(l) for l in open(out).read().strip("\n").split("\n")]
for i in range(max(len(want), len(got))):
    w = want[i] if i < len(want) else "(nothing)"
    g = got[i] if i < len(got) else "(nothing)"
    if w != g:
        print("line %d: README  %s\n        doctor  %s" % (i + 1, w, g))
sys.exit(want != got)
PY
	    fail "the README's doctor sample is not what doctor prints"
}
test_expect_success 'doctor before db migrate prints the README'"'"'s sample, in shape' \
    doctor_sample

# --- step 4 as written; each systemctl line runs what its unit runs
step4()
{
	local n line cmd job
	echo "--- step 4:"
	n=0
	while read -r line; do
		cmd=${line%%#*}
		case $cmd in
		"") continue ;;
		*cronguard-job@*.timer*)
			job=${cmd##*cronguard-job@}; job=${job%%.timer*}
			cmd="cronguard run $job" ;;
		*cronguard-dispatch.timer*)
			mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
		    VALUES ('mail', 'first.setup', JSON_OBJECT('to',
		    'kim@$MAIL_DOMAIN', 'subject', 'hello', 'text', 'first'))"
			cmd="cronguard outbox dispatch" ;;
		esac
		n=$((n + 1))
		# shellcheck disable=SC2086 # the README's words
		assert_exit 0 as_user $cmd < /dev/null
		case $cmd in
		*doctor*)
			cat "$OUT"
			if ! head -n 1 "$OUT" | grep -q '^DOCTOR OK - ' ||
			    tail -n +2 "$OUT" | grep -vq '^OK '; then
				fail "doctor is not green"
			fi ;;
		esac
	done < "$TEST_TMP/step4.sh"
	[ "$n" -ge 5 ] || fail "step 4 has only $n commands"
}
test_expect_success 'step 4 as written, each systemctl line as its unit runs it' \
    step4

first_run()
{
	assert_eq success "$(mysql_q "SELECT outcome FROM cronguard_runs WHERE job = 'leave-accrual'")" "the first run"
	assert_eq SENT "$(mysql_q "SELECT status FROM outbox_messages")" "the first dispatch"
	assert_eq 1 "$(smtp_count)" "mails delivered"
}
test_expect_success 'the first run succeeded and the first mail was delivered' \
    first_run

test_done
