#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# make corpus: judge every case of t/corpus/ (README.md there) with the
# cbexec binary, as a run would judge it, and score the verdicts.
#
#   perl t/corpus/score.pl [-v] [CASE-OR-DIRECTORY...]
#
# A case is replayed (t/corpus/replay: its stderr, its stdout, its exit
# status) as the COMMAND of `cbexec --agent AGENT` (a client described in
# t/agents/docs/AGENT.md with that description as --config), on a circuit of its
# own whose thresholds no single run reaches; the verdict is the run line
# of --log (class, type, message).  Each case is applied once more with
# `cbexec --record --agent AGENT --stdout-file --stderr-file --exit`, which
# must reach the same verdict.  A series (a directory with `expect` and
# runs 1.*, 2.*, ...) is replayed run after run on one circuit with the
# default thresholds, and its `stuck:` label says whether it must end
# STUCK (121).
#
# Prints a table per detector (the type a catch case wants, or the type
# a clean case was wrongly given) and lists every false stop and every
# miss.  Exits 1 on any false stop, or when a run and its --record
# disagree; misses are reported, with the share caught.
use strict;
use warnings;
use File::Basename qw(dirname basename);
use File::Find;
use File::Temp qw(tempdir);
use JSON::PP;

my $top = dirname(dirname(dirname(__FILE__)));
$top = '.' if $top eq '';
my $cbexec = $ENV{CBEXEC} // "$top/cbexec";
my $replay = "$top/t/corpus/replay";
my $verbose = 0;
if (@ARGV && $ARGV[0] eq '-v') { $verbose = 1; shift @ARGV; }
my @roots = @ARGV ? @ARGV : ("$top/t/corpus");

my %keys = map { $_ => 1 } qw(side agent class type message source options
    hang stuck note record);
my %agents = map { $_ => 1 } qw(none claude codex gemini qwen opencode pi
    copilot cn kilo);
# Clients cbexec reads through a description in a config (SPEC §10): the
# one of t/agents/docs/CLIENT.md (its ```json block), given with --config.
my %described;
for my $md (glob("$top/t/agents/docs/*.md")) {
	my ($name) = basename($md) =~ /^([a-z]+)\.md$/ or next;
	open(my $fh, '<', $md) or next;
	my ($in, $text) = (0, '');
	while (<$fh>) {
		if (/^```json$/) { $in = 1; next; }
		if ($in && /^```$/) { last; }
		$text .= $_ if $in;
	}
	next unless $text =~ /"agents"/;
	$agents{$name} = 1;
	$described{$name} = $text;
}
my %classes = map { $_ => 1 } qw(success recoverable transient fatal timeout
    budget);
my $tmp = tempdir('cbexec-corpus.XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;
for my $name (keys %described) {
	open(my $fh, '>', "$tmp/$name.config.json") or die "$tmp: $!";
	print $fh $described{$name};
	close($fh);
}
# The options that make cbexec read a case as agent's.
sub agent_opts {
	my ($agent) = @_;
	return $described{$agent} ?
	    ('--config', "$tmp/$agent.config.json", '--agent', $agent) :
	    ('--agent', $agent);
}

# The cases: STEM.expect files, and series directories.
my (@cases, @series);
for my $root (@roots) {
	if (-f $root && $root =~ /\.expect$/) {
		push @cases, $root =~ s/\.expect$//r;
		next;
	}
	find({ no_chdir => 1, wanted => sub {
		if (-d $_ && -f "$_/expect") {
			push @series, $_;
			$File::Find::prune = 1;
		} elsif (/\.expect$/ && -f $_) {
			push @cases, s/\.expect$//r;
		}
	} }, $root);
}
@cases = sort @cases;
@series = sort @series;

my $errors = 0;
sub bad { print STDERR "corpus: @_\n"; $errors++; }

sub labels {
	my ($file) = @_;
	my %l;
	open(my $fh, '<', $file) or do { bad("$file: $!"); return; };
	while (<$fh>) {
		chomp;
		next if /^\s*(#|$)/;
		unless (/^([a-z]+):\s*(.*?)\s*$/) {
			bad("$file:$.: not a 'key: value' line");
			return;
		}
		unless ($keys{$1}) {
			bad("$file:$.: unknown key '$1'");
			return;
		}
		$l{$1} = $2;
	}
	unless (defined $l{side} && $l{side} =~ /^(clean|catch)$/) {
		bad("$file: side: clean or catch");
		return;
	}
	if (defined $l{class} && !$classes{$l{class}}) {
		bad("$file: unknown class '$l{class}'");
		return;
	}
	if ($l{side} eq 'catch' && !defined $l{class} && !defined $l{stuck}) {
		bad("$file: a catch case names the class it wants");
		return;
	}
	return \%l;
}

# The client a case is read as: its label, else the recording's
# directory (recorded/CLIENT-VERSION/), else none.
sub agent_of {
	my ($path, $l) = @_;
	my $a = $l->{agent};
	if (!defined $a && $path =~ m{recorded/([a-z]+)-[0-9][^/]*/}) {
		$a = $1;
	}
	$a //= 'none';
	bad("$path: unknown agent '$a'") unless $agents{$a};
	return $a;
}

# The run lines of a --log file.
sub runs {
	my ($log) = @_;
	my @r;
	open(my $fh, '<', $log) or return ();
	while (<$fh>) {
		my $e = eval { $json->decode($_) } or next;
		push @r, $e if ($e->{event} // '') eq 'run';
	}
	return @r;
}

my $n = 0;
sub cbexec_run {
	my ($agent, $stem, $opts, $hang, $state) = @_;
	my $log = "$tmp/" . ++$n . ".log";
	$state //= "$tmp/$n.json";
	my @cmd = ($cbexec, '--state', $state, '--log', $log, '--no-prompt',
	    '-qq', agent_opts($agent), '--progress', 'exit',
	    split(' ', $opts // ''), '--', 'sh', $replay, $stem);
	local $ENV{REPLAY_HANG} = $hang if defined $hang;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open(STDOUT, '>', '/dev/null');
		open(STDERR, '>', "$tmp/$n.err");
		exec(@cmd) or exit 127;
	}
	waitpid($pid, 0);
	my $rc = $? >> 8;
	my @r = runs($log);
	return ($rc, $r[-1], "$tmp/$n.err");
}

my $lone = '--no-progress-threshold 1000 --max-consecutive-errors 1000 ' .
    '--same-error-threshold 1000 --half-open-after 1000 --max-retries 1000';

sub stops {
	my ($v) = @_;
	return $v->{class} =~ /^(fatal|transient|timeout|budget)$/ ||
	    ($v->{type} // '') =~ /^(loop|idle)$/;
}

my (%det, @false, @miss, @disagree, %noadapter);
my ($clean, $catch, $caught, $recorded) = (0, 0, 0, 0);

sub tally {
	my ($d, $what) = @_;
	$det{$d} //= { cases => 0, caught => 0, missed => 0, false => 0,
	    clean => 0 };
	$det{$d}{$what}++;
}

for my $stem (@cases) {
	my $l = labels("$stem.expect") or next;
	my $agent = agent_of($stem, $l);
	my $opts = join(' ', $lone, $l->{options} // '');
	my ($rc, $v, $err) = cbexec_run($agent, $stem, $opts, $l->{hang},
	    undef);
	unless (defined $v) {
		open(my $fh, '<', $err);
		my $why = join('', <$fh>);
		chomp $why;
		# a client this cbexec has no adapter for: said, not scored
		if ($why =~ /unknown agent '([a-z]+)'/) {
			$noadapter{$1}++;
			next;
		}
		bad("$stem: no run was recorded (exit $rc): $why");
		next;
	}
	$recorded++ if $stem =~ m{/recorded/};
	my $got = "$v->{class} " . ($v->{type} // '');
	my $msg = $v->{message} // '';
	if ($l->{side} eq 'clean') {
		$clean++;
		if (stops($v)) {
			tally($v->{type} || $v->{class}, 'false');
			push @false, "$stem: $got: $msg";
		} else {
			tally($l->{type} // 'ordinary', 'clean');
		}
	} else {
		$catch++;
		my $d = $l->{type} // $l->{class};
		tally($d, 'cases');
		my $ok = $v->{class} eq $l->{class} &&
		    (!defined $l->{type} || ($v->{type} // '') eq $l->{type}) &&
		    (!defined $l->{message} || index($msg, $l->{message}) >= 0);
		if ($ok) {
			$caught++;
			tally($d, 'caught');
		} else {
			tally($d, 'missed');
			push @miss, "$stem: want $l->{class} " .
			    ($l->{type} // '') . ", got $got: $msg";
		}
	}
	printf "%-5s %s: %s: %s\n", $l->{side}, $stem, $got, $msg if $verbose;
	# The same output applied with --record reaches the same verdict
	# (not for a case that needs a live run: a hang, a run's options).
	next if defined $l->{hang} || defined $l->{options} ||
	    ($l->{record} // '') eq 'no';
	my $code = 0;
	if (open(my $fh, '<', "$stem.exit")) { $code = <$fh> // 0; chomp $code; }
	my $state = "$tmp/" . ++$n . ".json";
	my $log = "$tmp/$n.log";
	unless (-e "$tmp/empty") {
		open(my $e, ">", "$tmp/empty") or die "$tmp/empty: $!";
		close($e);
	}
	my @rec = ($cbexec, '--record', '--state', $state, '--log', $log,
	    '-qq', '--no-prompt', agent_opts($agent), '--exit', $code,
	    '--progress', 'no',
	    '--stdout-file', -e "$stem.stdout" ? "$stem.stdout" : "$tmp/empty",
	    '--stderr-file', -e "$stem.stderr" ? "$stem.stderr" : "$tmp/empty",
	    split(' ', $lone));
	system("@{[map { quotemeta } @rec]} >/dev/null 2>&1");
	my @r = runs($log);
	my $rv = $r[-1];
	my $rgot = defined $rv ? "$rv->{class} " . ($rv->{type} // '') :
	    'nothing';
	push @disagree, "$stem: run $got, --record $rgot" if $rgot ne $got;
}

# Series: run after run on one circuit, default thresholds.
for my $dir (@series) {
	my $l = labels("$dir/expect") or next;
	my $agent = agent_of("$dir/", $l);
	my $state = "$tmp/" . ++$n . "-series.json";
	my @stems;
	for (my $i = 1; -e "$dir/$i.exit" || -e "$dir/$i.stdout" ||
	    -e "$dir/$i.stderr"; $i++) {
		push @stems, "$dir/$i";
	}
	unless (@stems) {
		bad("$dir: a series with no runs (1.stdout, 1.stderr, 1.exit)");
		next;
	}
	my ($last, @seen) = (0);
	for my $s (@stems) {
		my ($rc, $v) = cbexec_run($agent, $s, $l->{options}, undef,
		    $state);
		$last = $rc;
		push @seen, $rc;
		last if $rc >= 120 && $rc <= 122;
	}
	my $stuck = $last == 121;
	my $want = ($l->{stuck} // 'no') eq 'yes';
	my $what = "exits @seen";
	if ($l->{side} eq 'clean') {
		$clean++;
		if ($stuck || grep { $_ >= 120 && $_ <= 122 } @seen) {
			tally('same-error', 'false');
			push @false, "$dir: $what";
		} else {
			tally('same-error', 'clean');
		}
	} else {
		$catch++;
		tally('same-error', 'cases');
		if ($stuck == $want) {
			$caught++;
			tally('same-error', 'caught');
		} else {
			tally('same-error', 'missed');
			push @miss, "$dir: want " . ($want ? 'STUCK' : 'not STUCK') .
			    ", $what";
		}
	}
	printf "%-5s %s: %s\n", $l->{side}, $dir, $what if $verbose;
}

my $total = $clean + $catch;
printf "%-20s %6s %7s %7s %7s %6s\n", 'detector', 'catch', 'caught', 'missed',
    'clean', 'false';
for my $d (sort keys %det) {
	my $x = $det{$d};
	printf "%-20s %6d %7d %7d %7d %6d\n", $d, $x->{cases}, $x->{caught},
	    $x->{missed}, $x->{clean}, $x->{false};
}
printf "%-20s %6d %7d %7d %7d %6d\n", 'all', $catch, $caught, $catch - $caught,
    $clean, scalar(@false);
printf "%d cases (%d recorded from real clients, %d clean, %d to catch); " .
    "caught %d of %d (%.1f %%); false stops: %d\n", $total, $recorded, $clean,
    $catch, $caught, $catch, $catch ? 100 * $caught / $catch : 100,
    scalar(@false);
printf "not scored: %d cases of %s (no adapter in this cbexec)\n",
    $noadapter{$_}, $_ for sort keys %noadapter;
print "false stop: $_\n" for @false;
print "miss: $_\n" for @miss;
print "--record differs: $_\n" for @disagree;
exit(($errors || @false || @disagree) ? 1 : 0);
