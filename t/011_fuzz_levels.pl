# t/011_fuzz_levels.pl: the write paths fed seeded random isolation levels and values that
# round when stored.
#
# Each call is made in a session of its own, under READ COMMITTED, REPEATABLE READ or
# SERIALIZABLE (a function inside BEGIN ISOLATION LEVEL, a run under
# default_transaction_isolation, a run inside a transaction block): a replacement, a merge
# with delete_missing, runs of each strategy, a chunked run of a timestamp(0) column whose
# source holds values a moment before midnight (stored in the next day), and a merge on a
# numeric(5,0) key whose source holds 10 and 9.6 (one key once stored).  Every source gives
# the rows the tables already hold, so a call that is right never changes them.  Whatever
# the level, after every call:
# - no internal error (class XX) and no lost connection;
# - the tables still hold their rows: no row lost to a window checked before rounding, no
#   duplicate key proven on values that were not the stored ones;
# - every record the call wrote that is still the latest of its partition (or its scope)
#   has the data's fingerprint as fingerprint_after.
# Then probes: transforms whose verdict is known, each under a random level (by BEGIN or by
# default_transaction_isolation); the verdict must be the transform's under every level.
# The seed is fixed: the same calls run every time, and a failure names the call.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('levels');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE fl_truth (id int, day date, v numeric(12,2));
	INSERT INTO fl_truth SELECT g, date '2026-03-10' + g % 3, g % 97 FROM generate_series(1, 600) g;
	CREATE TABLE fl (id int NOT NULL, day date NOT NULL, v numeric(12,2), PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
	CREATE TABLE fl_0310 PARTITION OF fl FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
	CREATE TABLE fl_0311 PARTITION OF fl FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
	CREATE TABLE fl_0312 PARTITION OF fl FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
	CREATE TABLE fl_default PARTITION OF fl DEFAULT;
	INSERT INTO fl SELECT * FROM fl_truth;
	-- timestamp(0): the source's 23:59:59.7 is stored as the next day's 00:00:00
	CREATE TABLE fl_ts (id int, at timestamp(0), v int);
	INSERT INTO fl_ts SELECT g, timestamp '2026-03-10' + (g % 3) * interval '1 day' + (g % 40) * interval '1 hour', g FROM generate_series(1, 300) g;
	CREATE TABLE fl_ts_truth AS SELECT * FROM fl_ts;
	CREATE TABLE fl_ts_round (id int, at timestamp(3), v int);
	INSERT INTO fl_ts_round SELECT id, CASE WHEN at::time = '00:00' THEN at - interval '300 ms' ELSE at END, v FROM fl_ts;
	-- numeric(5,0), no unique index: 9.6 and 10 are one key once stored
	CREATE TABLE fl_key (id numeric(5,0), v int);
	INSERT INTO fl_key SELECT g, g FROM generate_series(1, 50) g;
	CREATE TABLE fl_key_truth AS SELECT * FROM fl_key;
});

my @levels = ('read committed', 'repeatable read', 'serializable');
my $src = 'SELECT * FROM fl_truth WHERE day >= $1 AND day < $2';
my %calls = (
	'replace' => sub {
		"BEGIN ISOLATION LEVEL $_[0];\nSELECT backfill_replace_partition('fl_0311', '$src');\nCOMMIT;";
	},
	'merge, delete_missing' => sub {
		"BEGIN ISOLATION LEVEL $_[0];\nSELECT backfill_merge('fl', 'SELECT * FROM fl_truth WHERE day = ''2026-03-11''', '{id,day}',"
		  . " 'day = ''2026-03-11''', true);\nCOMMIT;";
	},
	'run replace' => sub { run_call($_[0], 'fl', "'replace'", 'NULL', '{}', $src) },
	'run merge' => sub { run_call($_[0], 'fl', "'merge'", q{'{id,day}'}, '{}', $src) },
	'run auto' => sub { run_call($_[0], 'fl', "'auto'", 'NULL', '{}', $src) },
	'run in a transaction block' => sub {
		"BEGIN ISOLATION LEVEL $_[0];\nSELECT backfill_plan('fl', '2026-03-10', '2026-03-13', '$src') AS r \\gset\nCALL backfill_run(:r);\nCOMMIT;";
	},
	'chunked run, values rounded across midnight' => sub {
		run_call($_[0], 'fl_ts', "'replace'", 'NULL', '{"window_column": "at", "chunk": "1 day"}',
			'SELECT * FROM fl_ts_round WHERE at >= $1 AND at < $2');
	},
	'chunked run, exact values' => sub {
		run_call($_[0], 'fl_ts', "'replace'", 'NULL', '{"window_column": "at", "chunk": "1 day"}',
			'SELECT * FROM fl_ts_truth WHERE at >= $1 AND at < $2');
	},
	'merge, keys rounded together' => sub {
		"BEGIN ISOLATION LEVEL $_[0];\nSELECT backfill_merge('fl_key', 'SELECT id, v FROM fl_key_truth WHERE id <> 10"
		  . " UNION ALL SELECT 9.6, 10 UNION ALL SELECT 10, 10', '{id}');\nCOMMIT;";
	},
	'merge, exact keys' => sub {
		"BEGIN ISOLATION LEVEL $_[0];\nSELECT backfill_merge('fl_key', 'SELECT * FROM fl_key_truth', '{id}');\nCOMMIT;";
	},
);

# A run planned and run under default_transaction_isolation = level.
sub run_call
{
	my ($level, $target, $strategy, $key, $options, $source) = @_;
	my $hi = $target eq 'fl' ? '2026-03-13' : '2026-03-13 00:00';
	$source =~ s/'/''/g;
	return "SET default_transaction_isolation = '$level';\n"
	  . "SELECT backfill_plan('$target', '2026-03-10', '$hi', '$source', $strategy, $key, '$options') AS r \\gset\n"
	  . "CALL backfill_run(:r);";
}

# What must hold after every call, read in a session of its own under READ COMMITTED.
my $check = q{
	SELECT concat_ws('; ',
		CASE WHEN (backfill_fingerprint('fl')).hash <> (backfill_fingerprint('fl_truth')).hash THEN 'fl no longer holds its rows' END,
		CASE WHEN (backfill_fingerprint('fl_ts')).hash <> (backfill_fingerprint('fl_ts_truth')).hash
			THEN format('fl_ts no longer holds its rows (%s of %s)', (SELECT count(*) FROM fl_ts), (SELECT count(*) FROM fl_ts_truth)) END,
		CASE WHEN EXISTS (SELECT FROM fl_key GROUP BY id HAVING count(*) > 1) THEN 'fl_key holds a duplicate key' END,
		CASE WHEN (backfill_fingerprint('fl_key')).hash <> (backfill_fingerprint('fl_key_truth')).hash THEN 'fl_key no longer holds its rows' END,
		(SELECT string_agg(format('record %s is not true to the data', l.id), ', ')
		 FROM backfill_log l
		 WHERE l.id > :'last' AND (l.partition IS NOT NULL OR l.run_id IS NULL)
		   AND NOT EXISTS (SELECT FROM backfill_log l2 WHERE l2.id > l.id AND l2.target = l.target
						   AND l2.partition IS NOT DISTINCT FROM l.partition)
		   AND l.fingerprint_after IS DISTINCT FROM (CASE WHEN l.partition IS NOT NULL THEN backfill_fingerprint(l.partition::regclass)
						   ELSE backfill_fingerprint(l.target::regclass, l.details->>'scope') END).hash));
	SELECT backfill_cancel(id) FROM backfill_runs WHERE status NOT IN ('done', 'cancelled', 'failed');
};

srand(20261202);
my @names = sort keys %calls;
my (%outcome, @broken, @internal);
my $calls = 90;
for my $i (1 .. $calls)
{
	my $name = $names[ int(rand(@names)) ];
	my $level = $levels[ int(rand(@levels)) ];
	my $last = $node->safe_psql('postgres', 'SELECT coalesce(max(id), 0) FROM backfill_log');
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSET client_min_messages = error;\n" . $calls{$name}->($level));
	my @states = $err =~ /ERROR:\s+([0-9A-Z]{5}):/g;
	my $state = @states ? $states[0] : 'ok';
	push @internal, "#$i $name under $level: $err" if grep { /^XX/ } @states;
	push @internal, "#$i $name under $level: the connection was lost" if $err =~ /server closed the connection|connection to server was lost/;
	$outcome{"$name, $level: $state"}++;
	my $why = $node->safe_psql('postgres', "\\set last $last\n$check");
	$why =~ s/\n.*//s;
	push @broken, "#$i $name under $level ($state): $why" if $why ne '';
}

is(scalar(@internal), 0, "no internal error and no lost connection in $calls calls")
  or diag(join("\n", @internal));
is(join("\n", @broken), '', 'after every call the tables hold their rows, without duplicate keys, and every record is true to the data');
my (%levels_reached, %kinds_ok);
for (keys %outcome)
{
	my ($kind, $level, $state) = /^(.*), ([a-z ]+): (\w+)$/ or next;
	$levels_reached{$level} = 1;
	$kinds_ok{$kind} = 1 if $state eq 'ok';
}
is(scalar(keys %levels_reached), 3, 'every isolation level was tried');
cmp_ok(scalar(keys %kinds_ok), '>=', 5, 'calls of at least five kinds worked: ' . join(', ', sort keys %kinds_ok));
ok((grep { /rounded.*: (?!ok)/ } keys %outcome) > 0, 'values rounded across a bound were refused at least once');
diag(join("\n", map { "$_ x$outcome{$_}" } sort keys %outcome));

# Probes under every level: each transform's verdict is known, and no level may change it
# (each point of a probe reads its own copy of the snapshot, even under a transaction's).
my @probes = (
	[ 'an addition', q{UPDATE fl SET v = v + 1 WHERE day = '2026-03-11'}, 'f' ],
	[ 'an append', q{INSERT INTO fl SELECT max(id) + 1000, '2026-03-11', 0 FROM fl}, 'f' ],
	[ 'a write to another day', q{UPDATE fl SET v = v + 1 WHERE day = '2026-03-12' AND id % 7 = 0}, 'f' ],
	[ 'a delete and insert of the day', q{DELETE FROM fl WHERE day = '2026-03-11'; INSERT INTO fl SELECT * FROM fl_truth WHERE day = '2026-03-11'}, 't' ],
	[ 'a merge of the day', q{SELECT backfill_merge('fl', 'SELECT * FROM fl_truth WHERE day = ''2026-03-11''', '{id,day}', 'day = ''2026-03-11''')}, 't' ],
	[ 'nothing', q{SELECT 1}, 't' ],
);
my (@wrong, %probe_levels);
for my $i (1 .. 36)
{
	my ($name, $transform, $want) = @{ $probes[ int(rand(@probes)) ] };
	my $level = $levels[ int(rand(@levels)) ];
	(my $quoted = $transform) =~ s/'/''/g;
	my $probe = "SELECT idempotent FROM backfill_probe_idempotency('$quoted', 'fl', 'day = ''2026-03-11''')";
	my $sql = rand() < 0.5
	  ? "BEGIN ISOLATION LEVEL $level;\n$probe;\nCOMMIT;"
	  : "SET default_transaction_isolation = '$level';\n$probe;";
	my ($rc, $out, $err) = $node->psql('postgres', "SET client_min_messages = error;\n$sql");
	# a merge under a transaction snapshot is refused (0A000): no verdict to compare
	next if $name eq 'a merge of the day' && $level ne 'read committed';
	$probe_levels{$level}++;
	push @wrong, "#$i $name under $level: idempotent = '$out', not '$want' $err" if $out ne $want;
}
is(join("\n", @wrong), '', 'every probe gives the transform\'s true verdict under every isolation level');
is(scalar(keys %probe_levels), 3, 'probes ran under every isolation level');
is($node->safe_psql('postgres', q{SELECT (backfill_fingerprint('fl')).hash = (backfill_fingerprint('fl_truth')).hash}),
	't', 'and every probe rolled its transform back');

$node->stop;
done_testing();
