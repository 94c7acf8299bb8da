# t/001_dump_restore.pl: what pg_dump and a restore keep.
#
# A fingerprint is a statement about rows, so a dump restored into another
# database (where enums, composite types and every table get new OIDs, and
# values are written back from text) must fingerprint the same.  And the
# backfill_log is extension configuration: its records travel with the dump.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TYPE mood AS ENUM ('sad', 'happy');
	CREATE TYPE money_pair AS (amount numeric, currency text);
	CREATE DOMAIN positive AS numeric CHECK (VALUE > 0);
	CREATE TABLE fct (
		id bigint, day date, amount positive, note text, tags text[], m mood,
		mp money_pair, j json, jb jsonb, pt point, r daterange, at timestamptz, big text);
	INSERT INTO fct
	SELECT g, date '2026-03-01' + g % 31, g * 1.5, CASE WHEN g % 3 = 0 THEN NULL ELSE 'n' || g END,
	       ARRAY['a', g::text], CASE WHEN g % 2 = 0 THEN 'happy' ELSE 'sad' END::mood,
	       ROW(g, 'EUR')::money_pair, json_build_object('g', g), jsonb_build_object('g', g),
	       point(g, -g), daterange(date '2026-03-01', date '2026-03-01' + g),
	       timestamptz '2026-03-01 12:00+00' + g * interval '1 minute',
	       CASE WHEN g % 100 = 0 THEN repeat(md5(g::text), 400) END
	FROM generate_series(1, 2000) g;
	ALTER TABLE fct ADD COLUMN added int DEFAULT 7;
	INSERT INTO backfill_log_data (logged_by, operation, target, rows_before, rows_after, details)
	VALUES ('postgres', 'replace', 'public.fct', 100, 120, '{"note": "kept by pg_dump"}');
});

# A replacement kept for undo, by a role owning its table; and a record of a table renamed
# after it was written, whose old name another role then took.
$node->safe_psql('postgres', q{
	CREATE ROLE regress_dump_owner;
	CREATE ROLE regress_dump_squatter;
	GRANT CREATE ON SCHEMA public TO regress_dump_owner, regress_dump_squatter;
	SET ROLE regress_dump_owner;
	CREATE TABLE dp (id int, day date) PARTITION BY RANGE (day);
	CREATE TABLE dp_1 PARTITION OF dp FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	INSERT INTO dp SELECT g, '2026-03-01' FROM generate_series(1, 10) g;
	SELECT backfill_replace_partition('dp_1', 'SELECT id + 100 AS id, day FROM dp_1', keep_old => true);
	CREATE TABLE moved (id int) PARTITION BY RANGE (id);
	CREATE TABLE moved_1 PARTITION OF moved FOR VALUES FROM (0) TO (10);
	SELECT backfill_replace_partition('moved_1', 'SELECT 1 AS id');
	ALTER TABLE moved RENAME TO moved_away;
	SET ROLE regress_dump_squatter;
	CREATE TABLE moved (id int);
});

my $fp = "SELECT rows || ' ' || hash FROM backfill_fingerprint('fct')";
my $before = $node->safe_psql('postgres', $fp);

my $dump = PostgreSQL::Test::Utils::tempdir() . '/dump.sql';
$node->command_ok([ 'pg_dump', '-d', $node->connstr('postgres'), '-f', $dump ], 'pg_dump runs');

# Another database, with OIDs used up before the restore so none match.
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->safe_psql('restored', q{
	CREATE TYPE filler1 AS ENUM ('x'); CREATE TYPE filler2 AS (a int);
	SET timezone = 'Pacific/Auckland';
});
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored'), '-f', $dump ],
	'the dump restores');

my $after = $node->safe_psql('restored', $fp);
is($after, $before, 'the fingerprint of the restored table equals the original');

# Session settings that change how values print do not change the fingerprint.
my $other_tz = $node->safe_psql('restored',
	"SET timezone = 'America/Lima'; SET datestyle = 'German'; SET extra_float_digits = 0; $fp");
is($other_tz, $before, 'the fingerprint does not depend on timezone, datestyle or float output');

is( $node->safe_psql('restored',
		q{SELECT operation, target, rows_before, rows_after, details->>'note' FROM backfill_log WHERE target = 'public.fct'}),
	'replace|public.fct|100|120|kept by pg_dump',
	'backfill_log records survive pg_dump and restore');

is( $node->safe_psql('restored',
		q{SELECT string_agg(target || ' ' || coalesce(target_oid::regclass::text, '-'), ', ' ORDER BY id)
		  FROM backfill_log_data WHERE target IN ('public.dp', 'public.moved')}),
	'public.dp dp, public.moved -',
	'restored records are tied to the restored table of their name, not to a table another role took the name of');
is( $node->safe_psql('restored',
		q{SET ROLE regress_dump_squatter; SELECT count(*) FROM backfill_log WHERE target = 'public.moved'}),
	'0', 'the role that took a freed name sees no restored record of the old table');
is( $node->safe_psql('restored',
		q{SET ROLE regress_dump_owner;
		  SELECT rows_before, rows_after FROM backfill_log WHERE target = 'public.dp'}),
	'10|10', 'the owner of the restored table sees its record');
is( $node->safe_psql('restored',
		q{SET ROLE regress_dump_owner;
		  SELECT (backfill_undo((SELECT id FROM backfill_log WHERE target = 'public.dp'))).rows_after;
		  SELECT min(id) FROM dp}),
	"10\n1", 'the owner undoes the restored record: the old rows are back');

# A changed value in the restored copy is seen.
$node->safe_psql('restored', q{UPDATE fct SET m = 'happy' WHERE id = 1});
isnt($node->safe_psql('restored', $fp), $before, 'one changed enum value changes the fingerprint');

$node->stop;
done_testing();
