# citus/t/001_worker_restart.pl: a run across a distributed table survives a worker's restart.
#
# A coordinator and two workers (their own clusters, talking over 127.0.0.1), a table
# partitioned by day and distributed on order_id, and a twin of it.  A run replaces six days
# of the table, one committed task per partition.  Tasks 1 and 2 are done; task 3 is then held
# in the middle (its staging table distributed and filled on the workers, its swap waiting for
# a reader of the partition on the coordinator) while worker 2 is stopped in immediate mode.
# Task 3 fails and rolls back: its partition is the old one on every node, no staging table is
# left on any node, tasks 1 and 2 stay done.  Worker 2 restarted, the run is called again and
# finishes without redoing tasks 1 and 2; every partition of the range then fingerprints as the
# twin's after an uninterrupted run, and the days outside the range are untouched.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @nodes;
for my $name (qw(coordinator worker1 worker2))
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', qq{
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus'
max_prepared_transactions = 200
citus.node_conninfo = 'sslmode=disable'
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	push @nodes, $node;
}
my ($coord, $w1, $w2) = @nodes;
$coord->safe_psql('postgres', sprintf(q{
	SELECT citus_set_coordinator_host('127.0.0.1', %d);
	SELECT citus_add_node('127.0.0.1', %d);
	SELECT citus_add_node('127.0.0.1', %d);
	CREATE EXTENSION backfill;}, $coord->port, $w1->port, $w2->port));
is($coord->safe_psql('postgres', 'SELECT count(*) FROM pg_dist_node WHERE groupid > 0'), '2',
	'two workers registered');

# Eight days of orders, 1000 a day; rev and rev_twin hold them as the buggy model computed them.
my @days = map { sprintf('03%02d', $_) } 10 .. 17;
$coord->safe_psql('postgres', q{
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
	SELECT create_distributed_table('orders', 'order_id', shard_count => 4);
	INSERT INTO orders SELECT g, date '2026-03-10' + (g % 8), g % 500, g % 11 = 0
	FROM generate_series(1, 8000) g;});
for my $t (qw(rev rev_twin))
{
	my $sql = "CREATE TABLE $t (order_id bigint NOT NULL, order_date date NOT NULL,"
	  . " revenue numeric(12,2), PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);\n";
	$sql .= sprintf("CREATE TABLE %s_%s PARTITION OF %s FOR VALUES FROM (date '2026-03-10' + %d) TO (date '2026-03-10' + %d);\n",
		$t, $days[$_], $t, $_, $_ + 1) for 0 .. 7;
	$sql .= "SELECT create_distributed_table('$t', 'order_id', colocate_with => 'orders');\n";
	$sql .= "INSERT INTO $t SELECT order_id, order_date, amount FROM orders;\n";
	$coord->safe_psql('postgres', $sql);
}

my $source = q{SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	FROM orders WHERE order_date >= $1 AND order_date < $2};
sub plan_run
{
	my ($t) = @_;
	return $coord->safe_psql('postgres',
		"SELECT backfill_plan('$t', '2026-03-11', '2026-03-17', \$q\$$source\$q\$,"
		  . q{ options => '{"reconcile": ["count(*)", "sum(revenue)"], "lock_timeout": "200ms"}')});
}

# day => fingerprint hash of each partition of a table
sub fingerprints
{
	my ($t) = @_;
	my %fp;
	for my $d (@days)
	{
		$fp{$d} = $coord->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('${t}_$d')");
	}
	return \%fp;
}
my $before = fingerprints('rev');

# the twin, uninterrupted
my $twin_run = plan_run('rev_twin');
$coord->safe_psql('postgres', "SET client_min_messages = warning; CALL backfill_run($twin_run)");
is($coord->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $twin_run"), 'done',
	'the twin run is done');
my $twin = fingerprints('rev_twin');

my $run = plan_run('rev');
$coord->safe_psql('postgres', "SET client_min_messages = warning; CALL backfill_run($run, 2)");
is($coord->safe_psql('postgres', "SELECT string_agg(status, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = $run"),
	'done,done,pending,pending,pending,pending', 'tasks 1 and 2 done');

# Task 3 (2026-03-13) held at its swap by a reader of its partition on the coordinator.
my $reader = $coord->background_psql('postgres');
$reader->query_safe('BEGIN');
$reader->query_safe('SELECT count(*) FROM rev_0313');
my $runner = $coord->background_psql('postgres', on_error_stop => 0);
$runner->query_until(qr/started/, "\\echo started\nSET client_min_messages = warning;\nCALL backfill_run($run, 1);\n\\echo finished\n");
ok( $coord->poll_query_until('postgres',
		q{SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		  WHERE NOT l.granted AND a.query LIKE 'CALL backfill_run%'}),
	'task 3 waits at its swap, its staging table filled on the workers');

$w2->stop('immediate');
# (the reader's own connection to worker 2 is gone too: its COMMIT warns)
$reader->query('COMMIT');
$reader->quit;
$runner->quit;
$w2->start;
$coord->poll_query_until('postgres', 'SELECT count(*) = 0 FROM citus_check_cluster_node_health() WHERE NOT result')
  or diag('the cluster did not become healthy');

is($coord->safe_psql('postgres', "SELECT string_agg(status, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = $run AND task <= 2"),
	'done,done', 'tasks 1 and 2 are still done');
is($coord->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('rev_0313')"), $before->{'0313'},
	'the interrupted task left its partition as it was');
is($coord->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"), '0',
	'no staging table left on the coordinator');
for my $w ($w1, $w2)
{
	is($w->safe_psql('postgres', "SET citus.override_table_visibility = off; SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"),
		'0', 'no staging table or shard left on ' . $w->name);
}
is($coord->safe_psql('postgres', "SELECT count(*) FROM backfill_log WHERE run_id = $run"), '2',
	'one log record per done task');

# Resumed: the run finishes without redoing tasks 1 and 2.
$coord->safe_psql('postgres', "SET client_min_messages = warning; CALL backfill_run($run)");
is($coord->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'the run is done');
is($coord->safe_psql('postgres', "SELECT string_agg(attempts::text, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = $run AND task <= 2"),
	'1,1', 'tasks 1 and 2 were not redone');
my $after = fingerprints('rev');
for my $d (@days[ 1 .. 6 ])
{
	is($after->{$d}, $twin->{$d}, "partition $d equals the twin's");
}
for my $d (@days[ 0, 7 ])
{
	is($after->{$d}, $before->{$d}, "partition $d, outside the range, is untouched");
}
is($coord->safe_psql('postgres', "SELECT untouched_changed FROM backfill_progress WHERE run_id = $run"), '0',
	'the run found nothing outside its range changed');

$_->stop for @nodes;
done_testing();
