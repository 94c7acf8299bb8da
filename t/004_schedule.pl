# t/004_schedule.pl: pg_cron drives a run to its end.
#
# backfill_schedule(run, schedule, tasks_per_tick) makes a pg_cron job whose
# command is one CALL backfill_run(run, tasks_per_tick), alone, so that the
# procedure can commit after every task inside the job.  A run begun by hand
# (two of its three tasks) is scheduled and left to pg_cron: a tick runs the
# last task and finishes the run; the job is parked on a schedule that never
# comes (31 February), not removed: pg_cron cancels a tick whose job is removed
# or deactivated while it runs, and records it as failed.  Every tick is
# recorded as succeeded, and backfill_progress.cron_status says so.  A failed
# run parks its job too; scheduled again after a retry, the parked job goes.  The data then fingerprints as a
# twin backfilled by hand.  Pausing a scheduled run removes its job too, and in
# a database other than pg_cron's (cron.database_name) backfill_schedule fails with 42704,
# naming pg_cron's database and the call that schedules the run from there.
#
# A second cluster whose pg_cron cannot start a job (no background workers,
# and no TCP address for its libpq connection to localhost): backfill_schedule
# warns at once, and after a tick backfill_progress shows the job's failure
# while the run is still planned.
#
# pg_cron 1.4 (Debian's postgresql-15-cron) schedules by the minute at best
# ('* * * * *'): the test waits for the next minute's tick, up to a minute (both
# clusters wait for the same one).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('cron');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 20
});
$node->start;

# pg_cron without background workers, on a server that listens on a Unix socket only
my $noconn = PostgreSQL::Test::Cluster->new('cron_noconn');
$noconn->init;
$noconn->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = off
listen_addresses = ''
});
$noconn->start;
$noconn->safe_psql('postgres', q{
	CREATE EXTENSION pg_cron;
	CREATE EXTENSION backfill;
	CREATE TABLE fct (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2))
		PARTITION BY RANGE (order_date);
	CREATE TABLE fct_0311 PARTITION OF fct FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
	INSERT INTO fct SELECT g, '2026-03-11', g FROM generate_series(1, 10) g;
});
my $noconn_run = $noconn->safe_psql('postgres',
	q{SELECT backfill_plan('fct', '2026-03-11', '2026-03-12', $q$SELECT order_id, order_date, revenue + 1 AS revenue FROM fct_0311 WHERE order_date >= $1 AND order_date < $2$q$)});
{
	my ($ret, $out, $err) = $noconn->psql('postgres', "SELECT backfill_schedule($noconn_run, '* * * * *', 2)");
	is($ret, 0, 'a run is scheduled where pg_cron cannot connect');
	like($err, qr/WARNING:  pg_cron cannot start the job of run $noconn_run: it connects to cron.host = localhost over TCP, and this server listens on no TCP address/,
		'and backfill_schedule warns that pg_cron cannot start its job');
}

$node->safe_psql('postgres', q{
	CREATE EXTENSION pg_cron;
	CREATE EXTENSION backfill;
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
	INSERT INTO orders SELECT g, date '2026-03-10' + (g % 4), g % 500, g % 11 = 0
	FROM generate_series(1, 8000) g;
});

# fct_0310 .. fct_0313, filled by the buggy model (refunds counted as revenue)
sub make_fct
{
	my ($db, $name) = @_;
	my $sql = "CREATE TABLE $name (order_id bigint NOT NULL, order_date date NOT NULL,"
	  . " revenue numeric(12,2)) PARTITION BY RANGE (order_date);\n";
	for my $i (0 .. 3)
	{
		$sql .= sprintf(
			"CREATE TABLE %s_03%02d PARTITION OF %s FOR VALUES FROM (date '2026-03-10' + %d) TO (date '2026-03-10' + %d);\n",
			$name, 10 + $i, $name, $i, $i + 1);
	}
	$sql .= "INSERT INTO $name SELECT order_id, order_date, amount FROM orders;\n" if $db eq 'postgres';
	$node->safe_psql($db, $sql);
}

# the fixed model
my $source = q{SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	FROM orders WHERE order_date >= $1 AND order_date < $2};

# a run over 2026-03-11 .. 2026-03-13: three tasks
sub plan_run
{
	my ($db, $table) = @_;
	return $node->safe_psql($db,
		"SELECT backfill_plan('$table', '2026-03-11', '2026-03-14', \$q\$$source\$q\$,"
		  . q{ options => '{"reconcile": ["count(*)", "sum(revenue)"]}')});
}

sub fingerprints
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(right(c.relname, 4) || ' ' || (backfill_fingerprint(c.oid)).hash, ', ' ORDER BY c.relname)"
		  . " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '$table'::regclass");
}

sub tasks
{
	my ($run) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(task || ':' || status || ':' || attempts, ' ' ORDER BY task)"
		  . " FROM backfill_tasks WHERE run_id = $run");
}

# Poll a query until it returns 't', for at most $seconds.
sub wait_until
{
	my ($query, $seconds) = @_;
	for (1 .. $seconds * 2)
	{
		return 1 if $node->safe_psql('postgres', $query) eq 't';
		usleep(500_000);
	}
	return 0;
}


# Schedule a run: (job id, '') or (undef, the error).
sub schedule
{
	my ($run, $schedule) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT backfill_schedule($run, '$schedule', 2)");
	return $ret == 0 ? ($out, '') : (undef, $err);
}

# Without pg_cron in the database, scheduling is refused and changes nothing.
{
	$node->safe_psql('postgres', 'CREATE DATABASE nocron');
	$node->safe_psql('nocron', 'CREATE EXTENSION backfill; CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean)');
	make_fct('nocron', 'fct');
	my $run = plan_run('nocron', 'fct');
	my ($ret, $out, $err) = $node->psql('nocron',
		"\\set VERBOSITY verbose\nSELECT backfill_schedule($run, '* * * * *', 2)");
	isnt($ret, 0, 'backfill_schedule fails in a database without pg_cron');
	like($err, qr/ERROR:  42704: pg_cron runs in database "postgres", not in this one/,
		'with SQLSTATE 42704, naming the database pg_cron runs in (it is preloaded: that is not the cause)');
	like($err, qr/HINT:  From database "postgres", cron.schedule_in_database\('backfill_run_$run', '\* \* \* \* \*', 'CALL public.backfill_run\($run, 2\)', 'nocron'\)/,
		'and the call that schedules the run from there');
	is($node->safe_psql('nocron', "SELECT status || ' ' || coalesce(cron_job::text, 'none') FROM backfill_runs WHERE id = $run"),
		'planned none', 'the run is left planned, with no job');
}

# Pausing a scheduled run removes its job (scheduled for New Year: no tick comes first).
make_fct('postgres', 'fct_p');
my $run_p = plan_run('postgres', 'fct_p');
SKIP:
{
	my ($job, $err) = schedule($run_p, '0 0 1 1 *');
	ok(defined $job, 'a run is scheduled') or diag($err);
	skip 'no job to pause', 4 unless defined $job;
	is($node->safe_psql('postgres', "SELECT count(*) FROM cron.job WHERE jobid = $job"),
		'1', 'a scheduled run has its job in cron.job');
	is($node->safe_psql('postgres', "SELECT backfill_pause($run_p)"), 'paused', 'the run is paused');
	is($node->safe_psql('postgres', "SELECT count(*) FROM cron.job WHERE jobid = $job"),
		'0', 'pausing the run removed its job from cron.job');
	is($node->safe_psql('postgres', "SELECT cron_job IS NULL FROM backfill_runs WHERE id = $run_p"),
		't', 'and from the run');
}
is($node->safe_psql('postgres', "SELECT backfill_cancel($run_p)"), 'cancelled', 'that run is cancelled');

# A run whose job id names another job (as after a restore into a database whose pg_cron had
# jobs of its own): pausing the run leaves that job alone, and says so.
{
	my $other = $node->safe_psql('postgres', q{SELECT cron.schedule('nightly-report', '0 3 * * *', 'SELECT 1')});
	my $run_r = plan_run('postgres', 'fct_p');
	$node->safe_psql('postgres', "UPDATE backfill_runs_data SET cron_job = $other WHERE id = $run_r");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT backfill_pause($run_r)");
	is($out, 'paused', 'a run whose job id is another job\'s is paused');
	like($err, qr/WARNING:  pg_cron job $other is not the job of run $run_r: left alone/,
		'with a warning that the job is not its own');
	is($node->safe_psql('postgres', "SELECT jobname FROM cron.job WHERE jobid = $other"),
		'nightly-report', 'the other job is still scheduled');
	is($node->safe_psql('postgres', "SELECT cron_job IS NULL FROM backfill_runs WHERE id = $run_r"),
		't', 'and the run no longer names it');
	$node->safe_psql('postgres', "SELECT cron.unschedule($other)");
	$node->safe_psql('postgres', "SELECT backfill_cancel($run_r)");
}

# The reference: a twin backfilled by hand.
make_fct('postgres', 'fct');
make_fct('postgres', 'fct_twin');
my $twin_run = plan_run('postgres', 'fct_twin');
$node->safe_psql('postgres', "CALL backfill_run($twin_run)");
my $twin = fingerprints('fct_twin');
my $before = fingerprints('fct');
isnt($before, $twin, 'the fixed model changes the data');

# Begun by hand, two tasks of three, then left to pg_cron.
my $run = plan_run('postgres', 'fct');
$node->safe_psql('postgres', "CALL backfill_run($run, 2)");
is(tasks($run), '1:done:1 2:done:1 3:pending:0', 'by hand, two tasks are done, one is left');

SKIP:
{
	my ($job, $err) = schedule($run, '* * * * *');
	ok(defined $job, 'backfill_schedule returns a job id') or diag($err);
	skip 'no job was scheduled', 11 unless defined $job;
	is($node->safe_psql('postgres',
			"SELECT schedule || ' | ' || command || ' | ' || database || ' | ' || active FROM cron.job WHERE jobid = $job"),
		"* * * * * | CALL public.backfill_run($run, 2) | postgres | true",
		'the job runs one CALL backfill_run of the run, two tasks a tick, in this database');
	is($node->safe_psql('postgres', "SELECT cron_job FROM backfill_runs WHERE id = $run"),
		$job, 'the run records its job');

	ok(wait_until("SELECT status = 'done' FROM backfill_runs WHERE id = $run", 90),
		'pg_cron finishes the run');
	is(tasks($run), '1:done:1 2:done:1 3:done:1', 'every task is done, once');
	is(fingerprints('fct'), $twin, 'the data fingerprints as the twin backfilled by hand');
	is($node->safe_psql('postgres',
			"SELECT count(*) FILTER (WHERE (r->>'ok')::boolean) FROM backfill_tasks, jsonb_array_elements(reconcile) r"
			  . " WHERE run_id = $run"),
		'6', 'every task reconciled count(*) and sum(revenue) with its source');
	is($node->safe_psql('postgres', "SELECT count(*) FROM backfill_log WHERE run_id = $run"),
		'3', 'one log record per task');
	is($node->safe_psql('postgres',
			"SELECT bool_and((u->>'same')::boolean) FROM backfill_runs, jsonb_array_elements(untouched_after) u"
			  . " WHERE id = $run"),
		't', 'nothing outside the range changed');
	is($node->safe_psql('postgres', "SELECT schedule || ' ' || active FROM cron.job WHERE jobid = $job"),
		'0 0 31 2 * true', 'the tick that finished the run parked its job on 31 February, active: pg_cron did not cancel it');
	is($node->safe_psql('postgres', "SELECT cron_job FROM backfill_runs WHERE id = $run"),
		$job, 'the run still names its job');
	ok(wait_until("SELECT count(*) > 0 AND bool_and(status = 'succeeded') FROM cron.job_run_details WHERE jobid = $job", 30),
		'pg_cron recorded every tick of the job as succeeded, the last one included');
	is($node->safe_psql('postgres', "SELECT cron_status FROM backfill_progress WHERE run_id = $run"),
		'succeeded', 'and backfill_progress.cron_status says so');
}

# A scheduled run whose task fails, worked by hand: the CALL parks the job; once the task is
# retried, backfill_schedule removes the parked job and makes a new one.
{
	make_fct('postgres', 'fct_f');
	$node->safe_psql('postgres', 'CREATE TABLE flags (ok boolean)');
	my $run_f = $node->safe_psql('postgres',
		"SELECT backfill_plan('fct_f', '2026-03-11', '2026-03-12', \$q\$SELECT order_id, order_date, amount / (SELECT count(*) FROM flags WHERE ok) AS revenue FROM orders WHERE order_date >= \$1 AND order_date < \$2\$q\$)");
	my ($parked_job) = schedule($run_f, '0 0 1 1 *');
	my ($ret, $out, $err) = $node->psql('postgres', "CALL backfill_run($run_f)");
	like($err, qr/division by zero/, 'the task fails');
	is($node->safe_psql('postgres', "SELECT schedule FROM cron.job WHERE jobid = $parked_job"),
		'0 0 31 2 *', 'the failed run parked its job');
	$node->safe_psql('postgres', "INSERT INTO flags VALUES (true); SELECT backfill_retry($run_f, 1)");
	my ($new_job, $serr) = schedule($run_f, '0 0 1 1 *');
	ok(defined $new_job && $new_job != $parked_job, 'backfill_schedule of the retried run makes a new job') or diag($serr);
	is($node->safe_psql('postgres', "SELECT count(*) FROM cron.job WHERE jobid = $parked_job"),
		'0', 'and removes the parked one');
	$node->safe_psql('postgres', "SELECT backfill_cancel($run_f)");
}

# The job pg_cron could not start: the run is still planned, and its progress says why.
ok($noconn->poll_query_until('postgres',
		"SELECT cron_status = 'failed' FROM backfill_progress WHERE run_id = $noconn_run", 't'),
	'after a tick, backfill_progress shows the job as failed');
is($noconn->safe_psql('postgres',
		"SELECT status || ' | ' || tasks_done || ' | ' || cron_message FROM backfill_progress WHERE run_id = $noconn_run"),
	'planned | 0 | connection failed',
	'with pg_cron\'s own message, while the run is still planned with nothing done');
$noconn->stop;

$node->stop;
done_testing();
