# t/BackfillCrash.pm: killing a test node the two ways the crash tests need.
#
# kill_server($node): an immediate stop (no checkpoint, as a power cut would leave the
# data) and a start.  kill_backend($node, $pid, $what): SIGKILL of one backend, after
# which the postmaster restarts the whole server; it checks that it did.  forget(@sessions):
# close background sessions whose server went away.
package BackfillCrash;

use strict;
use warnings;

use Exporter 'import';
use Test::More;

our @EXPORT = qw(kill_server kill_backend forget);

sub kill_server
{
	my ($node) = @_;
	$node->stop('immediate');
	$node->start;
}

sub kill_backend
{
	my ($node, $pid, $what) = @_;
	my $offset = -s $node->logfile;
	kill 'KILL', $pid or die "could not kill $pid: $!";
	# Polling before the server accepts connections again races psql, which exits at once
	# when it cannot connect, against the query written to its stdin: the write can fail
	# with EPIPE, and as the tests ignore SIGPIPE that ends the test with exit status 32.
	$node->wait_for_log(
		qr/all server processes terminated; reinitializing.*database system is ready to accept connections/s,
		$offset);
	$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
	# "server process (PID n)" up to 17, "client backend (PID n)" from 18
	ok($node->log_contains(qr/ \(PID $pid\) was terminated by signal 9/, $offset),
		"$what: the server went through a crash restart");
}

sub forget
{
	eval { $_->quit } for @_;
}

1;
