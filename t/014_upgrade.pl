# t/014_upgrade.pl: the oldest release, updated under a running server, holds what a fresh
# install of this tree holds, keeps its rows, and finishes the run it had under way.
#
# A private copy of the server's installation (its bin, lib and share directories, which
# PostgreSQL finds relative to its binaries) gets the oldest release's library and scripts,
# built from its commit (updates/README.md; scripts/run_tests.sh extracts it).  A cluster of
# that copy creates the extension at that version and fills its state tables: a finished run,
# a run with one task of two done, a replacement by hand.  Then this tree's library and
# scripts are installed into the copy under the running server, as `make install` does:
#
# - a new session's first call refuses with 55000, naming both versions and the update;
# - ALTER EXTENSION backfill UPDATE reaches this tree's version;
# - the extension's objects (functions and their definitions and rights, tables with their
#   columns, defaults, constraints, indexes, triggers and policies, views, types, comments,
#   the tables pg_dump keeps) read the same as in a database where this tree's version was
#   installed fresh;
# - every row of the state tables reads as before, in the columns it had;
# - the run under way finishes and the table holds what it was to hold.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $release_src = $ENV{BACKFILL_RELEASE_SRC};
my $release = $ENV{BACKFILL_RELEASE_VERSION};
plan skip_all => 'no source of the oldest release (a git checkout has it: updates/README.md)'
  unless $release_src && -d $release_src && $release;

sub pg_config
{
	my $out = `pg_config --$_[0]`;
	die "pg_config --$_[0] failed" if $?;
	chomp $out;
	return $out;
}

sub run_or_die
{
	my ($log, @cmd) = @_;
	system("@cmd >>'$log' 2>&1") == 0 or die "failed: @cmd (see $log)";
}

my ($bindir, $pkglibdir, $sharedir) = map { pg_config($_) } qw(bindir pkglibdir sharedir);
$bindir =~ m{^(.*)/bin$} or die "the server's bindir $bindir does not end in /bin";
my $prefix = $1;

# The copy: the same absolute paths under $root, without any backfill of its own.
my $root = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('install'));
my $log = File::Spec->rel2abs("$PostgreSQL::Test::Utils::log_path/upgrade_build.log");
for my $dir ($bindir, $pkglibdir, $sharedir)
{
	next if -d "$root$dir";
	make_path(dirname("$root$dir"));
	run_or_die($log, 'cp', '-a', $dir, "$root$dir");
}
unlink glob("$root$pkglibdir/backfill.so $root$sharedir/extension/backfill*");
remove_tree("$root$pkglibdir/bitcode/backfill", "$root$pkglibdir/bitcode/backfill.index.bc");

# The release, built and installed into the copy.  MAKEFLAGS would hand it make test's own
# variables (PG=18 CASSERT=1): the release is built for the server in use, by its pg_config.
my $make = "env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s PG_CONFIG=$bindir/pg_config";
run_or_die($log, "$make -C '$release_src' -j2");
run_or_die($log, "$make -C '$release_src' install DESTDIR='$root'");

my $node = PostgreSQL::Test::Cluster->new('upgrade', install_path => "$root$prefix");
$node->init;
$node->start;

# At the release: a finished run, a run with one task of its two done, a replacement by hand.
$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE TABLE fct (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2))
		PARTITION BY RANGE (order_date);
	CREATE TABLE fct_0301 PARTITION OF fct FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE TABLE fct_0302 PARTITION OF fct FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
	CREATE TABLE fct_0303 PARTITION OF fct FOR VALUES FROM ('2026-03-03') TO ('2026-03-04');
	CREATE TABLE fct_0304 PARTITION OF fct FOR VALUES FROM ('2026-03-04') TO ('2026-03-05');
	CREATE TABLE fct_0305 PARTITION OF fct FOR VALUES FROM ('2026-03-05') TO ('2026-03-06');
	INSERT INTO fct SELECT g, date '2026-03-01' + g % 5, g FROM generate_series(1, 5000) g;
	CREATE TABLE expected AS
		SELECT order_id, order_date,
			CASE WHEN order_date < '2026-03-03' THEN revenue * 2
				 WHEN order_date < '2026-03-05' THEN revenue + 1
				 ELSE revenue - 1 END AS revenue
		FROM fct;
});
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'backfill'}),
	$release, "the cluster of the copy installs backfill $release");
my $finished = $node->safe_psql('postgres',
	q{SELECT backfill_plan('fct', '2026-03-01', '2026-03-03', $q$SELECT order_id, order_date, revenue * 2 AS revenue FROM fct WHERE order_date >= $1::date AND order_date < $2::date$q$)});
$node->safe_psql('postgres', "CALL backfill_run($finished)");
my $pending = $node->safe_psql('postgres',
	q{SELECT backfill_plan('fct', '2026-03-03', '2026-03-05', $q$SELECT order_id, order_date, revenue + 1 AS revenue FROM fct WHERE order_date >= $1::date AND order_date < $2::date$q$)});
$node->safe_psql('postgres', "CALL backfill_run($pending, 1)");
$node->safe_psql('postgres',
	q{SELECT backfill_replace_partition('fct_0305', $q$SELECT order_id, order_date, revenue - 1 AS revenue FROM fct_0305$q$)});
is($node->safe_psql('postgres',
		"SELECT status || ' ' || tasks_done || '/' || tasks_total FROM backfill_progress WHERE run_id = $pending"),
	'running 1/2', "at $release a run has one task of two done");

# The state tables' rows, in the columns each has at the release.
my %columns = map { split /\|/ } split /\n/, $node->safe_psql('postgres', q{
	SELECT c.oid::regclass, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
	FROM pg_depend d
	JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid AND c.relkind = 'r'
	JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'backfill')
	GROUP BY c.oid});
sub state_rows
{
	my %rows;
	for my $t (sort keys %columns)
	{
		$rows{$t} = $node->safe_psql('postgres',
			"SELECT string_agg(r::text, E'\\n' ORDER BY r::text) FROM (SELECT $columns{$t} FROM $t) r");
	}
	return \%rows;
}
my $before = state_rows();
ok(length($before->{'backfill_tasks_data'} // '') > 0 && length($before->{'backfill_log_data'} // '') > 0,
	'the state tables hold tasks and log rows at the release');

# This tree's library and scripts, installed under the running server.
run_or_die($log, 'cp', "$pkglibdir/backfill.so", "$root$pkglibdir/backfill.so");
run_or_die($log, "cp $sharedir/extension/backfill* '$root$sharedir/extension/'");
if (-d "$pkglibdir/bitcode/backfill")
{
	remove_tree("$root$pkglibdir/bitcode/backfill");
	run_or_die($log, 'cp', '-a', "$pkglibdir/bitcode/backfill", "$pkglibdir/bitcode/backfill.index.bc",
		"$root$pkglibdir/bitcode/");
}
my $current = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'backfill'});
isnt($current, $release, "this tree's version ($current) is not the release's");

{
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT backfill_fingerprint('fct')");
	isnt($ret, 0, "this tree's library refuses the catalog of $release");
	like($err, qr/ERROR:  55000: backfill's library is version \Q$current\E, but the extension installed in this database is version \Q$release\E/,
		'with 55000, naming both versions');
	like($err, qr/HINT:  Update the extension in this database: ALTER EXTENSION backfill UPDATE;/,
		'and the statement that ends it');
}

$node->safe_psql('postgres', 'ALTER EXTENSION backfill UPDATE');
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'backfill'}),
	$current, "ALTER EXTENSION backfill UPDATE reaches $current");

# Every object of the extension, described without OIDs, in a sorted list.
my $describe = q{
WITH ext AS (SELECT oid, extconfig, extcondition FROM pg_extension WHERE extname = 'backfill'),
members AS (
	SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, ext
	WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
rels AS (
	SELECT c.oid FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
	UNION
	SELECT t.typrelid FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
	WHERE t.typrelid <> 0)
SELECT line FROM (
	SELECT 'member ' || pg_describe_object(classid, objid, objsubid) AS line FROM members
	UNION ALL
	SELECT 'comment ' || pg_describe_object(d.classoid, d.objoid, d.objsubid) || ': ' || d.description
	FROM members m JOIN pg_description d ON d.classoid = m.classid AND d.objoid = m.objid
	UNION ALL
	SELECT format('function %s %s acl=%s', p.oid::regprocedure,
		CASE WHEN p.prokind = 'a' THEN
			(SELECT format('aggregate %s %s %s %s %s %s %s', a.aggtransfn, format_type(a.aggtranstype, NULL),
				a.aggfinalfn, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.agginitval)
			 FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
		ELSE pg_get_functiondef(p.oid) END, p.proacl)
	FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
	UNION ALL
	SELECT format('relation %s kind=%s acl=%s options=%s rls=%s,%s', c.oid::regclass, c.relkind, c.relacl,
		c.reloptions, c.relrowsecurity, c.relforcerowsecurity)
	FROM rels JOIN pg_class c ON c.oid = rels.oid
	UNION ALL
	SELECT format('column %s #%s %s %s notnull=%s default=%s identity=%s generated=%s collation=%s acl=%s comment=%s',
		a.attrelid::regclass, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum), a.attname,
		format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid),
		a.attidentity, a.attgenerated, a.attcollation::regcollation, a.attacl, col_description(a.attrelid, a.attnum))
	FROM rels JOIN pg_attribute a ON a.attrelid = rels.oid AND a.attnum > 0 AND NOT a.attisdropped
	LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
	UNION ALL
	SELECT format('constraint %s %s %s', co.conrelid::regclass, co.conname, pg_get_constraintdef(co.oid))
	FROM rels JOIN pg_constraint co ON co.conrelid = rels.oid
	UNION ALL
	SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM rels JOIN pg_index i ON i.indrelid = rels.oid
	UNION ALL
	SELECT format('trigger %s enabled=%s', pg_get_triggerdef(tg.oid), tg.tgenabled)
	FROM rels JOIN pg_trigger tg ON tg.tgrelid = rels.oid AND NOT tg.tgisinternal
	UNION ALL
	SELECT format('policy %s %s %s %s roles=%s using=%s check=%s', po.polrelid::regclass, po.polname, po.polcmd,
		po.polpermissive, po.polroles::regrole[], pg_get_expr(po.polqual, po.polrelid),
		pg_get_expr(po.polwithcheck, po.polrelid))
	FROM rels JOIN pg_policy po ON po.polrelid = rels.oid
	UNION ALL
	SELECT format('view %s %s', c.oid::regclass, pg_get_viewdef(c.oid))
	FROM rels JOIN pg_class c ON c.oid = rels.oid AND c.relkind IN ('v', 'm')
	UNION ALL
	SELECT format('sequence %s %s %s %s %s %s %s', s.seqrelid::regclass, format_type(s.seqtypid, NULL), s.seqstart,
		s.seqincrement, s.seqmin, s.seqmax, s.seqcycle)
	FROM rels JOIN pg_sequence s ON s.seqrelid = rels.oid
	UNION ALL
	SELECT format('type %s %s enum=%s domain=%s %s', t.oid::regtype, t.typtype,
		(SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
		format_type(t.typbasetype, t.typtypmod),
		(SELECT array_agg(pg_get_constraintdef(co.oid) ORDER BY co.conname) FROM pg_constraint co
		 WHERE co.contypid = t.oid))
	FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
	UNION ALL
	SELECT 'kept by pg_dump ' || c::regclass || ' ' || coalesce(ext.extcondition[i], '')
	FROM ext, unnest(ext.extconfig) WITH ORDINALITY AS u(c, i)
) lines ORDER BY line COLLATE "C"};

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION backfill');
my @updated = split /\n/, $node->safe_psql('postgres', $describe);
my @fresh = split /\n/, $node->safe_psql('fresh', $describe);
my %in_fresh = map { $_ => 1 } @fresh;
my %in_updated = map { $_ => 1 } @updated;
ok(@fresh > 100, 'a fresh install is described in ' . scalar(@fresh) . ' lines');
is_deeply([ grep { !$in_fresh{$_} } @updated ], [], 'the updated database holds nothing a fresh install lacks');
is_deeply([ grep { !$in_updated{$_} } @fresh ], [], 'and lacks nothing a fresh install holds');

is_deeply(state_rows(), $before, 'every row of the state tables reads as before the update');

$node->safe_psql('postgres', "CALL backfill_run($pending)");
is($node->safe_psql('postgres', "SELECT status || ' ' || tasks_done || '/' || tasks_total FROM backfill_progress WHERE run_id = $pending"),
	'done 2/2', 'the run under way at the update finishes');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ((TABLE fct EXCEPT ALL TABLE expected) UNION ALL (TABLE expected EXCEPT ALL TABLE fct)) d}),
	'0', 'and the table holds what the two runs and the replacement were to write');

$node->stop;
done_testing();
