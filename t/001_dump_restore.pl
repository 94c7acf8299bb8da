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
		q{SELECT operation, target, rows_before, rows_after, details->>'note' FROM backfill_log}),
	'replace|public.fct|100|120|kept by pg_dump',
	'backfill_log records survive pg_dump and restore');

# A changed value in the restored copy is seen.
$node->safe_psql('restored', q{UPDATE fct SET m = 'happy' WHERE id = 1});
isnt($node->safe_psql('restored', $fp), $before, 'one changed enum value changes the fingerprint');

$node->stop;
done_testing();
