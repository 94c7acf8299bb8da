# t/006_partman.pl: a run beside pg_partman's maintenance.
#
# pg_partman 4.7 (Debian's postgresql-15-partman) keeps a daily-partitioned
# mart.fact_sales; run_maintenance() (no background worker needed) reads the
# parent and then creates and attaches partitions, which wants stronger locks
# on the parent.  A replacement holds only its partition while it fills, not
# the parent (once it held SHARE UPDATE EXCLUSIVE on the parent from its fill
# to its commit, and maintenance queued behind every fill).  A run of three
# tasks is held in its first fill by an advisory lock while run_maintenance()
# runs (with more partitions to premake): maintenance finishes without error
# and without waiting for the fill, having created its partitions; the gate
# opened, the run swaps its partitions into the grown parent and ends done,
# its partitions holding the new rows; no staging table is left, and no
# session was chosen as a deadlock victim.  (A swap that finds a session
# waiting for it while holding the parent gives way: specs/
# swap_escalating_reader.spec and specs/run_parallel_fills.spec prove it on
# every server.)
#
# A second run reads the parent itself in its source: maintenance then waits for
# the fill (its source holds the parent), the swap finds it waiting while it
# holds the parent and gives way, maintenance goes on, and the run, trying its
# swap again, ends done; still no error and no deadlock.
#
# pg_partman 4 (Debian 12's, for 15) and 5 (Debian 13's, for 17) differ in
# create_parent: 5 has no 'native' type and takes the interval as an interval;
# the test asks the installed version which to call.  On a server without
# pg_partman the test is skipped (the lock protocol itself is proven on every
# server by specs/swap_escalating_reader.spec).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('partman');
$node->init;
$node->start;

if ($node->safe_psql('postgres', q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_partman'}) eq '0')
{
	$node->stop;
	plan skip_all => 'pg_partman is not installed for this server';
}

$node->safe_psql('postgres', q{
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION backfill;
CREATE SCHEMA mart;
CREATE TABLE mart.fact_sales (id bigint NOT NULL, day date NOT NULL, amount numeric NOT NULL)
	PARTITION BY RANGE (day);
});
my $partman = $node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'});
note("pg_partman $partman");
$node->safe_psql('postgres', $partman =~ /^[0-4]\./
	? q{SELECT partman.create_parent('mart.fact_sales', 'day', 'native', 'daily', p_premake := 2,
		p_start_partition := (date '2026-03-01')::text, p_jobmon := false)}
	: q{SELECT partman.create_parent('mart.fact_sales', 'day', '1 day', p_premake := 2,
		p_start_partition := (date '2026-03-01')::text, p_jobmon := false)});
$node->safe_psql('postgres', q{
INSERT INTO mart.fact_sales SELECT g, date '2026-03-01' + (g % 10), g FROM generate_series(1, 1000) g;
CREATE TABLE mart.model AS SELECT id, day, amount * 2 AS amount FROM mart.fact_sales;
});
my $children = "SELECT count(*) FROM pg_inherits WHERE inhparent = 'mart.fact_sales'::regclass";
my $before = $node->safe_psql('postgres', $children);
ok($before > 10, "pg_partman made $before partitions, the DEFAULT one among them");

my $run = $node->safe_psql('postgres', q{
SELECT backfill_plan('mart.fact_sales', '2026-03-03', '2026-03-06',
	$q$SELECT m.* FROM mart.model m, (SELECT pg_advisory_xact_lock_shared(7)) g
	   WHERE m.day >= $1 AND m.day < $2$q$)});

# the run, held in its first fill
my $gate = $node->background_psql('postgres');
$gate->query_safe('SELECT pg_advisory_lock(7)');
my $h = $node->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run);\n\\echo run-over\n");
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted)")
  or die "the run never reached its fill";

# maintenance with partitions to make, while the run is inside its fill
$node->safe_psql('postgres',
	"UPDATE partman.part_config SET premake = 400 WHERE parent_table = 'mart.fact_sales'");
my $m = $node->background_psql('postgres', on_error_stop => 0);
my $started = time;
$m->query_until(qr/maintenance-over/,
	"SELECT partman.run_maintenance('mart.fact_sales', p_jobmon := false);\n\\echo maintenance-over\n");
my $mout = $m->{stdout} . $m->{stderr};
unlike($mout, qr/ERROR|deadlock/, 'maintenance finished without an error');
note("maintenance took " . sprintf('%.2f', time - $started) . " s, the run held in its fill");
is($node->safe_psql('postgres',
	"SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted)"),
	't', 'the run was still inside its fill: maintenance did not wait for it');
ok($node->safe_psql('postgres', $children) > $before, 'maintenance made its new partitions');

$gate->query_safe('SELECT pg_advisory_unlock(7)');
$h->query_until(qr/run-over/, '');
my $rout = $h->{stderr};
note($rout);
unlike($rout, qr/ERROR/, 'the run did not fail');
is($node->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'the run is done');
is($node->safe_psql('postgres',
	"SELECT string_agg(status, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = $run"),
	'done,done,done', 'every task is done');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM mart.fact_sales f JOIN mart.model m USING (id, day)"
	  . " WHERE f.day >= '2026-03-03' AND f.day < '2026-03-06' AND f.amount = m.amount"),
	'300', 'the partitions of the range hold the new rows');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"),
	'0', 'no staging table is left');
$h->quit;
$m->quit;

# a run whose source reads the parent: maintenance waits for its fill, its swap gives way
$node->safe_psql('postgres', q{UPDATE mart.model SET amount = amount + 1});
my $run2 = $node->safe_psql('postgres', q{
SELECT backfill_plan('mart.fact_sales', '2026-03-03', '2026-03-06',
	$q$SELECT f.id, f.day, m.amount FROM mart.fact_sales f JOIN mart.model m USING (id, day),
	   (SELECT pg_advisory_xact_lock_shared(7)) g
	   WHERE f.day >= $1 AND f.day < $2$q$)});
$gate->query_safe('SELECT pg_advisory_lock(7)');
$h = $node->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run2);\n\\echo run-over\n");
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 7 AND NOT granted)")
  or die "the second run never reached its fill";
$node->safe_psql('postgres',
	"UPDATE partman.part_config SET premake = 800 WHERE parent_table = 'mart.fact_sales'");
my $grown = $node->safe_psql('postgres', $children);
$m = $node->background_psql('postgres', on_error_stop => 0);
$m->query_until(qr/maintenance-started/,
	"\\echo maintenance-started\nSELECT partman.run_maintenance('mart.fact_sales', p_jobmon := false);\n\\echo maintenance-over\n");
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%run_maintenance%'"
	  . " AND pid <> pg_backend_pid())")
  or die "maintenance never started";
$gate->query_safe('SELECT pg_advisory_unlock(7)');
$m->query_until(qr/maintenance-over/, '');
unlike($m->{stdout} . $m->{stderr}, qr/ERROR|deadlock/, 'source reading the parent: maintenance finished without an error');
ok($node->safe_psql('postgres', $children) > $grown, 'source reading the parent: maintenance made its partitions');
$h->query_until(qr/run-over/, '');
unlike($h->{stderr}, qr/ERROR/, 'source reading the parent: the run did not fail');
is($node->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run2"), 'done',
	'source reading the parent: the run is done');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM mart.fact_sales f JOIN mart.model m USING (id, day)"
	  . " WHERE f.day >= '2026-03-03' AND f.day < '2026-03-06' AND f.amount = m.amount"),
	'300', 'source reading the parent: the partitions of the range hold the new rows');
$h->quit;
$m->quit;
$gate->quit;

my $log = slurp_file($node->logfile);
unlike($log, qr/deadlock detected/, 'no session was chosen as a deadlock victim');

$node->stop;
done_testing();
