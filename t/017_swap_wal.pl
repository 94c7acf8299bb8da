# t/017_swap_wal.pl: a swap takes its locks with its copy's WAL already on disk.
#
# Readers queue behind a swap's ACCESS EXCLUSIVE lock until its COMMIT, which waits for the WAL
# flush.  The copy of a day is megabytes of WAL; the swap writes it out before it asks for its
# locks, so that the COMMIT under them flushes only the swap's own few records.
#
# - The background WAL writer is slowed to one round in 10 s, the background writer writes no
#   buffers, shared_buffers holds the copy (an evicted dirty buffer flushes the WAL up to it) and
#   nothing else commits, so what is flushed is what the replacement flushed itself.  A reader holds the partition; the
#   replacement fills a 200,000-row copy and waits for the lock: the WAL is flushed to within a
#   page of the insert position (8 MB short before the swap flushed first).
# - The reader gone, the replacement completes: the partition holds the source's rows.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('swapwal');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
autovacuum = off
wal_writer_delay = 10000
bgwriter_lru_maxpages = 0
shared_buffers = 128MB
checkpoint_timeout = 1h
max_wal_size = 4GB
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE ev (id bigint NOT NULL, day date NOT NULL, note text) PARTITION BY RANGE (day);
	CREATE TABLE ev_1 PARTITION OF ev FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE INDEX ON ev (id);
	CREATE INDEX ON ev (note);
	INSERT INTO ev SELECT g, '2026-03-01', md5(g::text) FROM generate_series(1, 200000) g;
	CHECKPOINT;
});

my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN');
$reader->query_safe('SELECT count(*) FROM ev_1');

my $swap = $node->background_psql('postgres', on_error_stop => 0);
$swap->query_until(qr/started/, q{\echo started
SELECT rows_after FROM backfill_replace_partition('ev_1',
	$$SELECT id, day, note || 'x' AS note FROM ev WHERE day >= $1 AND day < $2$$,
	lock_timeout_ms => 600000, max_attempts => 1);
});
$node->poll_query_until('postgres', q{
	SELECT EXISTS (SELECT FROM pg_locks WHERE relation = 'ev_1'::regclass
		AND mode = 'AccessExclusiveLock' AND NOT granted)})
  or die 'the replacement never waited for its swap lock';

my ($behind, $written) = split /\|/, $node->safe_psql('postgres', q{
	SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn()),
		pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)
	FROM pg_control_checkpoint()});
cmp_ok($written, '>', 10_000_000, "the copy wrote megabytes of WAL ($written bytes)");
cmp_ok($behind, '<', 8192, "waiting for its swap lock, the replacement has flushed it all ($behind bytes not flushed)");

$reader->query_safe('COMMIT');
$reader->quit;
my $out = $swap->query_safe('SELECT 1');
$swap->quit;
is($node->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE note LIKE '%x') || '/' || count(*) FROM ev_1}),
	'200000/200000', 'then the swap went through: every row is the source\'s');

$node->stop;
done_testing();
