#!/bin/sh
# One rule for the configuration and the secret files (cronguard.conf(5),
# SECRETS), applied alike by config check, doctor and run: the documented
# setup (secrets 0640 root:GROUP, the user in GROUP) is green in doctor and
# runs; a configuration others or the group can write, or a secret file
# writable by anyone but its owner or readable by others, is refused with
# exit 78 by every command.  Runs the user part as a throwaway user in a
# throwaway group when root (CI); otherwise as this user with its own group.
# Cases: setup; the documented setup; the configuration writable; the
# password file writable or readable; back to 0640.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

DB_USER=cg1170_$$
DB_PASS=pw$$
if [ "$(id -u)" = 0 ]; then
	U=cgu1170_$$
	G=cgg1170_$$
	groupadd "$G" || fail "groupadd"
	at_exit "groupdel $G"
	useradd -M -N -g nogroup -G "$G" -s /bin/sh "$U" || fail "useradd"
	at_exit "userdel $U"
	as_user() { (cd / && runuser -u "$U" -- "$@"); }
	user_copy	# the tree may be in a directory $U cannot enter
else
	G=$(id -gn)
	as_user() { "$@"; }
fi
ucg() { as_user "$CRONGUARD_BIN" -c "$CONF" "$@"; }

setup()
{
	at_exit "mysql_admin \"DROP USER IF EXISTS '$DB_USER'@'%'\""
	mysql_admin "CREATE USER '$DB_USER'@'%' IDENTIFIED BY '$DB_PASS';
	    GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON \`$TEST_DB\`.* TO '$DB_USER'@'%'" ||
	    fail "cannot create $DB_USER"
	write_config "$TEST_TMP/admin.conf"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/admin.conf" db migrate

	chmod 711 "$TEST_TMP"
	RUN=$TEST_TMP/run
	mkdir -m 777 "$RUN"
	chmod +t "$RUN"
	printf '%s\n' "$DB_PASS" > "$TEST_TMP/db.password"
	chgrp "$G" "$TEST_TMP/db.password"
	chmod 640 "$TEST_TMP/db.password"
	cat > "$CONF" <<EOF
runtime_dir = "$RUN";
database = {
  host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;
  user = "$DB_USER"; password_file = "$TEST_TMP/db.password";
  name = "$TEST_DB"; connect_timeout = "5s";
};
jobs = { hello = { command = [ "/bin/true" ]; }; };
EOF
	chgrp "$G" "$CONF"
	chmod 640 "$CONF"
}
test_expect_success 'setup: a database user, the files 0640 in the group, db migrate' \
    setup

# --- the documented setup: green everywhere
documented()
{
	assert_exit 0 ucg config check
	assert_exit 0 ucg doctor
	assert_grep "^OK config_file: $CONF mode 0640\$" "$OUT"
	assert_grep "^OK secret_file: $TEST_TMP/db.password mode 0640\$" "$OUT"
	assert_exit 0 ucg run hello
}
test_expect_success 'the documented setup: config check, doctor and run are green' \
    documented

# --- the configuration writable by its group or by others: 78 everywhere
conf_writable()
{
	local mode c
	for mode in 660 642; do
		chmod "$mode" "$CONF"
		for c in "config check" "doctor" "run hello" "jobs list"; do
			# shellcheck disable=SC2086 # $c is a command and its arguments
			assert_exit 78 ucg $c
			assert_grep "$CONF is writable by (its group|others) \\(mode 0$mode\\) \\(chmod go-w $CONF\\)" "$ERR"
		done
	done
	chmod 640 "$CONF"
}
test_expect_success 'the configuration writable by its group or others: 78 everywhere' \
    conf_writable

# --- the password file writable by group or others, or readable by others
secret_mode()
{
	local mode want c
	for mode in 660 642 644; do
		chmod "$mode" "$TEST_TMP/db.password"
		case $mode in
		644)	want="is readable by others \\(mode 0644\\) \\(chmod o-r " ;;
		*)	want="is writable by (its group|others) \\(mode 0$mode\\) \\(chmod go-w " ;;
		esac
		for c in "config check" "doctor" "run hello"; do
			# shellcheck disable=SC2086
			assert_exit 78 cg $c
			assert_grep "database\\.password_file: $TEST_TMP/db\\.password $want" "$ERR"
		done
	done
}
test_expect_success 'the password file writable, or readable by others: 78 everywhere' \
    secret_mode

restored()
{
	chmod 640 "$TEST_TMP/db.password"
	assert_exit 0 ucg run hello
}
test_expect_success 'back to 0640: run runs' restored

test_done
