# t/015_live_runs.pl: backfill_progress tells a run being worked from one whose worker is gone,
# and its end covers the whole run.
#
# - While a CALL works a run (its task 2 held on an advisory lock), backfill_progress shows the
#   session's pid in workers, what it does in activity (the task and its partition, as
#   pg_stat_activity shows it), a heartbeat, and orphaned false.
# - Its backend terminated (pg_terminate_backend), the run still says running, but workers is
#   empty and orphaned is true; a new CALL finishes it, and orphaned is false again.
# - A CALL that ends of its own after max_tasks leaves the run running and not orphaned.
# - notice_every 3: a call of six tasks says so for the first, the third and the sixth.
# - finished_at and elapsed cover the end phase: with a dependent materialized view whose
#   refresh takes a second, finished_at is at least a second after the last task finished.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('live');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE fct (id int NOT NULL, day date NOT NULL, amount int) PARTITION BY RANGE (day);
	CREATE TABLE fct_1 PARTITION OF fct FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE TABLE fct_2 PARTITION OF fct FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
	CREATE TABLE fct_3 PARTITION OF fct FOR VALUES FROM ('2026-03-03') TO ('2026-03-04');
	INSERT INTO fct SELECT g, date '2026-03-01' + g % 3, g FROM generate_series(1, 3000) g;
});

sub progress
{
	my ($run, $cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM backfill_progress WHERE run_id = $run");
}

# task 2 waits on advisory lock 7 while the test holds it
my $source = q{SELECT f.id, f.day, f.amount + 1 AS amount FROM fct f
	CROSS JOIN LATERAL (SELECT CASE WHEN $1 = '2026-03-02' THEN pg_advisory_xact_lock_shared(7) END) g
	WHERE f.day >= $1::date AND f.day < $2::date};
my $run = $node->safe_psql('postgres',
	"SELECT backfill_plan('fct', '2026-03-01', '2026-03-04', \$q\$$source\$q\$)");
is(progress($run, "coalesce(workers::text, 'none') || ' ' || orphaned"), 'none false',
	'a planned run: nobody works it, and it is not orphaned');

my $gate = $node->background_psql('postgres');
$gate->query_safe('SELECT pg_advisory_lock(7)');
my $h = $node->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run);\n");
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted)")
  or die 'task 2 never waited on the gate';
my $pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted");
is(progress($run, 'workers::text'), "{$pid}", 'while a CALL works it, workers names its backend');
is(progress($run, 'orphaned'), 'f', 'and the run is not orphaned');
like(progress($run, 'activity'), qr/^CALL backfill_run\($run\) -- task 2 \(public\.fct_2\)$/,
	'activity says which task it is in, as pg_stat_activity shows it');
is(progress($run, 'heartbeat IS NOT NULL AND heartbeat <= clock_timestamp()'), 't', 'with a heartbeat');

$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres', "SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)")
  or die "backend $pid did not go";
$gate->query_safe('SELECT pg_advisory_unlock(7)');
eval { $h->quit; };
is(progress($run, "status || ' ' || coalesce(workers::text, 'none') || ' ' || orphaned"), 'running none true',
	'its backend terminated, the run still says running, nobody works it: orphaned');

$node->safe_psql('postgres', "CALL backfill_run($run)");
is(progress($run, "status || ' ' || orphaned || ' ' || tasks_done"), 'done false 3',
	'a new CALL finishes it, and it is no longer orphaned');

# a CALL that ends of its own, with tasks left, leaves nobody working and nothing orphaned
$node->safe_psql('postgres', 'CREATE TABLE fct2 (LIKE fct) PARTITION BY RANGE (day)');
$node->safe_psql('postgres', "CREATE TABLE fct2_$_ PARTITION OF fct2 FOR VALUES FROM ('2026-03-0$_') TO ('2026-03-0" . ($_ + 1) . "')")
  for 1 .. 3;
my $run2 = $node->safe_psql('postgres',
	q{SELECT backfill_plan('fct2', '2026-03-01', '2026-03-04', $q$SELECT id, day, amount FROM fct WHERE day >= $1::date AND day < $2::date$q$)});
$node->safe_psql('postgres', "CALL backfill_run($run2, 1)");
is(progress($run2, "status || ' ' || coalesce(workers::text, 'none') || ' ' || orphaned"), 'running none false',
	'after max_tasks the run is running, nobody works it, and it is not orphaned');
is(progress($run2, "wal_left_bytes = 2 * (SELECT wal_bytes FROM backfill_tasks WHERE run_id = $run2 AND status = 'done')"
		  . " AND (SELECT wal_bytes FROM backfill_tasks WHERE run_id = $run2 AND status = 'done') > 0"),
	't', 'the WAL left: two tasks pending at the rate of the one done');

# notice_every: six tasks, a NOTICE for the first, the third and the sixth (the last)
$node->safe_psql('postgres', 'CREATE TABLE fct6 (LIKE fct) PARTITION BY RANGE (day)');
$node->safe_psql('postgres', "CREATE TABLE fct6_$_ PARTITION OF fct6 FOR VALUES FROM (date '2026-03-01' + $_) TO (date '2026-03-01' + $_ + 1)")
  for 0 .. 5;
my $run6 = $node->safe_psql('postgres',
	q{SELECT backfill_plan('fct6', '2026-03-01', '2026-03-07', $q$SELECT id, day, amount FROM fct WHERE day >= $1::date AND day < $2::date$q$,}
	  . q{ options => '{"notice_every": 3}')});
my ($ret6, $out6, $err6) = $node->psql('postgres', "CALL backfill_run($run6)");
my @done6 = $err6 =~ /NOTICE:  run $run6: public\.fct6_(\d) done \((\d)\/6\)/g;
is(join(',', @done6), '0,1,2,3,5,6', 'notice_every 3: the first task, the third and the last say so, no other');

# the end phase: a dependent materialized view whose refresh sleeps a second
$node->safe_psql('postgres', q{
	CREATE MATERIALIZED VIEW slow_mart AS SELECT day, sum(amount) AS amount FROM fct, pg_sleep(1) GROUP BY day;
});
my $run3 = $node->safe_psql('postgres',
	q{SELECT backfill_plan('fct', '2026-03-01', '2026-03-02', $q$SELECT id, day, amount * 2 AS amount FROM fct WHERE day >= $1::date AND day < $2::date$q$)});
$node->safe_psql('postgres', "CALL backfill_run($run3)");
is(progress($run3, "status || ' ' || (refreshed -> 0 ->> 'name')"), 'done public.slow_mart', 'the run refreshed the view');
cmp_ok($node->safe_psql('postgres', "SELECT extract(epoch FROM r.finished_at - max(t.finished_at))"
		  . " FROM backfill_runs r JOIN backfill_tasks t ON t.run_id = r.id WHERE r.id = $run3 GROUP BY r.finished_at"),
	'>=', 1, 'finished_at comes after the refresh: at least a second after the last task');
cmp_ok(progress($run3, 'extract(epoch FROM elapsed)'), '>=', 1, 'and elapsed covers it');

$node->stop;
done_testing();
