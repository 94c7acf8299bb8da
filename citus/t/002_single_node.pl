# citus/t/002_single_node.pl: a replacement and a run on Citus with every shard on the
# coordinator (one node, shouldhaveshards), as a single-node Citus is set up.
#
# The replacement's work on the shards (the lock that holds off a write straight into a shard,
# the new shards' rows frozen) then runs on the coordinator's own placements, in its own
# backend.  It must hold as on workers: the day replaced equals the source (fingerprints), no
# staging table or shard is left, a REPEATABLE READ transaction whose snapshot predates the
# swap sees the new day whole (its rows frozen), a run with a reconcile ends done with the
# days outside its range untouched, a replacement that kept the old day is undone, and a
# merge on the key writes the changed rows once; with Citus's local execution off, a
# replacement reaches the coordinator's shards through connections to itself, as Citus does.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('single');
$node->init;
$node->append_conf('postgresql.conf', qq{
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus'
max_prepared_transactions = 200
citus.node_conninfo = 'sslmode=disable'
});
$node->start;
$node->safe_psql('postgres', sprintf(q{
	CREATE EXTENSION citus;
	SELECT citus_set_coordinator_host('127.0.0.1', %d);
	SELECT citus_set_node_property('127.0.0.1', %d, 'shouldhaveshards', true);
	CREATE EXTENSION backfill;}, $node->port, $node->port));

$node->safe_psql('postgres', q{
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2));
	SELECT create_distributed_table('orders', 'order_id', shard_count => 4);
	INSERT INTO orders SELECT g, date '2026-03-10' + (g % 4), g % 500 FROM generate_series(1, 4000) g;
	CREATE TABLE rev (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
		PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
	SELECT format('CREATE TABLE %I PARTITION OF rev FOR VALUES FROM (%L) TO (%L)',
				  'rev_' || to_char(d, 'MMDD'), d::date, d::date + 1)
	FROM generate_series(date '2026-03-10', date '2026-03-13', interval '1 day') d \gexec
	SELECT create_distributed_table('rev', 'order_id', colocate_with => 'orders');
	INSERT INTO rev SELECT order_id, order_date, amount FROM orders;
	CREATE TABLE rev_model AS
		SELECT order_id, order_date, (amount * 2)::numeric(12,2) AS revenue FROM orders;
	CREATE TABLE unrelated (x bigint);
	SELECT create_distributed_table('unrelated', 'x', colocate_with => 'orders');
	INSERT INTO unrelated VALUES (1);});
is($node->safe_psql('postgres', q{SELECT count(*) > 0 AND bool_and(groupid = 0) FROM pg_dist_placement}),
	't', 'every shard placement is on the coordinator');

my $model = q{SELECT order_id, order_date, amount * 2 AS revenue FROM orders WHERE order_date >= $1 AND order_date < $2};
# same_as_model(day): whether the day's partition fingerprints as the model's rows of that day
sub same_as_model
{
	my ($day) = @_;
	my $date = '2026-' . substr($day, 0, 2) . '-' . substr($day, 2, 2);
	return $node->safe_psql('postgres', qq{
		SELECT (backfill_fingerprint('rev_$day')).hash
			 = (backfill_fingerprint('rev_model', \$\$order_date = '$date'\$\$)).hash});
}

# a REPEATABLE READ reader whose snapshot predates the replacement
my $rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM unrelated'), '1', 'the reader took its snapshot');

my $fp_0310 = $node->safe_psql('postgres', q{SELECT (backfill_fingerprint('rev_0310'))::text});
is($node->safe_psql('postgres', qq{
	SELECT rows_after FROM backfill_replace_partition('rev_0311', \$q\$$model\$q\$)}),
	'1000', 'the day is replaced with the source\'s 1000 rows');
is(same_as_model('0311'), 't', 'the new day fingerprints as the source');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'}),
	'0', 'no staging table or shard of one is left');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'backfill_stage%'}),
	'0', 'no staging table is left in Citus\'s metadata');

is($rr->query_safe(q{SELECT count(*) || ' ' || sum(revenue) FROM rev WHERE order_date = '2026-03-11'}),
	$node->safe_psql('postgres', q{SELECT count(*) || ' ' || sum(revenue) FROM rev_model WHERE order_date = '2026-03-11'}),
	'a REPEATABLE READ snapshot older than the swap sees the new day whole');
$rr->query_safe('COMMIT');
$rr->quit;

# a run over two days, reconciled
my $run = $node->safe_psql('postgres', qq{
	SELECT backfill_plan('rev', '2026-03-12', '2026-03-14', \$q\$$model\$q\$,
		options => '{"reconcile": ["count(*)", "sum(revenue)"]}')});
$node->safe_psql('postgres', "CALL backfill_run($run)");
is($node->safe_psql('postgres', "SELECT status || ' ' || tasks_done FROM backfill_progress WHERE run_id = $run"),
	'done 2', 'a run with a reconcile over two days ends done');
is(same_as_model('0312') . same_as_model('0313'), 'tt', 'each day of the run fingerprints as the source');
is($node->safe_psql('postgres', q{SELECT (backfill_fingerprint('rev_0310'))::text}),
	$fp_0310, 'the day outside the replacements is untouched');

# a replacement that keeps the old day, undone: the day is the old one again
my $fp_0312 = $node->safe_psql('postgres', q{SELECT (backfill_fingerprint('rev_0312'))::text});
my $log = $node->safe_psql('postgres', q{
	SELECT log_id FROM backfill_replace_partition('rev_0312',
		'SELECT order_id, order_date, revenue + 1 AS revenue FROM rev_model WHERE order_date >= $1 AND order_date < $2',
		keep_old => true)});
isnt($node->safe_psql('postgres', q{SELECT (backfill_fingerprint('rev_0312'))::text}), $fp_0312,
	'a replacement that keeps the old day changes it');
$node->safe_psql('postgres', "SELECT backfill_undo($log)");
is($node->safe_psql('postgres', q{SELECT (backfill_fingerprint('rev_0312'))::text}), $fp_0312,
	'undone, the day is as before it');

# a merge on the key, scoped to a day: the day becomes the source, a rerun writes nothing
is($node->safe_psql('postgres', q{
	SELECT inserted + updated FROM backfill_merge('rev',
		$$SELECT order_id, order_date, (amount * 3)::numeric(12,2) AS revenue FROM orders WHERE order_date = '2026-03-13'$$,
		'{order_id,order_date}', $$order_date = '2026-03-13'$$)}),
	'1000', 'a merge writes the day\'s 1000 changed rows');
is($node->safe_psql('postgres', q{
	SELECT inserted + updated + deleted FROM backfill_merge('rev',
		$$SELECT order_id, order_date, (amount * 3)::numeric(12,2) AS revenue FROM orders WHERE order_date = '2026-03-13'$$,
		'{order_id,order_date}', $$order_date = '2026-03-13'$$)}),
	'0', 'run again, it writes nothing');

# the same with Citus's local execution off: the coordinator's shards are reached through
# connections to itself, and so is the replacement's work on them
is($node->safe_psql('postgres', q{
	SET citus.enable_local_execution = off;
	SELECT rows_after FROM backfill_replace_partition('rev_0311',
		'SELECT order_id, order_date, revenue + 5 AS revenue FROM rev_model WHERE order_date >= $1 AND order_date < $2')}),
	'1000', 'with local execution off, a replacement goes through');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) || ' ' || sum(revenue) FROM rev_0311)
		 = (SELECT count(*) || ' ' || sum(revenue + 5) FROM rev_model WHERE order_date = '2026-03-11')}),
	't', 'and the day is the new source\'s');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'}),
	'0', 'and leaves no staging table or shard of one');

$node->stop;
done_testing();
