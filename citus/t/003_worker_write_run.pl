# citus/t/003_worker_write_run.pl: a write through a worker during a run's fill is never
# acknowledged and lost.
#
# A coordinator and two workers, a table partitioned by day and distributed on order_id.  A
# run replaces one day with a source that takes a few seconds; during its fill a client of
# worker 1 inserts rows of that day through the distributed parent (their shards on either
# worker).  Whatever the order the nodes let them through in (the insert may wait for the
# swap and land in the new day, make the swap give up, or go into the old rows while the
# task backs off, after which the next attempt refuses to discard it), every insert that was
# acknowledged is in the table after the run's CALL, and the day otherwise holds either its
# old rows or the source's.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

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
$coord->safe_psql('postgres', q{
	CREATE TABLE orders (order_id bigint NOT NULL, order_date date NOT NULL, amount numeric(12,2),
		PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
	CREATE TABLE orders_0314 PARTITION OF orders FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
	CREATE TABLE orders_0315 PARTITION OF orders FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
	CREATE TABLE day_v2 (order_id bigint, order_date date, amount numeric(12,2));
	SELECT create_distributed_table('orders', 'order_id', shard_count => 4);
	SELECT create_distributed_table('day_v2', 'order_id', colocate_with => 'orders');
	INSERT INTO orders SELECT g, date '2026-03-14' + (g % 2), g FROM generate_series(1, 100) g;
	INSERT INTO day_v2 SELECT g, '2026-03-15', 1000 + g FROM generate_series(1001, 1080) g;});

my @acked;
for my $round (1 .. 3)
{
	my $run = $coord->safe_psql('postgres', q{SELECT backfill_plan('orders', '2026-03-15', '2026-03-16',
		$q$SELECT v.order_id, v.order_date, v.amount FROM day_v2 v, (SELECT pg_sleep(3)::text AS slept) w
		   WHERE v.order_date >= $1 AND v.order_date < $2$q$,
		options => '{"lock_timeout": "200ms", "on_error": "continue"}')});
	my ($rout, $rerr) = ('', '');
	my $caller = IPC::Run::start([ 'psql', '-X', '-d', $coord->connstr('postgres'), '-c', "CALL backfill_run($run)" ],
		'>', \$rout, '2>', \$rerr);
	sleep(1);
	# two rows through worker 1, one a shard of each worker, in the middle of the fill
	my @writers;
	for my $id (9000 + 10 * $round + 1, 9000 + 10 * $round + 2)
	{
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start([ 'psql', '-X', '-d', $w1->connstr('postgres'), '-v', 'ON_ERROR_STOP=1',
				'-c', "INSERT INTO orders VALUES ($id, '2026-03-15', 1)" ], '>', \$out, '2>', \$err);
		push @writers, [ $id, $h, \$out, \$err ];
	}
	$caller->finish;
	for my $w (@writers)
	{
		my ($id, $h, $out, $err) = @$w;
		$h->finish;
		push @acked, $id if $$out =~ /INSERT 0 1/;
	}
	my $status = $coord->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run");
	note("round $round: run $status; inserts acknowledged so far: @acked; $rerr");
	$coord->safe_psql('postgres', "SELECT backfill_cancel($run) WHERE '$status' NOT IN ('done', 'cancelled', 'failed')");
}
my $kept = $coord->safe_psql('postgres',
	'SELECT string_agg(order_id::text, \' \' ORDER BY order_id) FROM orders WHERE order_id > 9000');
is($kept, join(' ', sort { $a <=> $b } @acked), 'every insert acknowledged through worker 1 is in the table');
cmp_ok(scalar(@acked), '>', 0, 'and some were acknowledged');
is($coord->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE order_id BETWEEN 1001 AND 1080) IN (0, 80)
	AND count(*) FILTER (WHERE order_id <= 100) IN (0, 50)
	AND (count(*) FILTER (WHERE order_id BETWEEN 1001 AND 1080) = 0) <> (count(*) FILTER (WHERE order_id <= 100) = 0)
	FROM orders WHERE order_date = '2026-03-15'}), 't', 'the day holds its old rows or the source\'s, whole');

$_->stop for @nodes;
done_testing();
