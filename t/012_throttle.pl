# t/012_throttle.pl: a run yields to production, with a real standby and a real logical slot.
#
# A primary (wal_level = logical) with a streaming standby on its Unix socket (the standby
# replies every second: wal_receiver_status_interval = 1).  Each run rewrites a
# daily-partitioned table from a fixed model; every run must end with the rows the model
# computes (compared with EXCEPT ALL both ways), whatever it waited for.
# - max_replica_lag_ms: with the standby's replay paused, the run says it waits, finishes no
#   task and writes (almost) no WAL while the standby is behind, and goes on once replay
#   resumes; the same run without the option finishes while the standby is still paused.
#   Afterwards the standby holds the primary's rows.
# - max_slot_lag_bytes: a logical slot nobody reads holds the run back; after
#   throttle_timeout_ms the run pauses itself, saying why, with the task it was in rolled
#   back (pending, never attempted); once the slot is gone, backfill_resume and a new CALL
#   finish it.
# - throttle_query: a query that says "busy" for its first evaluations makes the run wait,
#   then go on; the time throttled and the reason are in backfill_progress.
# - critical_query: true in the middle of a task's fill pauses the run at once; the task is
#   rolled back (the partition keeps its old rows, no staging table is left, its attempts
#   stay 0), and the run resumes cleanly once the query says false.
# - throttle_timeout_ms: a wait that lasts longer pauses the run.  A CALL that ends with the
#   run paused fails with 57000 (operator intervention), so a script or a scheduler sees it.
# - a wait between tasks counts the lag from the last position the standby had replayed (a
#   standby that replayed nothing of a task is behind by the task's length), holds no xmin, and
#   ends at its next look when another session pauses the run.
# - a pg_receivewal streaming WAL is no standby: not waited for unless named in replicas, and
#   then the pause says it replays nothing.
# - backfill_estimate reads the standby's pace while it measures a task, and says the lag the
#   run would leave it; a paused standby replayed nothing, and it says so.
# - cost_limit: the fill sleeps as the I/O budget says, and the run still writes the model;
#   its tasks run without parallel workers (their pages would be counted only when they end).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 'logical');
$primary->start;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "wal_receiver_status_interval = 1\n");
$standby->start;

$primary->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE model_in (id bigint, day date, amount int);
	INSERT INTO model_in SELECT g, date '2026-03-01' + g % 8, g % 1000 FROM generate_series(1, 320000) g;
	CREATE TABLE flags (critical boolean);
	INSERT INTO flags VALUES (true);
	CREATE SEQUENCE busy_seq;
	CREATE SEQUENCE critical_seq;
});

my $source = 'SELECT id, day, amount * 2 AS amount FROM model_in WHERE day >= $1 AND day < $2';

# a table of eight daily partitions holding the buggy rows, and the model's rows to compare with
sub make_table
{
	my ($name) = @_;
	my $sql = "CREATE TABLE $name (id bigint, day date, amount int) PARTITION BY RANGE (day);\n";
	$sql .= sprintf("CREATE TABLE ${name}_%d PARTITION OF $name FOR VALUES FROM (date '2026-03-01' + %d) TO (date '2026-03-01' + %d);\n",
		$_, $_, $_ + 1)
	  for 0 .. 7;
	$sql .= "INSERT INTO $name SELECT * FROM model_in;\n";
	$primary->safe_psql('postgres', $sql);
}

sub as_model
{
	my ($name) = @_;
	my $model = "SELECT id, day, amount * 2 FROM model_in";
	return $primary->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM (TABLE $name EXCEPT ALL $model) a) + (SELECT count(*) FROM ($model EXCEPT ALL TABLE $name) b)"
	) eq '0';
}

sub plan_run
{
	my ($name, $options) = @_;
	return $primary->safe_psql('postgres',
		"SELECT backfill_plan('$name', '2026-03-01', '2026-03-09', \$\$$source\$\$, options => '$options')");
}

sub progress
{
	my ($run, $cols) = @_;
	return $primary->safe_psql('postgres', "SELECT $cols FROM backfill_progress WHERE run_id = $run");
}

# CALL backfill_run in the background; returns the harness and refs to its output
sub start_run
{
	my ($run) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $primary->connstr('postgres'), '-c', "CALL backfill_run($run)" ],
		'>', \$out, '2>', \$err);
	return ($h, \$out, \$err);
}

sub wait_for_output
{
	my ($h, $err, $re) = @_;
	for (1 .. 1200)
	{
		$h->pump_nb if $h->pumpable;
		return 1 if $$err =~ $re;
		last unless $h->pumpable;
		usleep(50_000);
	}
	diag("the run said: $$err");
	return 0;
}

sub flushed
{
	return $primary->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
}

sub bytes_between
{
	my ($a, $b) = @_;
	return $primary->safe_psql('postgres', "SELECT pg_wal_lsn_diff('$b', '$a')");
}

# --- replica lag ---------------------------------------------------------------------------
make_table('lag');
make_table('nolag');
my $lag_run = plan_run('lag', '{"max_replica_lag_ms": 300, "replicas": ["standby"], "throttle_interval_ms": 50}');
my $nolag_run = plan_run('nolag', '{}');
$primary->wait_for_catchup($standby);

$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
my ($h, $out, $err) = start_run($lag_run);
ok(wait_for_output($h, $err, qr/NOTICE:  run $lag_run waits: standby "standby" replays [0-9.]+ s behind \(max_replica_lag_ms 300\)/),
	'with the standby paused, the run says it waits for it, and why');
usleep(500_000);
my $done_before = progress($lag_run, 'tasks_done');
my $lsn_before = flushed();
sleep(2);
$h->pump_nb if $h->pumpable;
ok($h->pumpable && progress($lag_run, 'tasks_done') eq $done_before, 'no task finished while the standby stayed behind, and the run still waits');
cmp_ok(bytes_between($lsn_before, flushed()), '<', 512 * 1024,
	'and the run wrote less than 512 kB of WAL in those 2 s (a task writes megabytes)');

# the same run without the option goes on while the standby is still paused
my ($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($nolag_run)");
is(progress($nolag_run, 'status'), 'done', 'without max_replica_lag_ms, the twin run finishes with the standby paused');

$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$h->finish;
like($$err, qr/NOTICE:  run $lag_run goes on after waiting [0-9.]+ s/, 'once the standby replays again, the run goes on');
is(progress($lag_run, 'status'), 'done', 'and finishes');
like(progress($lag_run, 'throttle_reason'), qr/^standby "standby" replays [0-9.]+ s behind/,
	'backfill_progress says why it waited');
cmp_ok(progress($lag_run, 'extract(epoch FROM throttled)'), '>=', 2, 'and for how long (at least the 2 s watched)');
ok(as_model('lag') && as_model('nolag'), 'both runs wrote the model');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*), sum(amount) FROM lag'),
	$primary->safe_psql('postgres', 'SELECT count(*), sum(amount) FROM lag'), 'the standby holds the new rows');

# --- a standby restarted during a wait --------------------------------------------------------
# each look at the standbys reads pg_stat_replication afresh: a standby that restarts (a new
# walsender) and catches up while a run waits for it is seen again, and the run goes on,
# instead of sitting out throttle_timeout_ms and pausing with "not connected"
make_table('restarted');
my $restart_run = plan_run('restarted',
	'{"max_replica_lag_ms": 300, "replicas": ["standby"], "throttle_interval_ms": 50, "throttle_timeout_ms": 60000}');
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
($h, $out, $err) = start_run($restart_run);
ok(wait_for_output($h, $err, qr/NOTICE:  run $restart_run waits: standby "standby"/),
	'a run waits for a paused standby');
$standby->restart;	# a restarted standby replays again
$h->finish;
is(progress($restart_run, 'status'), 'done',
	'the standby restarted and caught up: the waiting run saw its new walsender and finished');
ok(as_model('restarted'), 'and wrote the model');

# --- a wait between tasks: counted from the last position replayed, holding no xmin, ended by a pause
# A merge has no yield point inside its task: only the look before the next task sees the lag.
# The run's first look is taken with the standby streaming; the standby replays past it, then
# stops reporting and its replay is paused while task 1 sleeps (its source sleeps 3 s).  So at the look before task
# 2 the standby has replayed everything up to the first look and nothing of task 1: it is
# behind by task 1's length, counted from the last flushed position it had replayed (counted
# from the first it had not, as before, the lag reads 0 right after the task and the run goes
# on).  The wait between tasks commits before each sleep: the backend shows no xmin and no
# transaction ID; backfill_pause ends the wait at the next look, long before
# throttle_timeout_ms, and the CALL fails with 57000.
make_table('gaps');
my $gaps_source = 'SELECT m.id, m.day, m.amount * 2 AS amount FROM model_in m, (SELECT pg_sleep(3)) s WHERE m.day >= $1 AND m.day < $2';
my $gaps_run = $primary->safe_psql('postgres',
	"SELECT backfill_plan('gaps', '2026-03-01', '2026-03-03', \$\$$gaps_source\$\$, strategy => 'merge', key => '{id}',"
	  . q{ options => '{"max_replica_lag_ms": 1000, "replicas": ["standby"], "throttle_interval_ms": 1000, "throttle_timeout_ms": 600000}')});
$primary->wait_for_catchup($standby);
my ($gout, $gerr) = ('', '');
my $gh = IPC::Run::start(
	[ 'psql', '-X', '-d', $primary->connstr('postgres') . ' application_name=gaps_run', '-c', '\set VERBOSITY verbose', '-c', "CALL backfill_run($gaps_run)" ],
	'>', \$gout, '2>', \$gerr, IPC::Run::timeout(120));
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'gaps_run' AND wait_event = 'PgSleep'})
  or die 'task 1 never slept';
$primary->wait_for_catchup($standby);	# past the run's first look
# from now on the standby stays silent: the primary keeps its last report, and no replay_lag of
# the server's own sees task 1 (as with the default wal_receiver_status_interval of 10 s)
$standby->safe_psql('postgres', 'ALTER SYSTEM SET wal_receiver_status_interval = 0');
$standby->safe_psql('postgres', 'SELECT pg_reload_conf()');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
ok(wait_for_output($gh, \$gerr, qr/NOTICE:  00000: run $gaps_run waits: standby "standby" replays [0-9.]+ s behind/),
	'a standby that replayed nothing of the first task is seen behind before the second');
is(progress($gaps_run, 'tasks_done'), '1', 'the run waits after one task');
like(progress($gaps_run, 'activity'), qr/^CALL backfill_run\($gaps_run\) -- waits: standby "standby" replays/,
	'backfill_progress.activity says what it waits for');
my $no_xmin = 0;
for (1 .. 10)
{
	$no_xmin++ if $primary->safe_psql('postgres',
		q{SELECT backend_xmin IS NULL AND backend_xid IS NULL FROM pg_stat_activity WHERE application_name = 'gaps_run'}) eq 't';
	usleep(100_000);
}
cmp_ok($no_xmin, '>=', 8, "the waiting backend holds no xmin and no transaction ID ($no_xmin of 10 looks)");
is($primary->safe_psql('postgres', "SELECT backfill_pause($gaps_run)"), 'paused', 'paused by another session');
eval { $gh->finish; };
ok(!$@, 'the CALL ends at the next look, not after throttle_timeout_ms');
like($gerr, qr/ERROR:  57000: run $gaps_run was paused by another session: stopping after 1 task/,
	'failing with 57000, saying the run was paused');
is(progress($gaps_run, 'status || tasks_done'), 'paused1', 'the run stays paused, one task done');
$standby->safe_psql('postgres', 'ALTER SYSTEM RESET wal_receiver_status_interval');
$standby->safe_psql('postgres', 'SELECT pg_reload_conf()');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$primary->safe_psql('postgres', "SELECT backfill_resume($gaps_run)");
$primary->safe_psql('postgres', "CALL backfill_run($gaps_run)");
my $gaps_model = "SELECT id, day, CASE WHEN day < '2026-03-03' THEN amount * 2 ELSE amount END FROM model_in";
is($primary->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM (TABLE gaps EXCEPT ALL $gaps_model) a) + (SELECT count(*) FROM ($gaps_model EXCEPT ALL TABLE gaps) b)"),
	'0', 'resumed, the run finishes its two days and leaves the others');

# --- a WAL receiver that is no standby ----------------------------------------------------------
# pg_receivewal (as Barman or pgBackRest's archiving run it) streams WAL and replays none: it
# reports no replay position.  Without replicas it is not waited for; named in replicas, the
# run says what it is.
my $waldir = PostgreSQL::Test::Utils::tempdir();
my $receiver = IPC::Run::start(
	[ 'pg_receivewal', '-D', $waldir, '-d', $primary->connstr('postgres') . ' application_name=pg_receivewal', '--no-sync', '-s', '1' ],
	'>', \my $rw_out, '2>', \my $rw_err);
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_replication WHERE application_name = 'pg_receivewal' AND state = 'streaming'})
  or die "pg_receivewal did not connect: $rw_err";
make_table('recv');
my $recv_run = plan_run('recv', '{"max_replica_lag_ms": 1000, "throttle_timeout_ms": 3000, "throttle_interval_ms": 50}');
($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($recv_run)");
is(progress($recv_run, 'status'), 'done', 'a connected pg_receivewal is no standby: the run does not wait for it');
unlike($nerr, qr/waits/, 'and never said it waited');
ok(as_model('recv'), 'the run wrote the model');
make_table('recvnamed');
my $named_run = plan_run('recvnamed',
	'{"max_replica_lag_ms": 1000, "replicas": ["pg_receivewal"], "throttle_timeout_ms": 1000, "throttle_interval_ms": 50}');
($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($named_run)");
like(progress($named_run, 'status || \' \' || error'),
	qr/^paused .*standby "pg_receivewal" replays nothing: it is streaming and reports no replay position/,
	'named in replicas, it pauses the run, which says what it saw');
$receiver->kill_kill;

# --- a logical slot nobody reads -------------------------------------------------------------
make_table('slot');
my $slot_run = plan_run('slot', '{"max_slot_lag_bytes": 1048576, "throttle_timeout_ms": 2000, "throttle_interval_ms": 50}');
$primary->safe_psql('postgres', q{SELECT pg_create_logical_replication_slot('cdc', 'pgoutput')});
my $fp_before = $primary->safe_psql('postgres', 'SELECT sum(amount) FROM slot');
($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($slot_run)");
like($nerr, qr/NOTICE:  run $slot_run waits: logical slot "cdc" is [0-9]+ (kB|MB) behind \(max_slot_lag_bytes 1048576\)/,
	'a slot that holds more than max_slot_lag_bytes makes the run wait');
like($nerr, qr/ERROR:  run $slot_run paused: waited 2\.00 s \(throttle_timeout_ms\): logical slot "cdc" is/,
	'past throttle_timeout_ms the run pauses, and the CALL fails saying why');
isnt($rc, 0, 'psql sees the CALL fail');
is(progress($slot_run, 'status'), 'paused', 'the run is paused');
like(progress($slot_run, 'error'), qr/logical slot "cdc"/, 'backfill_progress says why');
is($primary->safe_psql('postgres', "SELECT count(*) FROM backfill_tasks WHERE run_id = $slot_run AND status = 'failed'"),
	'0', 'no task failed: the one in progress was rolled back');
$primary->safe_psql('postgres', q{SELECT pg_drop_replication_slot('cdc')});
is($primary->safe_psql('postgres', "SELECT backfill_resume($slot_run)"), 'running', 'backfill_resume');
$primary->safe_psql('postgres', "CALL backfill_run($slot_run)");
is(progress($slot_run, 'status'), 'done', 'the resumed run finishes');
ok(as_model('slot'), 'and wrote the model');

# --- throttle_query --------------------------------------------------------------------------
make_table('busy');
my $busy_run = plan_run('busy', q{{"throttle_query": "SELECT nextval(''busy_seq'') <= 4", "throttle_interval_ms": 100}});
($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($busy_run)");
like($nerr, qr/NOTICE:  run $busy_run waits: options.throttle_query returned true.*NOTICE:  run $busy_run goes on after waiting/s,
	'a throttle_query returning true makes the run wait, then go on');
is(progress($busy_run, 'status || throttle_reason'), 'doneoptions.throttle_query returned true', 'the run is done; why it waited is kept');
cmp_ok(progress($busy_run, 'extract(epoch FROM throttled)'), '>=', 0.3, 'the time throttled: at least 3 checks apart');
ok(as_model('busy'), 'the run wrote the model');

# --- critical_query in the middle of a fill ----------------------------------------------------
make_table('crit');
my $crit_run = plan_run('crit',
	q{{"critical_query": "SELECT nextval(''critical_seq'') > 2 AND (SELECT critical FROM flags)", "throttle_interval_ms": 10}});
my $crit_fp = q{SELECT string_agg(backfill_fingerprint(c.oid::regclass)::text, ' ' ORDER BY c.relname) FROM pg_class c WHERE c.relname LIKE 'crit\_%'};
my $before = $primary->safe_psql('postgres', $crit_fp);
my $relations = $primary->safe_psql('postgres', 'SELECT count(*) FROM pg_class');
($rc, $nout, $nerr) = $primary->psql('postgres', "\\set VERBOSITY verbose\nCALL backfill_run($crit_run)");
like($nerr, qr/ERROR:  57000: run $crit_run paused: options.critical_query returned true/,
	'critical_query pauses the run: the CALL fails with 57000 (operator intervention)');
cmp_ok($primary->safe_psql('postgres', 'SELECT last_value FROM critical_seq'), '>=', 3,
	'in the middle of the first task: the query ran inside its fill');
is($primary->safe_psql('postgres', "SELECT string_agg(status || attempts, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = $crit_run"),
	join(',', ('pending0') x 8), 'every task is pending, never attempted: the one in progress was rolled back');
is($primary->safe_psql('postgres', $crit_fp), $before, 'the partitions hold their old rows');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM pg_class'), $relations, 'no staging table is left');
$primary->safe_psql('postgres', "UPDATE flags SET critical = false; SELECT backfill_resume($crit_run)");
$primary->safe_psql('postgres', "CALL backfill_run($crit_run)");
is(progress($crit_run, 'status'), 'done', 'resumed once critical_query says false, the run finishes');
ok(as_model('crit'), 'and wrote the model');

# --- throttle_timeout_ms ---------------------------------------------------------------------
make_table('stuck');
my $stuck_run = plan_run('stuck', '{"throttle_query": "SELECT true", "throttle_timeout_ms": 1000, "throttle_interval_ms": 100}');
($rc, $nout, $nerr) = $primary->psql('postgres', "CALL backfill_run($stuck_run)");
like($nerr, qr/ERROR:  run $stuck_run paused: waited 1\.00 s \(throttle_timeout_ms\): options.throttle_query returned true/,
	'a wait longer than throttle_timeout_ms pauses the run');
like($nerr, qr/HINT:  SELECT backfill_resume\($stuck_run\) once production allows, then CALL backfill_run\($stuck_run\) again\./,
	'its hint names backfill_resume as the function it is');
is(progress($stuck_run, 'status || tasks_done'), 'paused0', 'before its first task');

# --- the I/O budget ---------------------------------------------------------------------------
make_table('budget');
my $budget_run = plan_run('budget', '{"cost_limit": 100, "cost_delay_ms": 1}');
$primary->safe_psql('postgres', "CALL backfill_run($budget_run)");
is(progress($budget_run, 'status || throttle_reason'), 'donethe I/O budget (cost_limit 100)', 'the fill spent an I/O budget');
cmp_ok(progress($budget_run, 'extract(epoch FROM throttled)'), '>', 0, 'and slept for it');
ok(as_model('budget'), 'the run wrote the model');

# Under a budget the copy's index builds and the source run without parallel workers (their
# pages would be counted only when they end); the rows record the settings the task ran with.
$primary->safe_psql('postgres', q{
	CREATE TABLE workers (day date, maintenance int, gather int) PARTITION BY RANGE (day);
	CREATE TABLE workers_0 PARTITION OF workers FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE INDEX ON workers (day);
	ALTER SYSTEM SET max_parallel_maintenance_workers = 2;
	ALTER SYSTEM SET max_parallel_workers_per_gather = 2;
	SELECT pg_reload_conf();
});
my $settings = q{SELECT $1::date AS day, current_setting('max_parallel_maintenance_workers')::int AS maintenance,}
  . q{ current_setting('max_parallel_workers_per_gather')::int AS gather};
my %seen;
for my $case (['none', '{}'], ['budget', '{"cost_limit": 10000}'],
	['budget, gather 3', '{"cost_limit": 10000, "max_parallel_workers_per_gather": "3"}'])
{
	my ($label, $options) = @$case;
	my $run = $primary->safe_psql('postgres',
		"SELECT backfill_plan('workers', '2026-03-01', '2026-03-02', \$\$$settings\$\$, options => '$options')");
	$primary->safe_psql('postgres', "CALL backfill_run($run)");
	$seen{$label} = $primary->safe_psql('postgres', "SELECT maintenance || '/' || gather FROM workers");
}
is($seen{none}, '2/2', 'without a budget a task keeps the server\'s parallel workers');
is($seen{budget}, '0/0', 'under a budget its index builds and its source have none');
is($seen{'budget, gather 3'}, '0/3', 'unless the run sets max_parallel_workers_per_gather');
$primary->safe_psql('postgres',
	'ALTER SYSTEM RESET max_parallel_maintenance_workers; ALTER SYSTEM RESET max_parallel_workers_per_gather; SELECT pg_reload_conf()');

# --- backfill_estimate and the standby ----------------------------------------------------------
# What the standby replayed while the estimate measured its task is its pace: a row says it,
# with the lag the run would leave it without a cap; a standby whose replay is paused replayed
# nothing, and the row says its lag cannot be told.
make_table('est');
my $est_run = plan_run('est', '{"max_replica_lag_ms": 1000}');
$primary->wait_for_catchup($standby);
like($primary->safe_psql('postgres', "SELECT how FROM backfill_estimate($est_run) WHERE how LIKE 'standby%'"),
	qr/^standby "standby": replayed (at least )?[0-9.]+ MB\/s while the estimate ran; without a cap the run would leave it about [0-9.]+ .* behind at its end; with max_replica_lag_ms the run takes about /,
	'backfill_estimate: the standby\'s pace while it measured, the lag without a cap, the time with it');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$standby->poll_query_until('postgres', q{SELECT pg_get_wal_replay_pause_state() = 'paused'}) or die 'replay did not pause';
# the primary has heard of everything the standby replayed before its pause
my $replayed = $standby->safe_psql('postgres', 'SELECT pg_last_wal_replay_lsn()');
$primary->poll_query_until('postgres', "SELECT replay_lsn >= '$replayed' FROM pg_stat_replication WHERE application_name = 'standby'")
  or die 'the standby never reported its replay';
like($primary->safe_psql('postgres', "SELECT how FROM backfill_estimate($est_run) WHERE how LIKE 'standby%'"),
	qr/^standby "standby": replayed nothing while the estimate ran/,
	'a standby whose replay is paused replayed nothing: its lag cannot be told');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');

done_testing();
