# t/013_fuzz_keys.pl: runs on partition keys of seeded random types that run code of their
# owner's making: domains (whose CHECK calls a function), composites and arrays of them, at
# random depths.
#
# A role with no right but TEMP makes each key type, its table and the CHECK's function, all
# in pg_temp; the CHECK notes the role it runs as, and tries ALTER ROLE ... SUPERUSER when it
# runs as any other.  The role plans a run over the table, dry-runs a task, runs it, retries a
# task and runs again.  After each case: the role is not superuser, the CHECK ran, and only as
# that role, and the table holds the run's rows.  The seed is fixed: a failure names the case.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('keys');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION backfill;
	CREATE ROLE regress_temp_only LOGIN;
});

srand(20261205);

# a key type over the domain d: its text for the values 1..3, by shape
sub key_shape
{
	my ($depth, $in_array) = @_;
	my @kinds = $in_array ? qw(domain composite composite2) : qw(domain domain composite array composite2);
	my $kind = $depth >= 3 ? 'domain' : $kinds[ int(rand(@kinds)) ];
	return { sql => 'pg_temp.d', lit => sub { $_[0] }, defs => [] } if $kind eq 'domain';
	# (an array's elements are no arrays: d[][] is d[])
	my $inner = key_shape($depth + 1, $kind eq 'array');
	my $n = 'pg_temp.k' . int(rand(1_000_000));
	if ($kind eq 'array')
	{
		return { sql => "$inner->{sql}\[\]", defs => $inner->{defs},
			lit => sub { my $v = $inner->{lit}->($_[0]); '{' . ($v =~ /^[0-9]+$/ ? $v : '"' . quote_elem($v) . '"') . '}' } };
	}
	my $fields = $kind eq 'composite' ? "a $inner->{sql}" : "z int, a $inner->{sql}";
	return { sql => $n, defs => [ @{ $inner->{defs} }, "CREATE TYPE $n AS ($fields);" ],
		lit => sub { my $v = $inner->{lit}->($_[0]); my $f = '"' . quote_elem($v) . '"'; $kind eq 'composite' ? "($f)" : "(0,$f)" } };
}

sub quote_elem { my ($v) = @_; $v =~ s/(["\\])/\\$1/g; return $v; }

sub sqlstr { my ($v) = @_; $v =~ s/'/''/g; return "'$v'"; }

my (@failed, %shapes);
my $cases = 12;
for my $case (1 .. $cases)
{
	my $key = key_shape(0, 0);
	$shapes{ $key->{sql} =~ /\[\]$/ ? 'array' : $key->{sql} =~ /pg_temp\.k/ ? 'composite' : 'domain' }++;
	$shapes{'nested'}++ if @{ $key->{defs} } > 1 || ($key->{sql} =~ /pg_temp\.k.*\[\]/);
	my ($l1, $l2, $l3) = map { $key->{lit}->($_) } 1 .. 3;
	my $defs = join("\n", @{ $key->{defs} });
	my $script = qq{
\\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET ROLE regress_temp_only;
CREATE TABLE pg_temp.seen (who name);
CREATE FUNCTION pg_temp.watch(v int) RETURNS bool LANGUAGE plpgsql AS \$f\$
BEGIN
	INSERT INTO pg_temp.seen VALUES (current_user);
	IF current_user <> 'regress_temp_only' THEN
		BEGIN
			EXECUTE 'ALTER ROLE regress_temp_only SUPERUSER';
		EXCEPTION WHEN OTHERS THEN NULL;
		END;
	END IF;
	RETURN v IS NULL OR v > 0;
END \$f\$;
CREATE DOMAIN pg_temp.d AS int CHECK (pg_temp.watch(VALUE));
$defs
CREATE TABLE pg_temp.t (k $key->{sql} NOT NULL, v int) PARTITION BY RANGE (k);
CREATE TABLE pg_temp.t1 PARTITION OF pg_temp.t FOR VALUES FROM (@{[sqlstr($l1)]}) TO (@{[sqlstr($l2)]});
CREATE TABLE pg_temp.t2 PARTITION OF pg_temp.t FOR VALUES FROM (@{[sqlstr($l2)]}) TO (@{[sqlstr($l3)]});
INSERT INTO pg_temp.t VALUES (@{[sqlstr($l1)]}, 10), (@{[sqlstr($l2)]}, 20);
CREATE TABLE pg_temp.model AS SELECT k, v + 1 AS v FROM pg_temp.t;
TRUNCATE pg_temp.seen;
SELECT backfill_plan('pg_temp.t', @{[sqlstr($l1)]}, @{[sqlstr($l3)]},
	'SELECT k, v FROM pg_temp.model WHERE k >= \$1 AND k < \$2') AS r \\gset
SELECT count(*) FROM backfill_dry_run(:r, 2);
CALL backfill_run(:r, 1);
SELECT backfill_retry(:r, 1);
CALL backfill_run(:r);
RESET ROLE;
SELECT (SELECT count(*) > 0 FROM pg_temp.seen)
	AND NOT EXISTS (SELECT FROM pg_temp.seen WHERE who <> 'regress_temp_only')
	AND NOT EXISTS (SELECT * FROM pg_temp.t EXCEPT SELECT * FROM pg_temp.model)
	AND NOT EXISTS (SELECT * FROM pg_temp.model EXCEPT SELECT * FROM pg_temp.t)
	AND (SELECT status FROM backfill_runs WHERE id = :r) = 'done';
};
	my ($rc, $out, $err) = $node->psql('postgres', $script);
	my $last = (split /\n/, $out)[-1] // '';
	push @failed, "#$case key $key->{sql} ($l1, $l2, $l3): rc $rc, last '$last': $err" if $rc != 0 || $last ne 't';
	my $super = $node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_temp_only'});
	push @failed, "#$case key $key->{sql}: the role became superuser" if $super ne 'f';
	$node->safe_psql('postgres', 'ALTER ROLE regress_temp_only NOSUPERUSER') if $super ne 'f';
}
diag(join(', ', map { "$_ x$shapes{$_}" } sort keys %shapes));
is(scalar(grep { $shapes{$_} } qw(array composite domain nested)), 4, 'keys of every shape were made: domain, composite, array, nested');
is(join("\n", @failed), '', "$cases random key types: the CHECK ran only as the role, the role stayed as it was, the table holds the run's rows");

$node->stop;
done_testing();
