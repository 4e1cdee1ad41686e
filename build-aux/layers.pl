#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# The layering of src/ as ARCHITECTURE.md draws it: which subsystem may
# include which.  Each folder of src/ is a subsystem; include/NAME.h is the
# face of src/NAME/, a header beside the code belongs to its folder.  The
# table of ARCHITECTURE.md ("| subsystem | face | uses |", lowest first)
# is read here and is the rule: every #include "..." of a folder names its
# own headers or the face of a subsystem its row lists under "uses" ("all
# of the above": any row above it), and the rows draw arrows down only,
# so the folders form no circle.  src/cbexec.c may use every face.  And
# a file's name is its own: no two files share one but a header and its
# code (X.h beside X.c, the face include/S.h and src/S/S.c).
# Prints one TAP line per rule.
use strict;
use warnings;

my $top = shift // '.';

# The table: its rows in order, and what each may use.
my (@layers, %uses, @bad);
open(my $arch, '<', "$top/ARCHITECTURE.md") or die "ARCHITECTURE.md: $!\n";
while (<$arch>) {
	next unless /^\|\s*([a-z]+)\s*\|\s*`([a-z]+)\.h`\s*\|\s*(.*?)\s*\|\s*$/;
	my ($name, $face, $list) = ($1, $2, $3);
	push @bad, "ARCHITECTURE.md: $name\'s face is $face.h, not $name.h"
	    if $face ne $name;
	1 while $list =~ s/\([^()]*\)//g;	# what the use is for
	my @u;
	if ($list =~ /^all of the above\b/) {
		@u = @layers;
	} else {
		for my $w (split /\s*,\s*/, $list) {
			$w =~ s/^\s+|\s+$//g;
			next if $w eq '' || $w eq '—' || $w eq '-';
			push @u, $w;
		}
	}
	push @layers, $name;
	$uses{$name} = { map { $_ => 1 } @u };
}
close($arch);
die "ARCHITECTURE.md: no table of subsystems\n" unless @layers;
my %rank;
@rank{@layers} = 0 .. $#layers;
$rank{top} = scalar @layers;	# src/cbexec.c
for my $from (@layers) {
	for my $to (sort keys %{$uses{$from}}) {
		push @bad, "ARCHITECTURE.md: $from uses '$to', which is no " .
		    "subsystem of the table" unless exists $rank{$to};
		push @bad, "ARCHITECTURE.md: $from uses $to, which is not " .
		    "below it" if exists $rank{$to} && $rank{$to} >= $rank{$from};
	}
}
for my $dir (glob("$top/src/*/")) {
	my ($name) = $dir =~ m{/src/([^/]+)/$};
	push @bad, "src/$name/ is in no row of ARCHITECTURE.md's table"
	    unless exists $rank{$name};
}

my %deps;
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
		next if $from eq 'top';
		push @bad, "$rel includes \"$h\": $from may not use $to " .
		    "(ARCHITECTURE.md draws $from using " .
		    (join(', ', sort { $rank{$a} <=> $rank{$b} }
		    keys %{$uses{$from}}) || 'nothing') . ")"
		    unless $uses{$from}{$to};
	}
}
# A file's name says which file it is (ARCHITECTURE.md): a name without
# its .c or .h is one file's, or a header's and its code's -- X.h beside
# X.c, or the face include/S.h and src/S/S.c.
my (%stem, $shared);
for my $file (glob("$top/src/*.c"), glob("$top/src/*/*.[ch]"),
    glob("$top/include/*.h")) {
	my $rel = substr($file, length($top) + 1);
	my ($stem) = $rel =~ m{([^/]+)\.[ch]$};
	push @{$stem{$stem}}, $rel;
}
for my $stem (sort keys %stem) {
	my @f = sort @{$stem{$stem}};
	next if @f == 1;
	my @c = grep { /\.c$/ } @f;
	my @h = grep { /\.h$/ } @f;
	if (@c == 1 && @h == 1) {
		my ($cdir) = $c[0] =~ m{^(.*)/[^/]+$};
		my ($hdir) = $h[0] =~ m{^(.*)/[^/]+$};
		next if $cdir eq $hdir;
		next if $h[0] eq "include/$stem.h" && $c[0] eq "src/$stem/$stem.c";
	}
	push @bad, "the name $stem is shared by " . join(', ', @f) .
	    " (ARCHITECTURE.md: only a header and its own code share one)";
	$shared++;
}

my $n = 0;
printf "ok %d - layers: %s\n", ++$n, join(' < ', @layers, 'cbexec.c');
printf "ok %d - no name is shared but by a header and its own code\n", ++$n
    unless $shared;
for my $from (sort { $rank{$a} <=> $rank{$b} } keys %deps) {
	printf "ok %d - %s uses %s\n", ++$n, $from,
	    join(', ', sort { $rank{$a} <=> $rank{$b} } keys %{$deps{$from}});
}
for (@bad) {
	printf "not ok %d - %s\n", ++$n, $_;
}
print "1..$n\n";
exit(@bad ? 1 : 0);
