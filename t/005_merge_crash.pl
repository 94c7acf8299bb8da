# t/005_merge_crash.pl: a merge survives its server being killed.
#
# backfill_merge(target, source, key, scope, delete_missing => true) reads the
# source several times in one transaction: for the key guards first, then in
# the MERGE (updates and inserts), then in the DELETE of the rows the source
# lacks.  Its writes and its backfill_log record are that one transaction.  The
# target comes in two variants: a plain table with a unique index on the key
# (the index proves the key) and a table partitioned by day without one (the
# key is proven by a scan); the source changes some rows of the scope, adds
# some and lacks some, so the merge updates, inserts and deletes.
#
# The source calls bf_gate(target) once per read (an InitPlan: evaluated once
# per statement, before that statement writes anything).  The gate tells the stage from what the
# transaction holds and sees: no ROW EXCLUSIVE lock on the target yet, the
# guards; the lock (the MERGE is planned) but no row of the target written by
# this transaction, the MERGE; rows written, the DELETE.  It shows the stage
# in application_name and waits, in shared mode, on the advisory lock of the
# stage, which the test holds when it wants the merge stopped there.
#
# Stopped at each stage, the server is killed (immediate stop, or SIGKILL of
# the merging backend, which makes the postmaster restart everything).  After
# recovery the target fingerprints as before the merge (wholly old, the
# updates and inserts of an interrupted DELETE stage included), backfill_log
# has no record of it, and no table, temporary or not, is left behind.  The
# merge run again then gives the same counts and the same rows as an
# uninterrupted merge of a twin table, and one log record whose
# fingerprint_before and fingerprint_after are the scope's before and after.
# Killed right after a merge's COMMIT, the target is wholly new and its record
# is there, its fingerprint_after the scope's.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BackfillCrash;

my $node = PostgreSQL::Test::Cluster->new('mergecrash');
$node->init;
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->start;

my $scope = q{day >= date '2026-03-08' AND day < date '2026-03-15'};
my %gate_key = (guards => 501, merge => 502, delete => 503);

# base: 4000 rows over 20 days, as the buggy job wrote them.  model: the fixed
# job's rows for the scope (7 of the days): every 13th row gone, every 7th
# amount and every 5th note changed (some notes from NULL), 150 new rows.
$node->safe_psql('postgres', qq{
	CREATE EXTENSION backfill;
	CREATE TABLE base AS SELECT g::bigint AS id, date '2026-03-01' + g % 20 AS day,
		(g % 500)::numeric(12,2) AS amount, CASE WHEN g % 3 = 0 THEN NULL ELSE 'n' || g END AS note
	FROM generate_series(1, 4000) g;
	CREATE TABLE model AS
	SELECT id, day, CASE WHEN id % 7 = 0 THEN amount + 0.5 ELSE amount END AS amount,
		CASE WHEN id % 5 = 0 THEN 'fixed' ELSE note END AS note
	FROM base WHERE $scope AND id % 13 <> 0
	UNION ALL
	SELECT 10000 + g, date '2026-03-08' + g % 7, g, 'new' FROM generate_series(1, 150) g;

	CREATE FUNCTION bf_gate(target regclass) RETURNS boolean LANGUAGE plpgsql VOLATILE AS \$f\$
	DECLARE
		writing boolean;
		written bigint;
		stage text;
	BEGIN
		-- planning the MERGE takes the target in ROW EXCLUSIVE mode, kept until the end
		SELECT EXISTS (SELECT FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'
			AND relation = target AND mode = 'RowExclusiveLock' AND granted) INTO writing;
		-- rows of the target this transaction wrote (only it sees them)
		EXECUTE format('SELECT count(*) FROM %s WHERE xmin::text = pg_current_xact_id_if_assigned()::text',
			target) INTO written;
		stage := CASE WHEN NOT writing THEN 'guards' WHEN written = 0 THEN 'merge' ELSE 'delete' END;
		PERFORM set_config('application_name', format('bf_gate %s, %s rows written', stage, written), true);
		PERFORM pg_advisory_xact_lock_shared(CASE stage WHEN 'guards' THEN $gate_key{guards}
			WHEN 'merge' THEN $gate_key{merge} ELSE $gate_key{delete} END);
		RETURN true;
	END \$f\$;
});

# A target: plain with a primary key, or partitioned by day (4 partitions of
# 5 days, the scope across two of them) with no index at all.
sub make_target
{
	my ($name) = @_;
	my $sql;
	if ($name =~ /^plain/)
	{
		$sql = "CREATE TABLE $name (id bigint PRIMARY KEY, day date NOT NULL, amount numeric(12,2), note text);\n";
	}
	else
	{
		$sql = "CREATE TABLE $name (id bigint NOT NULL, day date NOT NULL, amount numeric(12,2), note text)"
		  . " PARTITION BY RANGE (day);\n";
		$sql .= sprintf("CREATE TABLE %s_%d PARTITION OF %s FOR VALUES FROM (date '2026-03-01' + %d) TO (date '2026-03-01' + %d);\n",
			$name, $_, $name, 5 * $_, 5 * $_ + 5)
		  for 0 .. 3;
	}
	$sql .= "INSERT INTO $name SELECT * FROM base;\n";
	$node->safe_psql('postgres', $sql);
}

my @variants = qw(plain part);
make_target($_) for map { my $v = $_; map { "${v}_$_" } qw(twin guards merge delete commit) } @variants;

sub merge_sql
{
	my ($target) = @_;
	return "SELECT inserted || ' ' || updated || ' ' || deleted || ' ' || unchanged"
	  . " FROM backfill_merge('$target',"
	  . " \$s\$SELECT id, day, amount, note FROM model WHERE (SELECT bf_gate('$target'))\$s\$,"
	  . " ARRAY['id'], scope => \$c\$$scope\$c\$, delete_missing => true)";
}

# the whole table's fingerprint, or "rows hash" of its scope
sub fp
{
	my ($rel) = @_;
	return $node->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('$rel')");
}

sub scope_fp
{
	my ($rel) = @_;
	return $node->safe_psql('postgres',
		"SELECT rows || ' ' || hash FROM backfill_fingerprint('$rel', \$c\$$scope\$c\$)");
}

sub log_of
{
	my ($target) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(rows_before || ' ' || fingerprint_before || ' -> ' || rows_after || ' ' || fingerprint_after, '; ')"
		  . " FROM backfill_log WHERE operation = 'merge' AND target = 'public.$target'");
}

# relations of every kind, and the temporary ones
my $relations = "SELECT count(*) || ' relations, ' || count(*) FILTER (WHERE relpersistence = 't') || ' temporary' FROM pg_class";

# The references: each twin merged without interruption.
my (%old, %new, %counts);
for my $v (@variants)
{
	my $before = scope_fp("${v}_twin");
	my $whole_before = fp("${v}_twin");
	$counts{$v} = $node->safe_psql('postgres', merge_sql("${v}_twin"));
	$old{$v} = { whole => $whole_before, scope => $before };
	$new{$v} = { whole => fp("${v}_twin"), scope => scope_fp("${v}_twin") };
	is(log_of("${v}_twin"), "$before -> $new{$v}{scope}", "$v twin: one log record, the scope before and after");
}
is($counts{plain}, '150 342 108 950', 'the merge inserts 150 rows, updates 342, deletes 108 and leaves 950');
is($counts{part}, $counts{plain}, 'the partitioned twin gets the same counts');
for my $v (@variants)
{
	is(fp("${v}_$_"), $old{$v}{whole}, "$v: the copy $_ starts as the twin did") for qw(guards merge delete commit);
}
my ($ins, $upd) = split / /, $counts{plain};

# Merge $v's copy for $stage, stop it at $stage, kill it by $how, check what
# recovery left, merge again and compare with the twin.
sub crash_at
{
	my ($v, $stage, $how) = @_;
	my $target = "${v}_$stage";
	my $what = "$v, killed ($how) in the $stage stage";
	my $rels = $node->safe_psql('postgres', $relations);
	my $key = $gate_key{$stage};

	my $gate = $node->background_psql('postgres');
	$gate->query_safe("SELECT pg_advisory_lock($key)");
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	$h->query_until(qr/started/, "\\echo started\n" . merge_sql($target) . ";\n");
	$node->poll_query_until('postgres',
		"SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = $key AND NOT granted)")
	  or die "$what: the merge never reached its gate";
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $key AND NOT granted");
	is($node->safe_psql('postgres', "SELECT application_name FROM pg_stat_activity WHERE pid = $pid"),
		"bf_gate $stage, " . ($stage eq 'delete' ? $ins + $upd : 0) . " rows written",
		$stage eq 'delete'
		? "$what: the merge waits before its DELETE, the MERGE's updates and inserts written"
		: "$what: the merge waits in its $stage stage, nothing written");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks WHERE pid = $pid AND relation = '$target'::regclass"
		  . " AND mode = 'ShareRowExclusiveLock' AND granted"),
		'1', "$what: it holds the target in SHARE ROW EXCLUSIVE mode");

	if ($how eq 'SIGKILL')
	{
		kill_backend($node, $pid, $what);
	}
	else
	{
		kill_server($node);
	}
	forget($h, $gate);

	is(fp($target), $old{$v}{whole}, "$what: the target holds its old rows, all of them, and nothing else");
	is(log_of($target), '', "$what: backfill_log has no record of the merge");
	is($node->safe_psql('postgres', $relations), $rels, "$what: no table, temporary or other, is left");

	# merged again (the gate's locks went with the crash)
	is($node->safe_psql('postgres', merge_sql($target)), $counts{$v},
		"$what, merged again: the counts of the uninterrupted merge");
	is(fp($target), $new{$v}{whole}, "$what, merged again: the rows of the twin merged without interruption");
	is(log_of($target), "$old{$v}{scope} -> $new{$v}{scope}",
		"$what, merged again: one log record, its fingerprints the scope's before and after");
}

crash_at('plain', 'guards', 'immediate stop');
crash_at('part', 'guards', 'SIGKILL');
crash_at('plain', 'merge', 'SIGKILL');
crash_at('part', 'merge', 'immediate stop');
crash_at('plain', 'delete', 'immediate stop');
crash_at('part', 'delete', 'SIGKILL');

# Killed right after the COMMIT: the call returned, its session still open.
for my $v (@variants)
{
	my $target = "${v}_commit";
	my $how = $v eq 'plain' ? 'immediate stop' : 'SIGKILL';
	my $what = "$v, killed ($how) right after the commit";
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $h->query_safe('SELECT pg_backend_pid()');
	is($h->query_safe(merge_sql($target)), $counts{$v}, "$v: the merge returned its counts");
	if ($how eq 'SIGKILL')
	{
		kill_backend($node, $pid, $what);
	}
	else
	{
		kill_server($node);
	}
	forget($h);
	is(fp($target), $new{$v}{whole}, "$what: the target holds the new rows, as the twin");
	is(log_of($target), "$old{$v}{scope} -> $new{$v}{scope}",
		"$what: the log record is there, its fingerprint_after the scope's now");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM backfill_log l, backfill_fingerprint('$target', \$c\$$scope\$c\$) f"
		  . " WHERE l.target = 'public.$target' AND l.fingerprint_after = f.hash AND l.rows_after = f.rows"),
		'1', "$what: fingerprint_after is backfill_fingerprint of the scope");
}

$node->stop;
done_testing();
