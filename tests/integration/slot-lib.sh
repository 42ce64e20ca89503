# shellcheck shell=sh
# Helpers of the tests of a job "j" run every minute (t106x): sourced after
# lib.sh.

# slot N: the Nth minute before the current one, UTC.
slot()
{
	mysql_q "SELECT DATE_FORMAT(FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW())
	    / 60) * 60 - 60 * $1), '%Y-%m-%d %H:%i:00')"
}
# run_of N OUTCOME [JOB]: a recorded run of slot N, started at its time.
run_of()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, slot, slot_kind) VALUES ('${3:-j}', 'h', 1,
	    '$(slot "$1")', '$(slot "$1")', '$2', '$(slot "$1")', 'schedule')"
}
# Stay clear of a minute's end: the slots must not move under a case.
early_in_minute()
{
	while [ "$(mysql_q "SELECT SECOND(NOW()) > 45")" = 1 ]; do
		sleep 1
	done
}
