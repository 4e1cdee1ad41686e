#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# A small JSON Schema validator (the part of draft 2020-12 that
# contrib/schema/ uses) for the tests: cbexec's JSON views and --log lines
# checked against the schemas the man page points to.
#
#   perl t/jsonschema.pl [--lines] SCHEMA FILE...
#
# Each FILE holds one JSON document (with --lines: one per non-empty line).
# Prints one line per document that does not validate, with the path of
# the first member that does not and why; exits 1 if any does not, 2 on a
# bad schema.  Keywords: $ref (within a file, "#/$defs/x", or to another
# schema of the same directory, "other.schema.json#/$defs/x"), type, enum,
# const, properties, required, additionalProperties, items, minimum,
# maximum, pattern, format "date-time" (UTC with milliseconds, as cbexec
# writes it), oneOf, anyOf, allOf; $schema, $id, $defs, title,
# description and $comment are annotations.  Any other keyword is refused,
# so a schema never says more than is checked.
use strict;
use warnings;
use JSON::PP;
use File::Basename qw(dirname basename);

my $lines = 0;
if (@ARGV && $ARGV[0] eq '--lines') { $lines = 1; shift }
my $schema_path = shift or die "usage: $0 [--lines] SCHEMA FILE...\n";
my $dir = dirname($schema_path);
my %docs;
my $json = JSON::PP->new->utf8;

sub load_doc {
	my ($name) = @_;
	return $docs{$name} if $docs{$name};
	open my $f, '<', "$dir/$name" or die "$dir/$name: $!\n";
	local $/;
	my $d = eval { $json->decode(<$f>) };
	if (!$d) { print STDERR "$dir/$name: not JSON: $@"; exit 2 }
	return $docs{$name} = $d;
}

# (schema, file) the reference names, from within file.
sub resolve {
	my ($ref, $file) = @_;
	my ($f, $frag) = $ref =~ /^([^#]*)(?:#(.*))?$/;
	$f = $file if $f eq '';
	my $s = load_doc($f);
	for my $p (grep { $_ ne '' } split m{/}, $frag // '') {
		$p =~ s/~1/\//g; $p =~ s/~0/~/g;
		die "$f: no $ref\n" unless ref $s eq 'HASH' && exists $s->{$p};
		$s = $s->{$p};
	}
	return ($s, $f);
}

my %annotation = map { $_ => 1 } qw($schema $id $defs title description $comment);

sub type_of {
	my ($v) = @_;
	return 'null' unless defined $v;
	return 'boolean' if JSON::PP::is_bool($v);
	return 'object' if ref $v eq 'HASH';
	return 'array' if ref $v eq 'ARRAY';
	# JSON::PP keeps how a scalar was written: a number or a string
	my $b = B::svref_2object(\$v);
	my $flags = $b->FLAGS;
	return ($flags & (B::SVf_IOK() | B::SVf_NOK())) && !($flags & B::SVf_POK())
	    ? ($v =~ /^-?\d+$/ ? 'integer' : 'number') : 'string';
}
use B;

sub is_type {
	my ($v, $t) = @_;
	my $have = type_of($v);
	return 1 if $have eq $t;
	return 1 if $t eq 'number' && $have eq 'integer';
	return 0;
}

sub same {
	my ($a, $b) = @_;
	my $c = JSON::PP->new->canonical->allow_nonref;
	return $c->encode($a) eq $c->encode($b);
}

# Errors of v against schema s (of file), as "path: why" strings.
sub check {
	my ($v, $s, $file, $path) = @_;
	return () if ref $s ne 'HASH';
	my @err;
	for my $k (keys %$s) {
		next if $annotation{$k};
		die "$file: keyword '$k' (at $path) is not one this validator checks\n"
		    unless $k =~ /^(\$ref|type|enum|const|properties|required|additionalProperties|items|minimum|maximum|pattern|format|oneOf|anyOf|allOf)$/;
	}
	if (exists $s->{'$ref'}) {
		my ($t, $f) = resolve($s->{'$ref'}, $file);
		push @err, check($v, $t, $f, $path);
	}
	if (exists $s->{type}) {
		my @t = ref $s->{type} ? @{$s->{type}} : ($s->{type});
		return ("$path: " . type_of($v) . ", not " . join('|', @t))
		    unless grep { is_type($v, $_) } @t;
	}
	if (exists $s->{const} && !same($v, $s->{const})) {
		push @err, "$path: not " . JSON::PP->new->allow_nonref->encode($s->{const});
	}
	if (exists $s->{enum} && !grep { same($v, $_) } @{$s->{enum}}) {
		push @err, "$path: " . JSON::PP->new->allow_nonref->encode($v) .
		    " is none of the enum";
	}
	if (defined $v && !ref $v && !JSON::PP::is_bool($v)) {
		my $t = type_of($v);
		if ($t ne 'string') {
			push @err, "$path: $v < $s->{minimum}"
			    if exists $s->{minimum} && $v < $s->{minimum};
			push @err, "$path: $v > $s->{maximum}"
			    if exists $s->{maximum} && $v > $s->{maximum};
		} else {
			push @err, "$path: '$v' does not match $s->{pattern}"
			    if exists $s->{pattern} && $v !~ /$s->{pattern}/;
			push @err, "$path: '$v' is not an ISO-8601 UTC time with milliseconds"
			    if ($s->{format} // '') eq 'date-time' &&
			    $v !~ /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
		}
	}
	if (ref $v eq 'HASH') {
		my $props = $s->{properties} // {};
		for my $r (@{$s->{required} // []}) {
			push @err, "$path: no member '$r'" unless exists $v->{$r};
		}
		for my $k (sort keys %$v) {
			if (exists $props->{$k}) {
				push @err, check($v->{$k}, $props->{$k}, $file, "$path.$k");
			} elsif (exists $s->{additionalProperties}) {
				my $a = $s->{additionalProperties};
				if (JSON::PP::is_bool($a) || !ref $a) {
					push @err, "$path: member '$k' is not in the schema" unless $a;
				} else {
					push @err, check($v->{$k}, $a, $file, "$path.$k");
				}
			}
		}
	}
	if (ref $v eq 'ARRAY' && exists $s->{items}) {
		for my $i (0 .. $#$v) {
			push @err, check($v->[$i], $s->{items}, $file, "$path\[$i\]");
		}
	}
	for my $sub (@{$s->{allOf} // []}) {
		push @err, check($v, $sub, $file, $path);
	}
	if ($s->{anyOf}) {
		my @e = map { [check($v, $_, $file, $path)] } @{$s->{anyOf}};
		push @err, "$path: matches none of anyOf (" .
		    join('; ', map { $_->[0] // '' } @e) . ")"
		    unless grep { !@$_ } @e;
	}
	if ($s->{oneOf}) {
		my @e = map { [check($v, $_, $file, $path)] } @{$s->{oneOf}};
		my $n = grep { !@$_ } @e;
		if ($n == 0) {
			# The branch that came closest says why.
			my ($best) = sort { @$a <=> @$b } @e;
			push @err, "$path: matches none of oneOf; closest: $best->[0]";
		} elsif ($n > 1) {
			push @err, "$path: matches $n of oneOf";
		}
	}
	return @err;
}

my $root = basename($schema_path);
load_doc($root);
my ($bad, $n) = (0, 0);
for my $file (@ARGV) {
	open my $f, '<', $file or die "$file: $!\n";
	my @texts;
	if ($lines) {
		@texts = grep { /\S/ } <$f>;
	} else {
		local $/;
		@texts = (<$f>);
	}
	my $i = 0;
	for my $t (@texts) {
		$i++;
		$n++;
		my $doc = eval { $json->decode($t) };
		if (!defined $doc && $@) {
			print "$file" . ($lines ? ":$i" : "") . ": not JSON: $@";
			$bad++;
			next;
		}
		my @e = check($doc, $docs{$root}, $root, '$');
		if (@e) {
			print "$file" . ($lines ? ":$i" : "") . ": $e[0]\n";
			$bad++;
		}
	}
}
print STDERR "$n documents, $bad not valid\n" if $ENV{JSONSCHEMA_VERBOSE};
exit($bad ? 1 : 0);
