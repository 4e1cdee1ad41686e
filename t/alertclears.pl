#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# contrib/prometheus-alerts.yml's CbexecCircuitOpen, fed with what cbexec
# --metrics wrote (or what node_exporter served of it), before and after
# an operator's act: for the tests that check that the alert fires on the
# first and clears on the second, and that the reset its annotation prints
# works as printed.
#
#   perl t/alertclears.pl render RULES BEFORE [INSTANCE]
#	the CbexecCircuitOpen description for the OPEN circuit of BEFORE
#	(a textfile or a scrape), its {{ $labels.x }} filled in as
#	Prometheus fills them in: one line
#   perl t/alertclears.pl test RULES BEFORE AFTER [INSTANCE]
#	a promtool rule test: every sample of BEFORE for six minutes, then
#	AFTER's (a sample AFTER lacks: gone); CbexecCircuitOpen must be
#	firing at 5m with exactly the rendered summary and description, and
#	none at 11m.  Runs `promtool test rules` and exits as it does (its
#	output on stdout).
#
# The rules file is read as cbexec's is written (two-space YAML, the
# description folded with >-); Go's template is done for the forms it
# uses: {{ $labels.NAME }}, {{ $value }} and
# {{ with $labels.NAME }}...{{ . }}...{{ end }}.
use strict;
use warnings;
use File::Temp qw(tempdir);

my ($cmd, $rules, $before, @rest) = @ARGV;
die "usage: $0 render|test RULES BEFORE [AFTER] [INSTANCE]\n"
    unless $cmd && $rules && $before;
my $after = $cmd eq 'test' ? shift @rest : undef;
my $instance = shift(@rest) // 'host1:9100';

# samples FILE: [[name, {labels}, value], ...]
sub samples {
	my ($file) = @_;
	open my $f, '<', $file or die "$file: $!\n";
	my @s;
	while (<$f>) {
		next if /^\s*(#|$)/;
		next unless /^(cbexec_[a-z_]+)(?:\{(.*)\})?\s+(\S+)$/;
		my ($name, $l, $v) = ($1, $2 // '', $3);
		my %l;
		while ($l =~ /\G,?([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/gc) {
			my ($k, $x) = ($1, $2);
			$x =~ s/\\n/\n/g;
			$x =~ s/\\(.)/$1/g;
			$l{$k} = $x;
		}
		push @s, [$name, \%l, $v];
	}
	return @s;
}

# The alert's annotations, as the rules file words them.
sub annotations {
	open my $f, '<', $rules or die "$rules: $!\n";
	my ($in, $ann, %a, $key, $fold) = (0, 0);
	while (<$f>) {
		chomp;
		if (/^\s*- alert:\s*(\S+)/) {
			last if $in;
			$in = $1 eq 'CbexecCircuitOpen';
			next;
		}
		next unless $in;
		if (/^(\s*)annotations:\s*$/) { $ann = length $1; next }
		next unless $ann;
		if (/^(\s*)(\w+):\s*(.*)$/ && length($1) == $ann + 2) {
			($key, my $v) = ($2, $3);
			if ($v eq '>-') { $fold = 1; $a{$key} = '' }
			else {
				$fold = 0;
				$v =~ s/^"(.*)"$/$1/;
				$a{$key} = $v;
			}
			next;
		}
		# A folded scalar: its lines as indented as its first, joined
		# with spaces; anything less indented ends it.
		if ($fold && /^(\s+)(\S.*)$/ && length($1) > $ann + 2 &&
		    ($fold == 1 || length($1) >= $fold)) {
			$fold = length($1) if $fold == 1;
			$a{$key} .= ($a{$key} eq '' ? '' : ' ') . $2;
			next;
		}
		$fold = 0;
		last if /^\s*\S/ && !/^\s+/;
	}
	die "$rules: no CbexecCircuitOpen annotations\n" unless %a;
	return %a;
}

sub render {
	my ($t, $labels, $value) = @_;
	$t =~ s/\{\{\s*with\s+\$labels\.(\w+)\s*\}\}(.*?)\{\{\s*end\s*\}\}/
	    defined $labels->{$1} && $labels->{$1} ne '' ?
	    do { my ($v, $b) = ($labels->{$1}, $2); $b =~ s!\{\{\s*\.\s*\}\}!$v!g; $b } : ''/ge;
	$t =~ s/\{\{\s*\$labels\.(\w+)\s*\}\}/$labels->{$1} \/\/ ''/ge;
	$t =~ s/\{\{\s*\$value\s*\}\}/$value/g;
	return $t;
}

# The OPEN circuit of the samples: its cbexec_state's labels.
sub open_labels {
	my @s = @_;
	my ($st) = grep { $_->[0] eq 'cbexec_state' && $_->[2] == 2 } @s;
	die "$before: no cbexec_state 2 (OPEN)\n" unless $st;
	return { %{$st->[1]}, instance => $instance, job => 'node' };
}

sub yq { my $s = shift; $s =~ s/\\/\\\\/g; $s =~ s/"/\\"/g; $s =~ s/\n/\\n/g; "\"$s\"" }

sub series {
	my ($name, $l) = @_;
	my %all = (%$l, instance => $instance, job => 'node');
	return $name . '{' . join(',', map {
		my $v = $all{$_}; $v =~ s/\\/\\\\/g; $v =~ s/"/\\"/g; $v =~ s/\n/\\n/g;
		"$_=\"$v\"" } sort keys %all) . '}';
}

my @b = samples($before);
my $labels = open_labels(@b);
my %ann = annotations();
if ($cmd eq 'render') {
	print render($ann{description}, $labels, 2), "\n";
	exit 0;
}
die "$0: test needs AFTER\n" unless defined $after;
my @a = samples($after);
my %after = map { series($_->[0], $_->[1]) => $_->[2] } @a;
my %seen;
my $dir = tempdir(CLEANUP => 1);
open my $y, '>', "$dir/test.yml" or die;
print $y "rule_files:\n  - $rules\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n";
for my $s (@b, @a) {
	my $key = series($s->[0], $s->[1]);
	next if $seen{$key}++;
	my ($bv) = map { $_->[2] } grep { series($_->[0], $_->[1]) eq $key } @b;
	my $av = $after{$key};
	printf $y "      - series: %s\n        values: '%s %s'\n", yq($key),
	    defined $bv ? "${bv}x5" : '_x5', defined $av ? "${av}x5" : '_x5';
}
print $y "    alert_rule_test:\n      - eval_time: 5m\n        alertname: CbexecCircuitOpen\n        exp_alerts:\n          - exp_labels:\n";
my %el = (%$labels, severity => 'critical');
printf $y "              %s: %s\n", $_, yq($el{$_}) for sort keys %el;
print $y "            exp_annotations:\n";
printf $y "              %s: %s\n", $_, yq(render($ann{$_}, $labels, 2)) for sort keys %ann;
print $y "      - eval_time: 11m\n        alertname: CbexecCircuitOpen\n        exp_alerts: []\n";
close $y;
my $out = `promtool test rules "$dir/test.yml" 2>&1`;
my $rc = $? >> 8;
print $out;
exit $rc;
