# t/010_fingerprint_workers.pl: a fingerprint read by parallel workers is the serial one.
#
# With no scope, backfill_fingerprint reads a table's storage directly, and with parallel
# query allowed it hands blocks of each partition to parallel workers beside the leader.
# On a cluster of its own (so the workers it asks for are free to start), this checks that
# workers did start (the DEBUG line the leader writes), and that the fingerprint they give,
# with the leader reading too and with the workers alone, is the one of a serial read and of
# the query path (a scope of 'true'), for rows of many kinds of values, for partitions whose
# columns lie in other physical orders (one with two columns of one type swapped), a
# dropped column, a partition partitioned again, and that a REPEATABLE READ transaction's
# workers read its snapshot, not rows committed since.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('workers');
$node->init;
$node->append_conf('postgresql.conf', q{
max_worker_processes = 8
max_parallel_workers = 8
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TYPE pair AS (x int, t text);
	CREATE TABLE many (id int, gone text, big bigint, t text, n numeric, f8 float8, b bool,
		d date, ts timestamptz, u uuid, jb jsonb, ia int[], p pair, r int4range, rel regclass);
	ALTER TABLE many DROP COLUMN gone;
	INSERT INTO many
	SELECT g, g::bigint * 1000003,
	       CASE WHEN g % 11 = 0 THEN NULL WHEN g % 97 = 0 THEN repeat('long ' || g, 2000) ELSE 'text ' || g END,
	       CASE WHEN g % 13 = 0 THEN NULL ELSE round(g / 7.0, g % 5) END,
	       CASE WHEN g % 17 = 0 THEN 'NaN'::float8 ELSE g / 3.0 END,
	       g % 2 = 0, date '2026-01-01' + g % 400,
	       timestamptz '2026-01-01 00:00+00' + g * interval '37 minutes',
	       md5(g::text)::uuid, jsonb_build_object('g', g),
	       CASE WHEN g % 19 = 0 THEN NULL ELSE ARRAY[g, NULL, g + 1] END,
	       ROW(g, 'p' || g)::pair, int4range(g, g + g % 5), 'many'::regclass
	FROM generate_series(1, 20000) g;

	CREATE TABLE part (a int, b int, c text, d date) PARTITION BY RANGE (d);
	CREATE TABLE part_1 PARTITION OF part FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
	-- a and b swapped: the same types in the same places, under each other's names
	CREATE TABLE part_2 (b int, a int, c text, d date);
	ALTER TABLE part ATTACH PARTITION part_2 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
	CREATE TABLE part_3 (gone int, d date, c text, a int, b int);
	ALTER TABLE part_3 DROP COLUMN gone;
	ALTER TABLE part ATTACH PARTITION part_3 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
	CREATE TABLE part_4 PARTITION OF part FOR VALUES FROM ('2026-04-01') TO ('2026-06-01') PARTITION BY RANGE (d);
	CREATE TABLE part_4a PARTITION OF part_4 FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
	CREATE TABLE part_4b PARTITION OF part_4 FOR VALUES FROM ('2026-05-01') TO ('2026-06-01');
	INSERT INTO part SELECT g, g * 7 % 1001, 'c' || g % 13, date '2026-01-01' + g % 150 FROM generate_series(1, 30000) g;
	VACUUM ANALYZE many, part;
});

my $parallel = q{
	SET min_parallel_table_scan_size = 0;
	SET max_parallel_workers_per_gather = 2;
};

# The fingerprint of $rel (rows and hash) under $settings, and what the server said.
sub fingerprint
{
	my ($settings, $call) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"$settings\nSET client_min_messages = debug1;\nSELECT row(f.*)::text FROM $call f;");
	is($ret, 0, "$call ran") or diag($err);
	return ($out, $err);
}

foreach my $rel ('many', 'part', 'part_2')
{
	my ($serial) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('$rel')");
	my ($query) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('$rel', 'true')");
	is($serial, $query, "$rel: a direct serial read gives the query path's fingerprint");

	my ($with, $err) = fingerprint($parallel, "backfill_fingerprint('$rel')");
	like($err, qr/backfill_fingerprint: [12] of 2 parallel workers started, the leader reading too/,
		"$rel: parallel workers were asked for and started");
	is($with, $serial, "$rel: workers and the leader give the serial fingerprint");

	my ($alone, $err2) = fingerprint("$parallel SET parallel_leader_participation = off;",
		"backfill_fingerprint('$rel')");
	like($err2, qr/backfill_fingerprint: [12] of 2 parallel workers started, the leader only waiting/, "$rel: workers started, the leader only waiting");
	is($alone, $serial, "$rel: the workers alone give the serial fingerprint");
}

# Two columns of one type swapped between partitions are told apart: the same rows
# written into part_2 under the other names change the fingerprint.
{
	my ($before) = fingerprint($parallel, "backfill_fingerprint('part')");
	$node->safe_psql('postgres', q{
		CREATE TABLE part_2_swapped (a int, b int, c text, d date);
		INSERT INTO part_2_swapped (a, b, c, d) SELECT a, b, c, d FROM part_2;
		ALTER TABLE part DETACH PARTITION part_2;
		ALTER TABLE part ATTACH PARTITION part_2_swapped FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
	});
	my ($same) = fingerprint($parallel, "backfill_fingerprint('part')");
	is($same, $before, 'the same values under the same names in another layout: the same fingerprint');
	$node->safe_psql('postgres', q{UPDATE part_2_swapped SET a = b, b = a});
	my ($swapped) = fingerprint($parallel, "backfill_fingerprint('part')");
	isnt($swapped, $before, 'values swapped between two columns of one type: another fingerprint');
}

# A REPEATABLE READ transaction's workers read its snapshot: rows another session commits
# meanwhile (through psql's shell escape, its own connection) are not counted.
{
	my $psql = $node->config_data('--bindir') . '/psql';
	my ($host, $port) = ($node->host, $node->port);
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		$parallel
		BEGIN ISOLATION LEVEL REPEATABLE READ;
		CREATE TEMP TABLE seen AS SELECT (backfill_fingerprint('many')).*;
		\\! $psql -X -q -h '$host' -p $port -d postgres -c "INSERT INTO many (id) SELECT -g FROM generate_series(1, 5000) g"
		SELECT (SELECT row(f.*)::text FROM backfill_fingerprint('many') f) = (SELECT row(s.*)::text FROM seen s),
		       (SELECT count(*) FROM many);
		COMMIT;
		SELECT (SELECT row(f.*)::text FROM backfill_fingerprint('many') f) = (SELECT row(s.*)::text FROM seen s);
	});
	is($ret, 0, 'the REPEATABLE READ script ran') or diag($err);
	is($out, "t|20000\nf", 'a REPEATABLE READ fingerprint ignores rows committed since its snapshot, and sees them after');
}

# Workers see what the leader's transaction wrote, in a subtransaction too: the rows a
# savepoint's UPDATE changed, as the serial read in that savepoint sees them.
{
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		BEGIN;
		SAVEPOINT s;
		UPDATE many SET n = n + 1 WHERE id % 10 = 0;
		SET LOCAL max_parallel_workers_per_gather = 0;
		CREATE TEMP TABLE serial_in_savepoint AS SELECT (backfill_fingerprint('many')).*;
		SET LOCAL min_parallel_table_scan_size = 0;
		SET LOCAL max_parallel_workers_per_gather = 2;
		SET LOCAL client_min_messages = debug1;
		SELECT (SELECT row(f.*)::text FROM backfill_fingerprint('many') f) = (SELECT row(s.*)::text FROM serial_in_savepoint s);
		ROLLBACK;
	});
	is($ret, 0, 'the savepoint script ran') or diag($err);
	like($err, qr/backfill_fingerprint: [12] of 2 parallel workers started/, 'workers started inside the savepoint');
	is($out, 't', "inside a savepoint, after an UPDATE, the workers' fingerprint is the serial one");
}

# A merge fingerprints its target before and after writing, reading its own writes: with
# workers, what it logs is what a serial read gives before it and after it commits.
{
	my ($before) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('many')");
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		$parallel
		SET client_min_messages = debug1;
		SELECT updated FROM backfill_merge('many',
			'SELECT id, big + 1 AS big, t, n, f8, b, d, ts, u, jb, ia, p, r, rel FROM many WHERE id % 3 = 0', '{id}');
	});
	is($ret, 0, 'the merge ran') or diag($err);
	is($out, '6666', 'premise: the merge updated the third of the rows holding a bigint');
	my @reads = ($err =~ /backfill_fingerprint: [12] of 2 parallel workers started/g);
	cmp_ok(scalar(@reads), '>=', 2, 'workers read both of the merge\'s fingerprints');
	my ($after) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('many')");
	my $logged = $node->safe_psql('postgres', q{
		SELECT format('(%s,%s)|(%s,%s)', rows_before, fingerprint_before, rows_after, fingerprint_after)
		FROM backfill_log WHERE operation = 'merge' ORDER BY id DESC LIMIT 1});
	is($logged, "$before|$after", 'the merge logged the serial fingerprints of before and after');
	isnt($before, $after, 'premise: the merge changed the fingerprint');
}

# A replacement fingerprints the old partition (the new one as it fills it); with workers,
# it logs what serial reads give before and after.  A probe runs it twice in savepoints,
# reading the partition its own transaction just swapped in after each run: idempotent.
{
	$node->safe_psql('postgres', q{
		CREATE TABLE part_1_v2 AS SELECT a, b * 2 AS b, c, d FROM part_1;
	});
	my ($before) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('part_1')");
	my $replace = q{SELECT backfill_replace_partition('part_1', 'SELECT * FROM part_1_v2 WHERE d >= $1 AND d < $2')};
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		$parallel
		SET client_min_messages = debug1;
		SELECT idempotent FROM backfill_probe_idempotency(\$p\$$replace\$p\$, 'part_1');
	});
	is($ret, 0, 'the probe ran') or diag($err);
	is($out, 't', 'the probe of the replacement, read by workers, finds it idempotent');
	my @probe_reads = ($err =~ /backfill_fingerprint: [12] of 2 parallel workers started/g);
	cmp_ok(scalar(@probe_reads), '>=', 3, 'workers read the probe\'s fingerprints');

	($ret, $out, $err) = $node->psql('postgres', qq{
		$parallel
		SET client_min_messages = debug1;
		SELECT rows_after FROM backfill_replace_partition('part_1', 'SELECT * FROM part_1_v2 WHERE d >= \$1 AND d < \$2');
	});
	is($ret, 0, 'the replacement ran') or diag($err);
	my @reads = ($err =~ /backfill_fingerprint: [12] of 2 parallel workers started/g);
	cmp_ok(scalar(@reads), '>=', 1, 'workers read the old partition');
	my ($after) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('part_1')");
	my ($v2) = fingerprint('SET max_parallel_workers_per_gather = 0;', "backfill_fingerprint('part_1_v2')");
	is($after, $v2, 'premise: the partition now holds the source\'s rows');
	my $logged = $node->safe_psql('postgres', q{
		SELECT format('(%s,%s)|(%s,%s)', rows_before, fingerprint_before, rows_after, fingerprint_after)
		FROM backfill_log WHERE operation = 'replace' ORDER BY id DESC LIMIT 1});
	is($logged, "$before|$after", 'the replacement logged the serial fingerprints of before and after');
}

$node->stop;
done_testing();
