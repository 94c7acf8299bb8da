# t/002_replace_crash.pl: a server killed in the middle of backfill_replace_partition.
#
# The staging table, its rows, the swap and the log record all belong to the caller's
# transaction: whatever stage the server dies at, after crash recovery the partition is
# wholly old or wholly new, its fingerprint equals the log's "before" or "after", the log
# has a record exactly when the new rows are there, and no staging table is left.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
	INSERT INTO orders SELECT g, date '2026-03-14' + (g % 3), g % 500, g % 11 = 0
	FROM generate_series(1, 30000) g;
	CREATE TABLE fct (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
		PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
	CREATE TABLE fct_0314 PARTITION OF fct FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
	CREATE TABLE fct_0315 PARTITION OF fct FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
	CREATE TABLE fct_0316 PARTITION OF fct FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
	INSERT INTO fct SELECT order_id, order_date, amount FROM orders;
});

my $fp = sub { $node->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('$_[0]')") };
my $old_0315 = $fp->('fct_0315');
my $old_0314 = $fp->('fct_0314');

# The fixed model; it waits on advisory lock 7 before producing rows when $gate is set.
my $source = q{SELECT o.order_id, o.order_date,
	CASE WHEN o.refunded THEN -o.amount ELSE o.amount END AS revenue
	FROM orders o, (SELECT pg_advisory_xact_lock_shared(7)) gate
	WHERE o.order_date >= $1 AND o.order_date < $2};

# Start a replacement in the background and return its session.
sub start_replace
{
	my ($lock_timeout) = @_;
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	$h->query_until(qr/started/,
		"\\echo started\n"
		  . "SELECT * FROM backfill_replace_partition('fct_0315', \$q\$$source\$q\$,"
		  . " lock_timeout_ms => $lock_timeout, max_attempts => 1);\n");
	return $h;
}

# Stop a background session whose server went away.
sub forget
{
	eval { $_->quit } for @_;
}

# Wait until some session waits for a lock of the given type.
sub wait_for_lock_wait
{
	my ($locktype) = @_;
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND locktype = '$locktype'")
	  or die "no session waited for a $locktype lock";
}

# Kill the server hard, as a power cut would, and start it again.
sub crash_and_restart
{
	$node->stop('immediate');
	$node->start;
}

sub check_intact
{
	my ($stage, $expect_new) = @_;
	my $now = $fp->('fct_0315');
	my ($log_rows, $log_after) = split /\|/, $node->safe_psql('postgres',
		"SELECT count(*), max(fingerprint_after) FROM backfill_log WHERE partition = 'public.fct_0315'");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%' OR relname LIKE '%_archived%'"),
		'0', "$stage: no staging table or archive is left");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_inherits WHERE inhparent = 'fct'::regclass"),
		'3', "$stage: the parent still has its three partitions");
	is($fp->('fct_0314'), $old_0314, "$stage: the untouched partition is bit for bit as before");
	if ($expect_new)
	{
		isnt($now, $old_0315, "$stage: the partition holds the new rows");
		is($log_after, $now, "$stage: the log's fingerprint_after is the partition's");
	}
	else
	{
		is($now, $old_0315, "$stage: the partition holds the old rows, all of them");
		is($log_rows, '0', "$stage: no log record for a swap that did not happen");
	}
}

# 1. Killed during the fill: the source is blocked on the advisory lock.
{
	my $gate = $node->background_psql('postgres');
	$gate->query_safe('SELECT pg_advisory_lock(7)');
	my $h = start_replace(1000);
	wait_for_lock_wait('advisory');
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'fct_0315' AND l.mode = 'ShareRowExclusiveLock'"),
		'1', 'the fill holds the partition in SHARE ROW EXCLUSIVE mode');
	crash_and_restart();
	forget($h, $gate);
	check_intact('killed during the fill', 0);
}

# 2. Killed between the fill and the swap: a reader holds the parent, the swap waits for it.
{
	my $reader = $node->background_psql('postgres');
	$reader->query_safe('BEGIN');
	$reader->query_safe('SELECT count(*) FROM fct');
	my $h = start_replace(600000);
	wait_for_lock_wait('relation');
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"),
		'0', 'the staging table of the uncommitted fill is invisible to others');
	crash_and_restart();
	forget($h, $reader);
	check_intact('killed while the swap waited for its lock', 0);
}

# 3. Killed right after the commit: the new rows and the log record are both there.
{
	my $ret = $node->safe_psql('postgres',
		"SELECT rows_after FROM backfill_replace_partition('fct_0315', \$q\$$source\$q\$)");
	is($ret, '10000', 'the replacement went through');
	crash_and_restart();
	check_intact('killed right after the commit', 1);
}

$node->stop;
done_testing();
