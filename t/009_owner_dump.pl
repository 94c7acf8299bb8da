# t/009_owner_dump.pl: the database owner backs up and restores, without being superuser.
#
# pg_dump reads the rows of an extension's configuration tables and its sequences as the
# role that dumps, and refuses a table with row-level security unless that role bypasses
# it.  A database owner who is not superuser, dumping a database where backfill wrote a
# replacement kept for undo, a merge and a run, gets a dump that holds every record, run
# and task; restored by the same role into a new database (where a superuser created the
# extension, as it is not trusted), the records are there, the owner undoes the
# replacement from the restored log, the sequences go on after the restored ids, and a
# role that is neither owner still cannot read the tables under the views.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('owner_dump');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE ROLE regress_dbowner LOGIN;
	CREATE ROLE regress_other LOGIN;
	CREATE DATABASE shop OWNER regress_dbowner;
});
$node->safe_psql('shop', 'CREATE EXTENSION backfill');
my $owner = sub { my ($db, $sql) = @_; return $node->safe_psql($db, "SET ROLE regress_dbowner; $sql"); };
$owner->('shop', q{
	CREATE TABLE sales (id int PRIMARY KEY, day date NOT NULL, amount numeric) ;
	CREATE TABLE daily (id int, day date NOT NULL, amount numeric, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
	CREATE TABLE daily_0301 PARTITION OF daily FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
	CREATE TABLE daily_0302 PARTITION OF daily FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
	INSERT INTO daily SELECT g, date '2026-03-01' + g % 2, g FROM generate_series(1, 100) g;
	INSERT INTO sales SELECT g, '2026-03-01', g FROM generate_series(1, 50) g;
	SELECT backfill_replace_partition('daily_0301', 'SELECT id, day, amount * 2 AS amount FROM daily_0301', keep_old => true);
	SELECT backfill_merge('sales', 'SELECT id, day, amount + 1 AS amount FROM sales', '{id}');
	SELECT backfill_plan('daily', '2026-03-02', '2026-03-03', 'SELECT id, day, amount + 1 AS amount FROM daily WHERE day >= $1 AND day < $2',
		strategy => 'merge', key => '{id,day}');
});
$node->safe_psql('shop', 'SET ROLE regress_dbowner; CALL backfill_run(1)');

my $records = q{SELECT string_agg(concat_ws(' ', id, operation, target, rows_before, rows_after), ', ' ORDER BY id) FROM backfill_log};
my $runs = q{SELECT string_agg(concat_ws(' ', r.id, r.status, t.task, t.status, t.rows_after), ', ') FROM backfill_runs r JOIN backfill_tasks t ON t.run_id = r.id};
my $log_before = $owner->('shop', $records);
my $runs_before = $owner->('shop', $runs);

my $dump = PostgreSQL::Test::Utils::tempdir() . '/shop.sql';
$node->command_ok([ 'pg_dump', '-U', 'regress_dbowner', '-d', $node->connstr('shop'), '-f', $dump ],
	'the database owner, not superuser, runs a plain pg_dump');
my $text = slurp_file($dump);
like($text, qr/COPY public\.backfill_log_data .*\n1\t/, 'the dump holds the records of backfill_log');
like($text, qr/COPY public\.backfill_runs_data /, 'and the runs');
like($text, qr/SELECT pg_catalog\.setval\('public\.backfill_log_id_seq', 3, true\)/, 'and where the log\'s ids are');

# Restore, as the owner, into a new database where a superuser created the extension.
$node->safe_psql('postgres', 'CREATE DATABASE shop2 OWNER regress_dbowner');
$node->safe_psql('shop2', 'CREATE EXTENSION backfill');
my ($stdout, $stderr) = run_command([ 'psql', '-X', '-q', '-U', 'regress_dbowner', '-d', $node->connstr('shop2'), '-f', $dump ]);
my @errors = grep { /ERROR/ } split /\n/, $stderr;
# COMMENT ON EXTENSION needs its owner: the one statement of the dump a database owner cannot replay
is(join("\n", grep { !/must be owner of extension backfill/ } @errors), '',
	'the owner restores the dump: no error but the comment on the extension');
my ($rc, $out, $err);

is($owner->('shop2', $records), $log_before, 'the restored database has every record of backfill_log');
is($owner->('shop2', $runs), $runs_before, 'and every run and task');
is($owner->('shop2', q{SELECT count(*) FROM backfill_log WHERE target_oid IS NULL}), '0',
	'the restored records are tied to the restored tables');
is($owner->('shop2', q{SELECT (backfill_undo(1)).rows_after; SELECT sum(amount) FROM daily_0301}),
	"50\n2550", 'the owner undoes the replacement from the restored log: the old amounts are back');
is($owner->('shop2', q{SELECT concat_ws(' ', (SELECT string_agg(id || ' ' || origin, ', ' ORDER BY id) FROM backfill_log),
	'|', (SELECT string_agg(origin, ', ') FROM backfill_runs), '|', (SELECT string_agg(origin, ', ') FROM backfill_tasks))}),
	'1 outside, 2 outside, 3 outside, 4 backfill | outside | outside',
	'restored rows are marked as written from outside backfill; the undo\'s record is backfill\'s own');
($rc, $out, $err) = $node->psql('shop2', 'SET ROLE regress_dbowner; SELECT backfill_retry(1, 1)');
like($err, qr/cannot retry run 1: it was not planned by backfill_plan in this database/, 'a restored run is history: it is not run again');
is($owner->('shop2', q{SELECT max(id) FROM backfill_log}), '4', 'the log\'s ids go on after the restored ones');
is($owner->('shop2', q{SELECT backfill_plan('daily', '2026-03-01', '2026-03-02', 'SELECT * FROM daily WHERE day >= $1 AND day < $2')}),
	'2', 'and so do the runs\'');

# What the owner may do to the tables under the views, and what others may not.
($rc, $out, $err) = $node->psql('shop2', 'SET ROLE regress_dbowner; DELETE FROM backfill_log_data');
like($err, qr/permission denied for table backfill_log_data/, 'the owner cannot delete records');
($rc, $out, $err) = $node->psql('shop2', 'SET ROLE regress_dbowner; UPDATE backfill_runs_data SET status = \'done\'');
like($err, qr/permission denied for table backfill_runs_data/, 'nor update runs');
($rc, $out, $err) = $node->psql('shop2', 'SET ROLE regress_other; SELECT count(*) FROM backfill_log_data');
like($err, qr/permission denied for table backfill_log_data/, 'another role cannot read the table under backfill_log');
is($node->safe_psql('shop2', 'SET ROLE regress_other; SELECT count(*) FROM backfill_log'), '0',
	'and sees no record of tables it cannot read through the view');

$node->stop;
done_testing();
