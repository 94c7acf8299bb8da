# t/008_logical_replication.pl: backfills of a published table, with a real subscriber.
#
# Two throwaway clusters on this machine: a publisher (wal_level = logical) whose
# partitioned table is in a publication, and a subscriber to it over the publisher's
# Unix socket.  A replacement swaps tables by DETACH and ATTACH, which logical
# replication does not carry, so:
# - backfill_replace_partition on a published partition is refused, and its hint points
#   to backfill_merge and a run planned with strategy => 'merge', not to taking the table
#   out of the publication (which leaves the subscriber stale);
# - backfill_plan with strategy 'replace' on a published table is refused at plan time,
#   before any task, and writes no run;
# - backfill_merge and a run planned with strategy => 'merge' do replicate: after they
#   commit, the subscriber's rows fingerprint as the publisher's, deletions included.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $schema = q{
	CREATE TABLE sales (id int, day date, amount numeric(12,2), PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
	CREATE TABLE sales_0301 PARTITION OF sales FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE TABLE sales_0302 PARTITION OF sales FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
	CREATE TABLE sales_0303 PARTITION OF sales FOR VALUES FROM ('2026-03-03') TO ('2026-03-04');
};

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

$pub->safe_psql('postgres', "CREATE EXTENSION backfill; $schema" . q{
	INSERT INTO sales SELECT g, date '2026-03-01' + g % 3, g FROM generate_series(1, 3000) g;
	CREATE TABLE orders AS SELECT g AS id, date '2026-03-01' + g % 3 AS day, (g * 2)::numeric(12,2) AS amount
		FROM generate_series(1, 3000) g WHERE g % 10 <> 0;
	CREATE PUBLICATION pub_sales FOR TABLE sales;
});
$sub->safe_psql('postgres', "CREATE EXTENSION backfill; $schema");

# over the publisher's Unix socket (the clusters listen on no TCP port)
my $pubconn = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION sub_sales CONNECTION '$pubconn' PUBLICATION pub_sales");
$sub->wait_for_subscription_sync($pub, 'sub_sales');

my $fp = q{SELECT string_agg((backfill_fingerprint(p))::text, ' ' ORDER BY p::text)
	FROM unnest('{sales_0301,sales_0302,sales_0303}'::regclass[]) p};

# Each database hashes rows under its own secret key, so the same rows fingerprint
# differently in two databases until they share the key: the subscriber takes the
# publisher's row of backfill_key_data, older than its own (the oldest row is the key).
isnt($sub->safe_psql('postgres', $fp), $pub->safe_psql('postgres', $fp),
	'under their own keys, the same rows fingerprint differently in the two databases');
my $keyrow = $pub->safe_psql('postgres',
	q{SELECT format('INSERT INTO backfill_key_data VALUES (%L, %L)', key, created) FROM backfill_key_data});
$sub->safe_psql('postgres', $keyrow);
is($sub->safe_psql('postgres', $fp), $pub->safe_psql('postgres', $fp), 'the subscriber starts in sync');

# A replacement of a published partition: refused, and told to merge.
my ($rc, $out, $err) = $pub->psql('postgres',
	q{SELECT backfill_replace_partition('sales_0301', 'SELECT id, day, amount FROM orders WHERE day >= $1 AND day < $2')});
isnt($rc, 0, 'backfill_replace_partition on a published partition fails');
like($err, qr/cannot replace partition public\.sales_0301: publication "pub_sales" replicates it/, 'naming the publication');
like($err, qr/HINT:  Use backfill_merge on the partition with a key \(or a run planned with strategy => 'merge'\)/,
	'its hint points to backfill_merge and a merge run');
unlike($err, qr/take the table out of the publication for the backfill[.,]/i,
	'and no longer says to take the table out of the publication');

# A replace run on a published table: refused when planned, not at its first task.
($rc, $out, $err) = $pub->psql('postgres',
	q{SELECT backfill_plan('sales', '2026-03-01', '2026-03-04', 'SELECT id, day, amount FROM orders WHERE day >= $1 AND day < $2')});
isnt($rc, 0, 'backfill_plan with strategy replace on a published table fails');
like($err, qr/cannot plan a run replacing the partitions of public\.sales: publication "pub_sales" replicates partition public\.sales_0301/,
	'at plan time, naming the publication and the partition');
like($err, qr/HINT:  Plan the run with strategy => 'merge' and a key/, 'its hint says to plan a merge');
is($pub->safe_psql('postgres', 'SELECT count(*) FROM backfill_runs'), '0', 'no run was written');

# A merge run over the whole range, with deletions: it replicates.
my $run = $pub->safe_psql('postgres', q{
	SELECT backfill_plan('sales', '2026-03-01', '2026-03-04',
		'SELECT id, day, amount FROM orders WHERE day >= $1 AND day < $2', strategy => 'merge', key => '{id,day}',
		options => '{"delete_missing": true}')});
$pub->safe_psql('postgres', "CALL backfill_run($run)");
is($pub->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'the merge run is done');
my $want = $pub->safe_psql('postgres',
	q{SELECT string_agg((backfill_fingerprint('orders', format('day = %L', d)))::text, ' ' ORDER BY d)
	  FROM unnest('{2026-03-01,2026-03-02,2026-03-03}'::date[]) d});
is($pub->safe_psql('postgres', $fp), $want, 'the publisher holds the recomputed rows');
$pub->wait_for_catchup('sub_sales');
is($sub->safe_psql('postgres', $fp), $want, 'and the subscriber holds them too, deletions included');

# backfill_merge on one partition: it replicates.
$pub->safe_psql('postgres', q{
	UPDATE orders SET amount = amount + 1 WHERE day = '2026-03-02';
	SELECT backfill_merge('sales_0302', $$SELECT id, day, amount FROM orders WHERE day = '2026-03-02'$$, '{id,day}')});
$pub->wait_for_catchup('sub_sales');
is($sub->safe_psql('postgres', $fp), $pub->safe_psql('postgres', $fp), 'backfill_merge on a partition replicates');
is($sub->safe_psql('postgres', q{SELECT sum(amount) FROM sales WHERE day = '2026-03-02'}),
	$pub->safe_psql('postgres', q{SELECT sum(amount) FROM orders WHERE day = '2026-03-02'}),
	'the subscriber sums the new amounts');

$sub->stop;
$pub->stop;
done_testing();
