# t/003_run_crash.pl: a run survives its server being killed.
#
# CALL backfill_run commits after each task: a task's new partition, its log
# record and its row in backfill_tasks ("done", attempts + 1) are one
# transaction.  A run is started on a daily-partitioned table filled by a buggy
# model, with the fixed model (the source) held on the third partition by an
# advisory lock; while tasks 1 and 2 are done and task 3 is in flight, the
# server is stopped in immediate mode (a power cut), and, on a fresh copy, the
# backend running the CALL is killed with SIGKILL (a crash restart of the
# whole server).  Either way, after recovery: tasks 1 and 2 are done once,
# task 3 and the later ones are pending and never attempted, their partitions
# hold all of their old rows, no staging table is left, and the log has one
# record per done task whose fingerprint is the partition's.  Calling the run
# again finishes it without redoing tasks 1 and 2, and every partition then
# fingerprints as in a twin table backfilled without interruption; the
# partitions outside the range are untouched (the run is planned with
# check_untouched 'full': a crash resets the cumulative statistics, after which
# the default check by counters says it cannot tell).  Finished tasks are redone only
# when asked: backfill_retry of task 2 redoes task 2 and nothing else.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BackfillCrash;

my $node = PostgreSQL::Test::Cluster->new('runcrash');
$node->init;
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

# Eight days of orders, 3000 a day; fct_0310 .. fct_0317 hold them as the
# buggy model computed them (refunds counted as revenue).
my @days = map { sprintf('03%02d', $_) } 10 .. 17;
my @in_range = @days[ 1 .. 6 ];    # 0311 .. 0316: the run's six tasks
my @outside = @days[ 0, 7 ];       # 0310 and 0317

$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
	INSERT INTO orders SELECT g, date '2026-03-10' + (g % 8), g % 500, g % 11 = 0
	FROM generate_series(1, 24000) g;
});

sub make_fct
{
	my ($name) = @_;
	my $sql = "CREATE TABLE $name (order_id bigint NOT NULL, order_date date NOT NULL,"
	  . " revenue numeric(12,2), PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);\n";
	for my $i (0 .. 7)
	{
		$sql .= sprintf(
			"CREATE TABLE %s_%s PARTITION OF %s FOR VALUES FROM (date '2026-03-10' + %d) TO (date '2026-03-10' + %d);\n",
			$name, $days[$i], $name, $i, $i + 1);
	}
	$sql .= "INSERT INTO $name SELECT order_id, order_date, amount FROM orders;\n";
	$node->safe_psql('postgres', $sql);
}
make_fct($_) for qw(fct fct_twin fct_k);

# The fixed model.  The window starting 2026-03-13 (task 3) first takes
# advisory lock 7 in shared mode: whoever holds it exclusively holds task 3
# in the middle of its fill.
my $source = q{SELECT o.order_id, o.order_date,
	CASE WHEN o.refunded THEN -o.amount ELSE o.amount END AS revenue
	FROM orders o
	CROSS JOIN LATERAL (SELECT CASE WHEN $1 = date '2026-03-13' THEN pg_advisory_xact_lock_shared(7) END) g
	WHERE o.order_date >= $1 AND o.order_date < $2};

sub plan_run
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT backfill_plan('$table', '2026-03-11', '2026-03-17', \$q\$$source\$q\$,"
		  . q{ options => '{"reconcile": ["count(*)", "sum(revenue)"], "check_untouched": "full"}')});
}

# day => fingerprint hash, for every partition of a table
sub fingerprints
{
	my ($table) = @_;
	my %fp;
	for my $line (split /\n/, $node->safe_psql('postgres',
		"SELECT right(c.relname, 4), (backfill_fingerprint(c.oid)).hash FROM pg_inherits i"
		  . " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '$table'::regclass"))
	{
		my ($day, $hash) = split /\|/, $line;
		$fp{$day} = $hash;
	}
	return \%fp;
}

sub tasks
{
	my ($run) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(task || ':' || status || ':' || attempts, ' ' ORDER BY task)"
		  . " FROM backfill_tasks WHERE run_id = $run");
}

sub run_status
{
	return $node->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $_[0]");
}

# partition day => "count log_id" of the log records of a run
sub log_records
{
	my ($run) = @_;
	my %log;
	for my $line (split /\n/, $node->safe_psql('postgres',
		"SELECT right(partition, 4), count(*), max(id) FROM backfill_log WHERE run_id = $run GROUP BY partition"))
	{
		my ($day, $n, $id) = split /\|/, $line;
		$log{$day} = "$n $id";
	}
	return \%log;
}

# The reference: the twin, backfilled without interruption.
my $twin_before = fingerprints('fct_twin');
my $twin_run = plan_run('fct_twin');
$node->safe_psql('postgres', "CALL backfill_run($twin_run)");
is(run_status($twin_run), 'done', 'the twin run, uninterrupted, is done');
my $twin = fingerprints('fct_twin');
is(scalar(grep { $twin->{$_} ne $twin_before->{$_} } @in_range), 6,
	'the fixed model changes all six partitions of the range');

# Start a run on $table, hold its task 3 in the fill, kill the server with
# $kill (given the pid of the backend running the CALL), check what recovery
# left, run it again to the end and check the result.  Returns the run id.
sub crash_mid_run
{
	my ($table, $stage, $kill) = @_;
	my $before = fingerprints($table);
	my $run = plan_run($table);

	my $gate = $node->background_psql('postgres');
	$gate->query_safe('SELECT pg_advisory_lock(7)');
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run);\n");

	$node->poll_query_until('postgres',
		"SELECT (SELECT count(*) FROM backfill_tasks WHERE run_id = $run AND status = 'done') = 2"
		  . " AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted)")
	  or die "task 3 of run $run never blocked on the gate";
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE query LIKE 'CALL backfill_run($run)%' AND state = 'active'");
	like($pid, qr/^\d+$/, "$stage: the CALL runs in one backend");
	is($node->safe_psql('postgres',
		"SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objid = 7 AND NOT l.granted"),
		$pid, "$stage: that backend waits on the gate of task 3");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks l WHERE l.pid = $pid AND l.relation = '${table}_0313'::regclass"
		  . " AND l.mode = 'ShareRowExclusiveLock' AND l.granted"),
		'1', "$stage: it holds the partition of task 3, in the middle of its fill");
	is(tasks($run), '1:done:1 2:done:1 3:pending:0 4:pending:0 5:pending:0 6:pending:0',
		"$stage: before the kill, tasks 1 and 2 are committed done and task 3 is not");

	$kill->($pid);
	forget($h, $gate);

	# what recovery left
	my $now = fingerprints($table);
	is(tasks($run), '1:done:1 2:done:1 3:pending:0 4:pending:0 5:pending:0 6:pending:0',
		"$stage: tasks 1 and 2 are done once; task 3 is pending, never counted as attempted");
	is($now->{'0313'}, $before->{'0313'}, "$stage: the partition of task 3 holds its old rows, all of them");
	is_deeply([ @$now{ @in_range[ 3 .. 5 ] } ], [ @$before{ @in_range[ 3 .. 5 ] } ],
		"$stage: the partitions of tasks 4 to 6 hold their old rows");
	is_deeply([ @$now{ @in_range[ 0, 1 ] } ], [ @$twin{ @in_range[ 0, 1 ] } ],
		"$stage: the partitions of tasks 1 and 2 hold the new rows");
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"),
		'0', "$stage: no staging table is left");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_inherits WHERE inhparent = '$table'::regclass"),
		'8', "$stage: the table still has its eight partitions");
	is($node->safe_psql('postgres',
		"SELECT string_agg(right(partition, 4) || ' run ' || coalesce(run_id::text, 'none'), ', ' ORDER BY id)"
		  . " FROM backfill_log WHERE target = 'public.$table'"),
		"0311 run $run, 0312 run $run", "$stage: the log has one record per done task, each with the run's id");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM backfill_log l JOIN backfill_tasks t ON t.log_id = l.id"
		  . " WHERE t.run_id = $run AND t.status = 'done' AND l.fingerprint_after = t.fingerprint_after"
		  . " AND l.fingerprint_after = (backfill_fingerprint(l.partition::regclass)).hash"),
		'2', "$stage: each record's fingerprint_after is its task's and its partition's now");
	is(run_status($run), 'running', "$stage: the run is still running, with nothing in progress");
	my $early = $node->safe_psql('postgres',
		"SELECT string_agg(log_id || ' ' || finished_at, ', ' ORDER BY task) FROM backfill_tasks"
		  . " WHERE run_id = $run AND task <= 2");

	# called again (the gate is gone with the crash)
	$node->safe_psql('postgres', "CALL backfill_run($run)");
	is(run_status($run), 'done', "$stage, resumed: the run is done");
	is(tasks($run), join(' ', map { "$_:done:1" } 1 .. 6),
		"$stage, resumed: every task is done, each with one attempt");
	is($node->safe_psql('postgres',
		"SELECT string_agg(log_id || ' ' || finished_at, ', ' ORDER BY task) FROM backfill_tasks"
		  . " WHERE run_id = $run AND task <= 2"),
		$early, "$stage, resumed: tasks 1 and 2 were not redone");
	is_deeply(log_records($run),
		{ map { my $d = $_; ($d => $node->safe_psql('postgres',
				"SELECT '1 ' || log_id FROM backfill_tasks WHERE run_id = $run AND partition = 'public.${table}_$d'")) } @in_range },
		"$stage, resumed: one log record per task, the one its task names");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM backfill_log WHERE run_id = $run"
		  . " AND fingerprint_after = (backfill_fingerprint(partition::regclass)).hash"),
		'6', "$stage, resumed: every record's fingerprint_after is its partition's");
	is_deeply(fingerprints($table), $twin,
		"$stage, resumed: every partition fingerprints as the twin's, backfilled without interruption");
	is_deeply([ @{ fingerprints($table) }{@outside} ], [ @$before{@outside} ],
		"$stage, resumed: the partitions outside the range are unchanged");
	is($node->safe_psql('postgres',
		"SELECT bool_and((u->>'same')::boolean) FROM backfill_runs, jsonb_array_elements(untouched_after) u"
		  . " WHERE id = $run"),
		't', "$stage, resumed: the run saw nothing outside its range change");
	is($node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE (r->>'ok')::boolean) FROM backfill_tasks, jsonb_array_elements(reconcile) r"
		  . " WHERE run_id = $run"),
		'12', "$stage, resumed: every task reconciled count(*) and sum(revenue) with its source");
	return $run;
}

# (a) The whole server stopped at once, as by a power cut.
my $run_a = crash_mid_run('fct', 'immediate stop', sub { kill_server($node) });

# Finished tasks are redone only when asked.
{
	my $others = "SELECT string_agg(task || ' ' || log_id || ' ' || finished_at, ', ' ORDER BY task)"
	  . " FROM backfill_tasks WHERE run_id = $run_a AND task <> 2";
	my $untouched = $node->safe_psql('postgres', $others);
	my $old_log = $node->safe_psql('postgres',
		"SELECT log_id FROM backfill_tasks WHERE run_id = $run_a AND task = 2");

	$node->safe_psql('postgres', "CALL backfill_run($run_a)");
	is($node->safe_psql('postgres', "SELECT count(*) FROM backfill_log WHERE run_id = $run_a"),
		'6', 'a done run called again redoes nothing');

	is($node->safe_psql('postgres', "SELECT backfill_retry($run_a, 2)"), 'running',
		'backfill_retry of task 2 sets the run running again');
	is(tasks($run_a), '1:done:1 2:pending:0 3:done:1 4:done:1 5:done:1 6:done:1',
		'backfill_retry makes task 2 pending with no attempts');
	$node->safe_psql('postgres', "CALL backfill_run($run_a)");
	is(run_status($run_a), 'done', 'the retried run is done again');
	is(tasks($run_a), join(' ', map { "$_:done:1" } 1 .. 6), 'task 2 is done with one attempt');
	is($node->safe_psql('postgres', $others), $untouched, 'no other task was redone');
	my $new_log = $node->safe_psql('postgres',
		"SELECT log_id FROM backfill_tasks WHERE run_id = $run_a AND task = 2");
	cmp_ok($new_log, '>', $old_log, 'task 2 names a new log record');
	is($node->safe_psql('postgres',
		"SELECT string_agg(right(partition, 4) || ' ' || count, ', ' ORDER BY partition) FROM"
		  . " (SELECT partition, count(*) FROM backfill_log WHERE run_id = $run_a GROUP BY partition) s"),
		'0311 1, 0312 2, 0313 1, 0314 1, 0315 1, 0316 1',
		'the log has one more record, for the partition of task 2 only');
	is_deeply(fingerprints('fct'), $twin, 'redoing task 2 gives the same rows');
}

# (b) The backend running the CALL killed with SIGKILL: the postmaster
# restarts the whole server.
crash_mid_run('fct_k', 'backend killed', sub { kill_backend($node, $_[0], 'backend killed') });

$node->stop;
done_testing();
