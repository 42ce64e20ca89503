# shellcheck shell=sh
# tests/integration/nagios-lib.sh: sourced by t1202 and t1203 after lib.sh.
#
#   cg_subst_test FILE.in     FILE.in with the paths of this test: the
#                             binary under test and $CONF for the
#                             installed configuration
#   nagios_minimal_config DIR a nagios.cfg in DIR that includes the
#                             shipped etc/nagios/cronguard.cfg (as
#                             DIR/cronguard.cfg) and the few objects any
#                             site has (24x7, a contact, generic-service,
#                             host db1 in hostgroup cronguard-servers);
#                             checks run every NAGIOS_INTERVAL seconds
#                             (interval_length 1)

cg_subst_test()
{
	sed -e "s|@bindir@/cronguard|$CRONGUARD_BIN|g" \
	    -e "s|@sysconfdir@/cronguard/cronguard.conf|$CONF|g" \
	    -e "s|@pkgdatadir@|/usr/share/cronguard|g" "$1"
}

nagios_minimal_config()
{
	local d=$1 i=${NAGIOS_INTERVAL:-300}
	mkdir -p "$d/spool"
	cg_subst_test "$CRONGUARD_SRCDIR/etc/nagios/cronguard.cfg.in" > "$d/cronguard.cfg"
	cat > "$d/objects.cfg" <<-EOF
	define timeperiod {
		timeperiod_name	24x7
		alias		always
		monday		00:00-24:00
		tuesday		00:00-24:00
		wednesday	00:00-24:00
		thursday	00:00-24:00
		friday		00:00-24:00
		saturday	00:00-24:00
		sunday		00:00-24:00
	}
	define command {
		command_name	notify-none
		command_line	/bin/true
	}
	define contact {
		contact_name			ops
		service_notification_period	24x7
		host_notification_period	24x7
		service_notification_options	n
		host_notification_options	n
		service_notification_commands	notify-none
		host_notification_commands	notify-none
	}
	define service {
		name			generic-service
		check_period		24x7
		notification_period	24x7
		notification_interval	0
		contacts		ops
		register		0
	}
	define host {
		host_name		db1
		address			127.0.0.1
		hostgroups		cronguard-servers
		max_check_attempts	1
		check_period		24x7
		notification_period	24x7
		contacts		ops
	}
	EOF
	if [ "$i" != 300 ]; then
		# the test's short intervals, in seconds (interval_length 1)
		sed -i -e "s/^\tcheck_interval\t\t[0-9]*$/\tcheck_interval\t\t$i/" \
		    -e "s/^\tretry_interval\t\t[0-9]*$/\tretry_interval\t\t1/" \
		    -e "s/^\tmax_check_attempts\t[0-9]*$/\tmax_check_attempts\t1/" \
		    "$d/cronguard.cfg"
	fi
	cat > "$d/nagios.cfg" <<-EOF
	log_file=$d/nagios.log
	cfg_file=$d/objects.cfg
	cfg_file=$d/cronguard.cfg
	object_cache_file=$d/objects.cache
	precached_object_file=$d/objects.precache
	status_file=$d/status.dat
	status_update_interval=1
	temp_file=$d/nagios.tmp
	temp_path=$d
	lock_file=$d/nagios.lock
	check_result_path=$d/spool
	check_result_reaper_frequency=1
	state_retention_file=$d/retention.dat
	retain_state_information=0
	check_external_commands=0
	nagios_user=$(id -un)
	nagios_group=$(id -gn)
	interval_length=$([ "$i" = 300 ] && echo 60 || echo 1)
	max_service_check_spread=1
	max_host_check_spread=1
	service_inter_check_delay_method=n
	host_inter_check_delay_method=n
	enable_notifications=0
	illegal_macro_output_chars=\`~\$&|'"<>
	EOF
}
