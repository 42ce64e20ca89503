# /etc/cron.d/cronguard: cronguard from cron(8).  Everything is commented
# out: uncomment what you use (or use the systemd timers instead:
# cronguard-dispatch.timer, cronguard-job@NAME.timer).  A full example with
# explanations: /usr/share/doc/cronguard/examples/crontab.example.
# Jobs run as the application's user ("app" here), which must be in group
# cronguard; the relay and the monitoring run as cronguard.
SHELL=/bin/sh
PATH=/usr/bin:/bin
CRONGUARD_CONFIG=/etc/cronguard/cronguard.conf

# m  h  dom mon dow  user       command
#30  1  *   *   *    app        cronguard run leave-accrual
#*   *  *   *   *    cronguard  cronguard outbox dispatch --for 55s
#*   *  *   *   *    cronguard  cronguard jobs check --metrics-file /var/lib/cronguard/metrics/cronguard_jobs.prom > /dev/null
#*   *  *   *   *    cronguard  cronguard outbox check --metrics-file /var/lib/cronguard/metrics/cronguard_outbox.prom > /dev/null
#17  3  *   *   *    cronguard  cronguard outbox purge --sent-before 7d --failed-before 30d
# The status page (cronguard(1), status), served by
# /usr/share/doc/cronguard/examples/nginx-status.conf:
#*   *  *   *   *    cronguard  cronguard status --html /var/lib/cronguard/status/index.html
