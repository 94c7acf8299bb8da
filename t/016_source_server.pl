# t/016_source_server.pl: a run's source computed on a standby (options.source_server).
#
# A primary with a streaming standby, postgres_fdw, a foreign server naming the standby.
# The source says where it ran: its amount is amount * 2 on a server in recovery, -1 on the
# primary.
# - A run with source_server writes the standby's rows, equal (EXCEPT ALL both ways) to the
#   same run with a local source of the same rows; its dry run computes there too.
# - Each task's record names the source as bound; the direct calls (a replacement, a merge)
#   compute on the standby too, and are refused in a transaction that has written.
# - Rows committed on the primary while the standby's replay is paused are in the task's
#   result: the run waits until the standby has replayed them (without the wait it would read
#   the paused standby, which lacks them), between tasks, holding no transaction ID.
# - A standby that does not catch up within throttle_timeout_ms pauses the run (57000), the
#   wait shown in backfill_progress's activity while it lasts, no task done.
# - A function the source calls, replaced on the primary after the first task, blocks the run
#   before its second: the code is checked here, and the standby runs what it has replayed.
# - A server that is the primary itself, another cluster, or the standby's other database is
#   refused at plan time, naming the server; so are an unknown server and a role without USAGE.
# - A role without superuser needs a password in its user mapping; a wrong one is said
#   without echoing it.  The query runs there as the role running here: a mapping whose user
#   may not become it is refused.
# - A cancel of the run's backend reaches the query on the standby; a standby that stops
#   mid-task fails the task with 08006 and leaves the partition as it was.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
# the analyst connects to the standby with a password; everyone else as the tests always do
my $hba = slurp_file($standby->data_dir . '/pg_hba.conf');
open(my $fh, '>', $standby->data_dir . '/pg_hba.conf') or die;
print $fh "local all analyst scram-sha-256\n$hba";
close $fh;
$standby->start;

my ($shost, $sport) = ($standby->host, $standby->port);
$primary->safe_psql('postgres', qq{
	SET password_encryption = 'scram-sha-256';
	CREATE ROLE analyst LOGIN PASSWORD 'right-horse-battery';
	CREATE EXTENSION backfill;
	CREATE EXTENSION postgres_fdw;
	CREATE SERVER standby FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (host '$shost', port '$sport', dbname 'postgres');
	CREATE USER MAPPING FOR CURRENT_USER SERVER standby;
	CREATE TABLE model_in (id bigint, day date, amount int);
	INSERT INTO model_in SELECT g, date '2026-03-01' + g % 4, g % 1000 FROM generate_series(1, 40000) g;
	CREATE FUNCTION doubled(int) RETURNS int LANGUAGE sql IMMUTABLE
		AS 'SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN \$1 * 2 ELSE -1 END';
});

my $source = 'SELECT id, day, doubled(amount) AS amount FROM model_in WHERE day >= $1 AND day < $2';
my $local = 'SELECT id, day, amount * 2 AS amount FROM model_in WHERE day >= $1 AND day < $2';

sub make_table
{
	my ($name, $owner) = @_;
	my $sql = "CREATE TABLE $name (id bigint, day date, amount int) PARTITION BY RANGE (day);\n";
	$sql .= sprintf("CREATE TABLE ${name}_%d PARTITION OF $name FOR VALUES FROM (date '2026-03-01' + %d) TO (date '2026-03-01' + %d);\n",
		$_, $_, $_ + 1)
	  for 0 .. 3;
	$sql .= "INSERT INTO $name SELECT * FROM model_in;\n";
	$sql .= "ALTER TABLE $name OWNER TO $owner;\n" . join('', map { "ALTER TABLE ${name}_$_ OWNER TO $owner;\n" } 0 .. 3)
	  if $owner;
	$primary->safe_psql('postgres', $sql);
}

sub differences
{
	my ($a, $b) = @_;
	return $primary->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM (TABLE $a EXCEPT ALL TABLE $b) x) + (SELECT count(*) FROM (TABLE $b EXCEPT ALL TABLE $a) y)");
}

sub differs_from_model
{
	my ($t) = @_;
	my $model = 'SELECT id, day, amount * 2 FROM model_in';
	return $primary->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM (TABLE $t EXCEPT ALL $model) x) + (SELECT count(*) FROM ($model EXCEPT ALL TABLE $t) y)");
}

sub plan_run
{
	my ($table, $opts, $src) = @_;
	return $primary->safe_psql('postgres',
		"SELECT backfill_plan('$table', '2026-03-01', '2026-03-05', \$q\$" . ($src // $source) . "\$q\$, options => '$opts')");
}

# --- the same rows as a local source, computed on the standby ----------------------------
make_table('remote_t');
make_table('local_t');
my $run = plan_run('remote_t', '{"source_server": "standby"}');
my $dry = $primary->safe_psql('postgres', "SELECT rows_after || ' ' || fingerprint_after FROM backfill_dry_run($run, 1)");
$primary->safe_psql('postgres', "CALL backfill_run($run)");
$primary->safe_psql('postgres', "CALL backfill_run(" . plan_run('local_t', '{}', $local) . ")");
is($primary->safe_psql('postgres', 'SELECT count(*) FILTER (WHERE amount = -1) || \' \' || count(*) FROM remote_t'),
	'0 40000', 'every row of the run was computed on a server in recovery');
is(differences('remote_t', 'local_t'), '0', 'the table equals the same run with a local source (EXCEPT ALL both ways)');
is($primary->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'the run is done');
is($dry, '10000 ' . $primary->safe_psql('postgres', "SELECT hash FROM backfill_fingerprint('local_t_0')"),
	'its dry run computed its first task there too: the rows the local source wrote');
is($primary->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_source_%'"),
	'0', 'no temporary table is left');
is($primary->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE details->>'source' LIKE 'SELECT id, day, doubled(amount)%') || ' ' || count(*) FROM backfill_log WHERE run_id = $run"),
	'4 4', 'each task\'s record names the source as bound, not the table its rows were read into');

# --- the direct calls: a replacement and a merge computed on the standby -------------------
make_table('direct_t');
$primary->safe_psql('postgres', "SELECT backfill_replace_partition('direct_t_1', \$q\$$source\$q\$, source_server => 'standby')");
is($primary->safe_psql('postgres',
	"SELECT count(*) FROM (TABLE direct_t_1 EXCEPT ALL SELECT id, day, amount * 2 FROM model_in WHERE day = '2026-03-02') x"),
	'0', 'backfill_replace_partition with source_server: the partition holds the rows computed on the standby');
$primary->safe_psql('postgres', q{
	CREATE TABLE direct_m (id bigint PRIMARY KEY, day date, amount int);
	INSERT INTO direct_m SELECT * FROM model_in WHERE day = '2026-03-03';
	SELECT backfill_merge('direct_m', 'SELECT id, day, doubled(amount) AS amount FROM model_in WHERE day = ''2026-03-03''',
		'{id}', source_server => 'standby');
});
is($primary->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE m.amount = i.amount * 2) || ' ' || count(*) FROM direct_m m JOIN model_in i USING (id)"),
	'10000 10000', 'backfill_merge with source_server: every row merged from the standby');
like($primary->safe_psql('postgres', "SELECT details->>'source' FROM backfill_log WHERE target = 'public.direct_m'"),
	qr/^SELECT id, day, doubled\(amount\)/, 'its record holds the source as given');

my ($ret, $out, $err) = $primary->psql('postgres',
	"BEGIN; INSERT INTO model_in VALUES (1000003, '2026-03-02', 5); SELECT backfill_replace_partition('direct_t_1', \$q\$$source\$q\$, source_server => 'standby')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/25000.*in a transaction that has written/s,
	'a call after its transaction wrote is refused: the standby would not see that row');

# --- rows committed just before a task: the task waits for the standby to replay them ----
make_table('fresh_t');
$run = plan_run('fresh_t', '{"source_server": "standby"}');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$primary->safe_psql('postgres', "INSERT INTO model_in VALUES (1000001, '2026-03-01', 21)");
my $h = $primary->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run);\n");
$primary->poll_query_until('postgres',
	"SELECT activity LIKE '%waits: server \"standby\" has replayed the WAL up to %' FROM backfill_progress WHERE run_id = $run")
  or die 'the run never showed its wait';
pass('while the standby is paused, backfill_progress shows the run waiting for it');
my $free = 0;
for (1 .. 10)
{
	$free++ if $primary->safe_psql('postgres',
		"SELECT backend_xid IS NULL FROM pg_stat_activity WHERE query LIKE 'CALL backfill_run($run)%'") eq 't';
	usleep(100_000);
}
cmp_ok($free, '>=', 8, 'the run waits between tasks: no transaction ID held while the standby catches up');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$h->quit;
is($primary->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'the run went on once replay resumed');
is($primary->safe_psql('postgres', 'SELECT amount FROM fresh_t WHERE id = 1000001'), '42',
	'a row committed on the primary while the standby was paused is in the result');

# --- a standby that does not catch up pauses the run ---------------------------------------
make_table('stuck_t');
$run = plan_run('stuck_t', '{"source_server": "standby", "throttle_timeout_ms": 2000, "throttle_interval_ms": 100}');
my $before = $primary->safe_psql('postgres', 'SELECT backfill_fingerprint(\'stuck_t_0\')');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$primary->safe_psql('postgres', "INSERT INTO model_in VALUES (1000002, '2026-03-01', 1)");
($ret, $out, $err) = $primary->psql('postgres', "CALL backfill_run($run)", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/57000.*run $run paused: waited 2(?:\.00)? s \(throttle_timeout_ms\): server "standby" has replayed/s,
	'the CALL fails with 57000, saying the standby has not replayed what the task needs');
is($primary->safe_psql('postgres', "SELECT status || ' ' || tasks_done FROM backfill_progress WHERE run_id = $run"),
	'paused 0', 'the run is paused, no task done');
is($primary->safe_psql('postgres', 'SELECT backfill_fingerprint(\'stuck_t_0\')'), $before, 'the task was rolled back');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$primary->safe_psql('postgres', "SELECT backfill_resume($run)");
$primary->safe_psql('postgres', "CALL backfill_run($run)");
is($primary->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'done', 'resumed, it finishes');

# --- the pinned code is checked on the primary before each task ----------------------------
make_table('pin_t');
$run = plan_run('pin_t', '{"source_server": "standby"}');
$primary->safe_psql('postgres', "CALL backfill_run($run, 1)");
$primary->safe_psql('postgres', q{CREATE OR REPLACE FUNCTION doubled(int) RETURNS int LANGUAGE sql IMMUTABLE
	AS 'SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN $1 * 3 ELSE -1 END'});
($ret, $out, $err) = $primary->psql('postgres', "CALL backfill_run($run)");
is($primary->safe_psql('postgres', "SELECT status FROM backfill_runs WHERE id = $run"), 'blocked',
	'a function replaced on the primary after the first task blocks the run');
is($primary->safe_psql('postgres', "SELECT count(*) FROM (TABLE pin_t_1 EXCEPT ALL SELECT * FROM model_in WHERE day = '2026-03-02') x"),
	'0', 'its second task wrote nothing');
$primary->safe_psql('postgres', q{CREATE OR REPLACE FUNCTION doubled(int) RETURNS int LANGUAGE sql IMMUTABLE
	AS 'SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN $1 * 2 ELSE -1 END'});

# --- what is refused at plan time ----------------------------------------------------------
my $other = PostgreSQL::Test::Cluster->new('other');
$other->init;
$other->start;
my ($phost, $pport, $ohost, $oport) = ($primary->host, $primary->port, $other->host, $other->port);
$primary->safe_psql('postgres', qq{
	CREATE SERVER itself FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$phost', port '$pport', dbname 'postgres');
	CREATE USER MAPPING FOR CURRENT_USER SERVER itself;
	CREATE SERVER other FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$ohost', port '$oport', dbname 'postgres');
	CREATE USER MAPPING FOR CURRENT_USER SERVER other;
	CREATE SERVER otherdb FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$shost', port '$sport', dbname 'template1');
	CREATE USER MAPPING FOR CURRENT_USER SERVER otherdb;
});
make_table('refuse_t');
my $runs_before = $primary->safe_psql('postgres', 'SELECT count(*) FROM backfill_runs');
for my $case ([ 'itself', qr/55000.*server "itself" is not in recovery/s ],
	[ 'other', qr/22023.*server "other" is not a standby of this server.*another cluster/s ],
	[ 'otherdb', qr/22023.*server "otherdb" connects to database "template1", not "postgres"/s ],
	[ 'nowhere', qr/42704.*foreign server "nowhere" does not exist/s ])
{
	($ret, $out, $err) = $primary->psql('postgres',
		"SELECT backfill_plan('refuse_t', '2026-03-01', '2026-03-05', \$q\$$source\$q\$, options => '{\"source_server\": \"$case->[0]\"}')",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, $case->[1], "server $case->[0] is refused at plan time");
}
is($primary->safe_psql('postgres', 'SELECT count(*) FROM backfill_runs'), $runs_before, 'and no run was planned');
$other->stop;

# --- a role without superuser: USAGE, a password, and a wrong one not echoed ---------------
make_table('analyst_t', 'analyst');
$primary->safe_psql('postgres', 'GRANT CREATE ON SCHEMA public TO analyst; GRANT SELECT ON model_in TO analyst; GRANT EXECUTE ON FUNCTION doubled(int) TO analyst');
my $as_analyst = "SET ROLE analyst; SELECT backfill_plan('analyst_t', '2026-03-01', '2026-03-05', \$q\$$source\$q\$, options => '{\"source_server\": \"standby\"}')";
($ret, $out, $err) = $primary->psql('postgres', $as_analyst, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501.*permission denied for foreign server standby/s, 'a role without USAGE on the server is refused');
$primary->safe_psql('postgres', 'GRANT USAGE ON FOREIGN SERVER standby TO analyst; CREATE USER MAPPING FOR analyst SERVER standby');
($ret, $out, $err) = $primary->psql('postgres', $as_analyst, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/2F003.*may not connect to server "standby" without a password/s, 'a mapping without a password is refused');
$primary->safe_psql('postgres', "ALTER USER MAPPING FOR analyst SERVER standby OPTIONS (ADD user 'analyst', ADD password 'wrong-donkey-staple')");
($ret, $out, $err) = $primary->psql('postgres', $as_analyst, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/08001.*could not connect to server "standby".*password authentication failed/s, 'a wrong password says so');
unlike($err, qr/wrong-donkey-staple/, 'without echoing it');
$primary->safe_psql('postgres', "ALTER USER MAPPING FOR analyst SERVER standby OPTIONS (SET password 'right-horse-battery')");
$run = $primary->safe_psql('postgres', $as_analyst);
$primary->safe_psql('postgres', "SET ROLE analyst; CALL backfill_run($run)");
is(differs_from_model('analyst_t'), '0', 'with its password, the analyst\'s run computes the same rows on the standby');
unlike($primary->safe_psql('postgres', "SELECT options::text || coalesce(error, '') FROM backfill_runs WHERE id = $run"),
	qr/right-horse-battery/, 'the run\'s record holds no credentials');

# the query runs on the standby as the role running here, whoever the mapping logs in as
my $me = $primary->safe_psql('postgres', 'SELECT current_user');
$primary->safe_psql('postgres', qq{
	CREATE SERVER as_analyst FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$shost', port '$sport', dbname 'postgres');
	CREATE USER MAPPING FOR CURRENT_USER SERVER as_analyst OPTIONS (user 'analyst', password 'right-horse-battery');
});
make_table('role_t');
$run = plan_run('role_t', '{"source_server": "as_analyst"}');
($ret, $out, $err) = $primary->psql('postgres', "CALL backfill_run($run)", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501.*permission denied to set role "\Q$me\E"/s,
	'a mapping that logs in as a role that may not become the caller is refused: the query never runs with other rights');

# --- a cancel reaches the standby; a standby that stops fails the task ---------------------
make_table('slow_t');
my $slow = 'SELECT id, day, doubled(amount) AS amount FROM model_in, pg_sleep(CASE WHEN $1 = \'2026-03-01\' THEN 60 ELSE 0 END) WHERE day >= $1 AND day < $2';
$run = plan_run('slow_t', '{"source_server": "standby"}', $slow);
$before = $primary->safe_psql('postgres', "SELECT backfill_fingerprint('slow_t')");
$h = $primary->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\echo started\nCALL backfill_run($run);\n");
$standby->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'backfill' AND wait_event = 'PgSleep')")
  or die 'the source never ran on the standby';
$primary->safe_psql('postgres', "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL backfill_run($run)%'");
ok($standby->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'backfill' AND state = 'active')"),
	'a cancel of the run\'s backend cancels its query on the standby');
$h->quit;
is($primary->safe_psql('postgres', "SELECT backfill_fingerprint('slow_t')"), $before, 'the cancelled task changed nothing');

$run = plan_run('slow_t', '{"source_server": "standby"}', $slow);
$h = $primary->background_psql('postgres', on_error_stop => 0);
$h->query_until(qr/started/, "\\set VERBOSITY verbose\n\\echo started\nCALL backfill_run($run);\n");
$standby->poll_query_until('postgres',
	"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'backfill' AND wait_event = 'PgSleep')")
  or die 'the source never ran on the standby';
$standby->stop('fast');
$primary->poll_query_until('postgres', "SELECT status = 'failed' FROM backfill_tasks WHERE run_id = $run AND task = 1")
  or die 'the task never failed';
$h->quit;
like($h->{stderr}, qr/08006.*lost the connection to server "standby"/s, 'a standby that stops mid-task fails it with 08006');
like($primary->safe_psql('postgres', "SELECT error FROM backfill_tasks WHERE run_id = $run AND task = 1"),
	qr/lost the connection to server "standby"/, 'the task\'s record says so');
is($primary->safe_psql('postgres', "SELECT backfill_fingerprint('slow_t')"), $before, 'and the table is as it was');

done_testing();
