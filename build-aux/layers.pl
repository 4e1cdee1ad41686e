#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# The layering of src/ (ARCHITECTURE.md): which subsystem may include which.
# Each folder of src/ is a subsystem; include/NAME.h is the face of src/NAME/,
# a header beside the code belongs to its folder.  Prints one TAP line per
# rule: every #include "..." of a folder names its own headers or the face of
# a subsystem below it, and the folders form no circle.
use strict;
use warnings;

my $top = shift // '.';
# Lowest first.  A subsystem may include only faces of those before it.
my @layers = qw(core breaker run store judge agent report cli driver);
my %rank;
@rank{@layers} = 0 .. $#layers;
$rank{top} = scalar @layers;	# src/cbexec.c

my (%deps, @bad);
for my $file (glob("$top/src/*.c"), glob("$top/src/*/*.[ch]"),
    glob("$top/include/*.h")) {
	my $rel = substr($file, length($top) + 1);
	my $from = $rel =~ m{^src/([^/]+)/} ? $1 :
	    $rel =~ m{^include/([^/]+)\.h$} ? $1 : 'top';
	open(my $fh, '<', $file) or die "$file: $!\n";
	while (<$fh>) {
		next unless /^#\s*include\s+"([^"]+)"/;
		my $h = $1;
		my $to;
		if (-e "$top/include/$h") {
			($to = $h) =~ s/\.h$//;
		} elsif ($from ne 'top' && -e "$top/src/$from/$h") {
			$to = $from;
		} else {
			push @bad, "$rel includes \"$h\", which is neither a face " .
			    "in include/ nor beside it";
			next;
		}
		next if $to eq $from;
		if (!exists $rank{$to}) {
			push @bad, "$rel includes \"$h\": '$to' is no subsystem";
			next;
		}
		if (!exists $rank{$from}) {
			push @bad, "$rel: '$from' is not in the layer list";
			next;
		}
		$deps{$from}{$to} = 1;
		push @bad, "$rel includes \"$h\": $from may not depend on $to " .
		    "(a lower layer, or a sibling)" if $rank{$to} >= $rank{$from};
	}
}
# A circle would need an edge that goes up or sideways, which the check
# above refuses; say so for the reader of the output all the same.
my $n = 0;
printf "ok %d - layers: %s\n", ++$n, join(' < ', @layers, 'cbexec.c');
for my $from (sort { $rank{$a} <=> $rank{$b} } keys %deps) {
	printf "ok %d - %s uses %s\n", ++$n, $from,
	    join(', ', sort { $rank{$a} <=> $rank{$b} } keys %{$deps{$from}});
}
for (@bad) {
	printf "not ok %d - %s\n", ++$n, $_;
}
print "1..$n\n";
exit(@bad ? 1 : 0);
