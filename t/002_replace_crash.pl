# t/002_replace_crash.pl: a server killed in the middle of backfill_replace_partition.
#
# The staging table, its rows, the swap and the log record all belong to the caller's
# transaction.  The replacement of fct_0315 (fct also has a foreign key to days) is
# stopped at five stages, each shown from pg_locks before the kill:
#
#   fill      the source is running: it waits on advisory lock 7, which the test holds;
#   filled    the staging table is filled, indexed and analysed, and waits to add its
#             foreign key (the last step before the swap): the test holds days in ROW
#             EXCLUSIVE mode; the source ran, no lock of the swap is held or asked for;
#   lock      the swap waits for ACCESS EXCLUSIVE on the partition, held in ACCESS
#             SHARE mode by a reader of the parent in an open transaction;
#   swapped   in the middle of the swap: the partition has the staging table's files and
#             the staging table, with the old files, is dropped, nothing committed (an
#             event trigger at the end of the DROP waits on advisory lock 8, which the
#             test holds); the parent is held in ACCESS SHARE mode only;
#   commit    the call has returned and its transaction committed, its session still open.
#
# At each stage the server is killed in two ways: stopped in immediate mode (a power
# cut), and the backend running the replacement killed with SIGKILL (the postmaster then
# restarts the whole server).  Either way, after crash recovery: the partition is
# attached to the parent under its name and holds exactly the old rows (killed before
# the commit) or exactly the new ones (after it), its fingerprint being the log's
# "before" or "after"; the log has one more record exactly when the new rows are there
# (fingerprint_before the old rows', fingerprint_after the partition's now); no
# backfill_stage% table or archive is left; the untouched partition is bit for bit as
# before.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BackfillCrash;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

# The fixed model; it first waits, in shared mode, on advisory lock 7.
my $source = q{SELECT o.order_id, o.order_date,
	CASE WHEN o.refunded THEN -o.amount ELSE o.amount END AS revenue
	FROM orders o, (SELECT pg_advisory_xact_lock_shared(7)) gate
	WHERE o.order_date >= $1 AND o.order_date < $2};
(my $source_0315 = $source) =~ s/\$1/date '2026-03-15'/;
$source_0315 =~ s/\$2/date '2026-03-16'/;

$node->safe_psql('postgres', qq{
	CREATE EXTENSION backfill;
	CREATE TABLE orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
	INSERT INTO orders SELECT g, date '2026-03-14' + (g % 3), g % 500, g % 11 = 0
	FROM generate_series(1, 30000) g;
	CREATE TABLE days (day date PRIMARY KEY);
	INSERT INTO days SELECT date '2026-03-14' + g FROM generate_series(0, 2) g;
	CREATE TABLE fct (order_id bigint NOT NULL, order_date date NOT NULL REFERENCES days,
		revenue numeric(12,2), PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
	CREATE TABLE fct_0314 PARTITION OF fct FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
	CREATE TABLE fct_0315 PARTITION OF fct FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
	CREATE TABLE fct_0316 PARTITION OF fct FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
	INSERT INTO fct SELECT order_id, order_date, amount FROM orders;

	-- the rows the replacement is to put in fct_0315
	CREATE TABLE expect_0315 (order_id bigint, order_date date, revenue numeric(12,2));
	INSERT INTO expect_0315 $source_0315;

	-- When the staging table is dropped (the swap has traded the files), say whether
	-- fct_0315 has new files in the transaction, and wait on lock 8.
	CREATE TABLE files_before AS SELECT pg_relation_filenode('fct_0315') AS node;
	CREATE FUNCTION swap_gate() RETURNS event_trigger LANGUAGE plpgsql AS \$f\$
	BEGIN
		IF EXISTS (SELECT FROM pg_event_trigger_dropped_objects()
				   WHERE object_type = 'table' AND object_name LIKE 'backfill_stage%') THEN
			PERFORM pg_catalog.set_config('application_name', pg_catalog.format('swap_gate: fct_0315 has %s files',
				CASE WHEN pg_catalog.pg_relation_filenode('public.fct_0315') = (SELECT node FROM public.files_before)
					 THEN 'its old' ELSE 'new' END), true);
			PERFORM pg_catalog.pg_advisory_xact_lock_shared(8);
		END IF;
	END \$f\$;
	CREATE EVENT TRIGGER swap_gate ON sql_drop EXECUTE FUNCTION swap_gate();
});

my $fp = sub { $node->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('$_[0]')") };
my $old_0315 = $fp->('fct_0315');
my $old_0314 = $fp->('fct_0314');
my $new_0315 = $fp->('expect_0315');
isnt($new_0315, $old_0315, 'the fixed model changes fct_0315');

my $replace_sql = "SELECT rows_after FROM backfill_replace_partition('fct_0315', \$q\$$source\$q\$,"
  . " lock_timeout_ms => 600000, max_attempts => 1)";

# Open a session that takes what $sql takes and keeps it until the crash.
sub holder
{
	my ($sql) = @_;
	my $s = $node->background_psql('postgres');
	$s->query_safe($_) for split /;\s*/, $sql;
	return $s;
}

# Each stage: what the test holds to stop the replacement there, and the locks of
# the replacing backend that show it is there ("rel mode", "advisory n mode"): the
# one it waits for, some it holds and some it does not.
my @stages = (
	{
		name => 'fill',
		what => 'during the fill',
		hold => 'SELECT pg_advisory_lock(7)',
		waits => 'advisory 7 ShareLock',
		holds => [ 'fct ShareUpdateExclusiveLock', 'fct_0315 ShareRowExclusiveLock' ],
		lacks => [ 'fct AccessExclusiveLock' ],
	},
	{
		name => 'filled',
		what => 'between the fill and the swap',
		hold => 'BEGIN; LOCK TABLE days IN ROW EXCLUSIVE MODE',
		waits => 'days ShareRowExclusiveLock',
		holds => [ 'advisory 7 ShareLock', 'fct_0315 ShareRowExclusiveLock' ],
		lacks => [ 'fct AccessExclusiveLock', 'fct_0315 AccessExclusiveLock' ],
	},
	{
		name => 'lock',
		what => 'while the swap waited for its lock',
		hold => 'BEGIN; SELECT count(*) FROM fct',
		waits => 'fct_0315 AccessExclusiveLock',
		holds => [ 'advisory 7 ShareLock', 'fct_0315 ShareRowExclusiveLock' ],
		lacks => [ 'fct AccessExclusiveLock' ],
	},
	{
		name => 'swapped',
		what => 'in the middle of the swap, the files traded',
		hold => 'SELECT pg_advisory_lock(8)',
		waits => 'advisory 8 ShareLock',
		holds => [ 'fct AccessShareLock', 'fct_0315 AccessExclusiveLock' ],
		lacks => [ 'fct AccessExclusiveLock' ],
		appname => 'swap_gate: fct_0315 has new files',
	},
	{
		name => 'commit',
		what => 'right after the commit',
	},
);

# The locks of backend $pid on the tables of the test and on advisory keys, as
# { granted => [...], waiting => [...] }.
sub locks_of
{
	my ($pid) = @_;
	my %locks = (granted => [], waiting => []);
	for my $line (split /\n/, $node->safe_psql('postgres',
		"SELECT l.granted, coalesce(c.relname, 'advisory ' || l.objid) || ' ' || l.mode FROM pg_locks l"
		  . " LEFT JOIN pg_class c ON c.oid = l.relation WHERE l.pid = $pid"
		  . " AND (l.locktype = 'advisory' OR c.relname IN ('fct', 'fct_0315', 'days'))"))
	{
		my ($granted, $lock) = split /\|/, $line;
		push @{ $locks{ $granted eq 't' ? 'granted' : 'waiting' } }, $lock;
	}
	return \%locks;
}

sub log_records
{
	return $node->safe_psql('postgres', "SELECT count(*) FROM backfill_log WHERE partition = 'public.fct_0315'");
}

sub check_intact
{
	my ($what, $expect_new, $records_before) = @_;
	my $now = $fp->('fct_0315');
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%' OR relname LIKE '%_archived%'"),
		'0', "$what: no staging table or archive is left");
	is($node->safe_psql('postgres',
		"SELECT string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid), ', ' ORDER BY c.relname)"
		  . " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'fct'::regclass"),
		"fct_0314 FOR VALUES FROM ('2026-03-14') TO ('2026-03-15'), "
		  . "fct_0315 FOR VALUES FROM ('2026-03-15') TO ('2026-03-16'), "
		  . "fct_0316 FOR VALUES FROM ('2026-03-16') TO ('2026-03-17')",
		"$what: the parent still has its three partitions, fct_0315 with its bound");
	is($node->safe_psql('postgres', "SELECT count(*) FROM fct WHERE order_date = '2026-03-15'"),
		'10000', "$what: the parent reads the day's rows from it");
	is($fp->('fct_0314'), $old_0314, "$what: the untouched partition is bit for bit as before");
	if ($expect_new)
	{
		is($now, $new_0315, "$what: the partition holds the new rows, exactly");
		is($node->safe_psql('postgres', "SELECT count(*) - $records_before || ' ' || "
			  . " (SELECT fingerprint_before || ' -> ' || fingerprint_after FROM backfill_log"
			  . "  WHERE partition = 'public.fct_0315' ORDER BY id DESC LIMIT 1)"
			  . " FROM backfill_log WHERE partition = 'public.fct_0315'"),
			"1 $old_0315 -> $now",
			"$what: the log has one more record, its fingerprints the old rows' and the partition's now");
	}
	else
	{
		is($now, $old_0315, "$what: the partition holds the old rows, all of them");
		is(log_records(), $records_before, "$what: no log record for a swap that did not happen");
	}
}

# Stop the replacement at $stage, kill it by $how, check what recovery left.
sub crash_at
{
	my ($stage, $how) = @_;
	my $what = "killed ($how) $stage->{what}";

	# every case starts from the old rows (a committed case leaves the new ones)
	$node->safe_psql('postgres', "BEGIN; DELETE FROM fct_0315;"
		  . " INSERT INTO fct SELECT order_id, order_date, amount FROM orders WHERE order_date = '2026-03-15'; COMMIT")
	  if $fp->('fct_0315') ne $old_0315;
	$fp->('fct_0315') eq $old_0315 or die "$what: could not restore the old rows";
	my $records_before = log_records();

	my @holders = $stage->{hold} ? (holder($stage->{hold})) : ();
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $h->query_safe('SELECT pg_backend_pid()');
	if ($stage->{name} eq 'commit')
	{
		is($h->query_safe($replace_sql), '10000', "$what: the replacement went through");
	}
	else
	{
		$h->query_until(qr/started/, "\\echo started\n$replace_sql;\n");
		$node->poll_query_until('postgres', "SELECT EXISTS (SELECT FROM pg_locks WHERE pid = $pid AND NOT granted)")
		  or die "$what: the replacement never stopped";
		my $locks = locks_of($pid);
		is_deeply($locks->{waiting}, [ $stage->{waits} ], "$what: the replacement waits for $stage->{waits}");
		my %granted = map { $_ => 1 } @{ $locks->{granted} };
		is_deeply([ grep { !$granted{$_} } @{ $stage->{holds} } ], [],
			"$what: it holds " . join(', ', @{ $stage->{holds} }));
		is_deeply([ grep { $granted{$_} } @{ $stage->{lacks} } ], [],
			"$what: it does not hold " . join(', ', @{ $stage->{lacks} }))
		  if @{ $stage->{lacks} };
		is($node->safe_psql('postgres', "SELECT application_name FROM pg_stat_activity WHERE pid = $pid"),
			$stage->{appname}, "$what: the event trigger saw fct_0315 with new files")
		  if $stage->{appname};
		is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'"),
			'0', "$what: the uncommitted staging table is invisible to others");
	}

	if ($how eq 'SIGKILL')
	{
		kill_backend($node, $pid, $what);
	}
	else
	{
		kill_server($node);
	}
	forget($h, @holders);
	check_intact($what, $stage->{name} eq 'commit', $records_before);
}

for my $stage (@stages)
{
	crash_at($stage, $_) for ('immediate stop', 'SIGKILL');
}

$node->stop;
done_testing();
