#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# A tiny HTTP/1.1 listener on 127.0.0.1 for the tests of the hook recipes
# (healthchecks.io-style pings, ntfy): perl httplisten.pl PORTFILE LOG.
# It writes its port to PORTFILE once it listens, then for each request
# one line to LOG: "METHOD PATH", and tab-separated the headers a recipe
# sets (Title, Priority, Tags) and the body.  It answers 200, or 503 for a
# path under /down (a monitor that is down), one request a connection.
# It exits after 5 minutes whatever happens, so it never outlives a test.
use strict;
use warnings;
use IO::Socket::INET;

my ($portfile, $log) = @ARGV;
my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
    Listen => 16, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!\n";
open my $l, '>>', $log or die "$log: $!\n";
select((select($l), $| = 1)[0]);
open my $p, '>', "$portfile.tmp" or die "$portfile: $!\n";
print $p $s->sockport, "\n";
close $p;
rename "$portfile.tmp", $portfile or die "$portfile: $!\n";
$SIG{ALRM} = sub { exit 0 };
alarm 300;
while (my $c = $s->accept) {
	local $/ = "\r\n";
	my $req = <$c>;
	next unless defined $req;
	chomp $req;
	my ($m, $path) = split / /, $req;
	my %h;
	while (my $line = <$c>) {
		chomp $line;
		last if $line eq '';
		my ($k, $v) = split /:\s*/, $line, 2;
		$h{lc $k} = $v;
	}
	my $body = '';
	read($c, $body, $h{'content-length'}) if $h{'content-length'};
	print $l join("\t", "$m $path",
	    (map { "$_: $h{lc $_}" } grep { exists $h{lc $_} } qw(Title Priority Tags)),
	    $body), "\n";
	my $st = $path =~ m{^/down} ? "503 Service Unavailable" : "200 OK";
	print $c "HTTP/1.1 $st\r\nContent-Type: text/plain\r\n",
	    "Content-Length: 3\r\nConnection: close\r\n\r\nOK\n";
	close $c;
}
