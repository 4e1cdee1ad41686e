#!/usr/bin/perl
# SPDX-License-Identifier: ISC
# Label the recordings of t/corpus/recorded/: write STEM.expect for every
# CLIENT-VERSION/SCENARIO-FORMAT recording that has none, from what the
# mock answered in SCENARIO (the table below).  An existing .expect is
# never touched, so a label corrected by hand stays.
#
#   perl t/corpus/label.pl [DIRECTORY...]      (default: t/corpus/recorded)
#
# The label is the verdict a careful operator wants (SPEC §10), not what
# cbexec says today.  A scenario whose run a format cannot show (a loop of
# tool calls in plain text, where no call is printed) is left unlabelled:
# it is not a case.  A recording cut short by timeout(1) while the client
# was still retrying (exit 124) is replayed under --timeout with a silent
# tail, as cbexec would meet it.
use strict;
use warnings;
use File::Basename qw(dirname basename);

# scenario => [side, class, type] (type '' for none)
my %table = (
	success => [qw(clean success)], complete => [qw(clean success)],
	success_auto => [qw(clean success)], slow => [qw(clean success)],
	usage_warning => [qw(clean success)], tools => [qw(clean success)],
	tools_noyolo => [qw(clean success)],
	model_warning => [qw(clean success)],
	# Gemini says 400 INVALID_ARGUMENT "API key not valid" for a bad key
	"400" => [qw(catch fatal auth)],
	"401" => [qw(catch fatal auth)], "401_defaults" => [qw(catch fatal auth)], "403" => [qw(catch fatal auth)],
	missing_key => [qw(catch fatal auth)],
	oauth_discontinued => [qw(catch fatal auth)],
	credit => [qw(catch fatal billing)],
	credit_stream => [qw(catch fatal billing)],
	credit_g1 => [qw(catch fatal billing)],
	usage_limit => [qw(catch transient usage_limit)],
	usage_limit_days => [qw(catch transient usage_limit)],
	quota_daily => [qw(catch transient usage_limit)],
	# an API key's rate limit (HTTP 429), not a subscription's usage limit
	usage_limit_apikey => [qw(catch transient rate_limited)],
	"429" => [qw(catch transient rate_limited)],
	"429_retries2" => [qw(catch transient rate_limited)],
	"429_bare" => [qw(catch transient rate_limited)],
	"429_stream" => [qw(catch transient rate_limited)],
	"429_auto" => [qw(catch transient rate_limited)],
	"429_defaults" => [qw(catch transient rate_limited)],
	"429_stream_defaults" => [qw(catch transient rate_limited)],
	"429_default_retries" => [qw(catch transient rate_limited)],
	"529" => [qw(catch transient overloaded)],
	"529_retries2" => [qw(catch transient overloaded)],
	"503" => [qw(catch transient overloaded)],
	"503_overloaded" => [qw(catch transient overloaded)],
	"503_defaults" => [qw(catch transient overloaded)],
	"503_default_retries" => [qw(catch transient overloaded)],
	"500" => [qw(catch transient server_error)],
	"500_defaults" => [qw(catch transient server_error)],
	refused => [qw(catch transient network)],
	refused_bounded => [qw(catch transient network)],
	refused_defaults => [qw(catch transient network)],
	refused_default_retries => [qw(catch transient network)],
	drop => [qw(catch transient network)],
	drop_defaults => [qw(catch transient network)],
	# the stream cut mid-body: undici's "terminated", Bun's "socket
	# connection was closed", hyper's "error reading a body"
	cut => [qw(catch transient network)],
	# Gemini's Code Assist quota with its reset ("reset after 2h52m39s")
	capacity => [qw(catch transient usage_limit)],
	key_expired => [qw(catch fatal auth)],
	# a tool the client asks permission for, in a run nobody can answer
	tools_ask_noallow => [qw(catch recoverable blocked)],
	# the client's own turn cap (claude --max-turns 1)
	tools_turns1 => [qw(catch recoverable turn_limit)],
	hang => [qw(catch transient network)],
	# the stream cut by the time limit half-way through an answer
	slow_partial => [qw(catch timeout timeout)],
	# the same call with the same result six times in a row
	tools_loop => [qw(catch recoverable loop)],
	# the client's own loop stop
	tool_loop => [qw(catch recoverable loop)],
	tools_loop_detect => [qw(catch recoverable loop)],
	# three identical calls in one message: under --max-repeat-calls 5;
	# opencode's own doom-loop guard asks for a permission nobody gives
	tools_loop_burst => [qw(clean success)],
	# productive paging: the same file, eight different pages
	tools_page => [qw(clean success)],
	# three good turns, then the subscription's usage limit (Gemini:
	# the daily quota)
	tools_limit_mid => [qw(catch transient usage_limit)],
);

# What a client shows of a scenario, where it is less than the mock said:
# CLIENT:SCENARIO[-FORMAT] => [side, class, type].
my %override = (
	# Codex words every 5xx as "high demand": a transient error, its
	# status not shown
	'codex:500' => [qw(catch transient)],
	'codex:500_defaults' => [qw(catch transient)],
	# opencode's plain output words a usage limit as an account's rate
	# limit; its JSON has the error's body
	'opencode:usage_limit-plain' => [qw(catch transient rate_limited)],
	'opencode:tools_limit_mid-plain' => [qw(catch transient rate_limited)],
	# pi, cn and kilo's plain output show the 429's body alone, not the
	# headers that make it a subscription's usage limit: a rate limit is
	# all they say (as in their usage_limit recordings)
	'pi:tools_limit_mid' => [qw(catch transient rate_limited)],
	'cn:tools_limit_mid' => [qw(catch transient rate_limited)],
	'kilo:tools_limit_mid-plain' => [qw(catch transient rate_limited)],
	# Qwen Code retries a 429 silently: cut short by the time limit, the
	# run shows a timeout and nothing else
	'qwen:429_defaults' => [qw(catch timeout timeout)],
	# Grok CLI asks for whole answers (no stream): there is nothing to
	# cut, its answer is whole
	'grok:cut' => [qw(clean success)],
	# Cline shows a usage limit as the account's rate limit (no headers)
	'cline:usage_limit' => [qw(catch transient rate_limited)],
);

# Loops are seen only where the format shows tool calls (or the client
# says it stopped one): SCENARIO => formats that show it.
my %visible = (
	# Claude Code's json is one result object: no call is shown
	tools_loop => qr/^(stream-json|json)$/,
	'claude:tools_loop' => qr/^stream-json$/,
	# Cline's text mode shows no call, nor its own loop stop
	'cline:tools_loop' => qr/^json$/,
	tool_loop => qr/^(stream-json|json)$/,
	tools_loop_detect => qr/^text$/,
);

my @dirs = @ARGV ? @ARGV : glob(dirname(__FILE__) . '/recorded/*-*');
my $wrote = 0;
for my $dir (@dirs) {
	my ($client) = basename($dir) =~ /^([a-z]+)-[0-9]/ or next;
	for my $exit (glob("$dir/*.exit")) {
		my $stem = $exit =~ s/\.exit$//r;
		next if -e "$stem.expect";
		my ($scn, $fmt) = basename($stem) =~
		    /^(.*?)-(text|plain|json|stream-json)$/ or next;
		my $row = $table{$scn} or do {
			print STDERR "label: $stem: no label for scenario " .
			    "'$scn'\n";
			next;
		};
		my $vis = $visible{"$client:$scn"} // $visible{$scn};
		next if $vis && $fmt !~ $vis;
		my ($side, $class, $type) = @$row;
		# opencode's doom-loop guard stops the burst's third call:
		# the client's own loop stop
		($side, $class, $type) = qw(catch recoverable loop)
		    if $scn eq 'tools_loop_burst' && $client eq 'opencode';
		# What the client shows is all there is to read.
		if (my $o = $override{"$client:$scn-$fmt"} //
		    $override{"$client:$scn"}) {
			($side, $class, $type) = @$o;
		}
		open(my $fh, '<', $exit) or die "$exit: $!";
		my $code = <$fh> // 0;
		chomp $code;
		close($fh);
		my @l = ("side: $side", "class: $class");
		push @l, "type: $type" if defined $type && $type ne '';
		if ($code == 124 && $class ne 'timeout') {
			# cut by timeout(1) while it retried: cbexec's --timeout
			push @l, 'options: --timeout 0.3s --kill-after 0.2s',
			    'hang: 5';
		} elsif ($class eq 'timeout') {
			push @l, 'options: --timeout 0.3s --kill-after 0.2s',
			    'hang: 5';
		}
		push @l, "source: $client, mock scenario $scn, format $fmt";
		open($fh, '>', "$stem.expect") or die "$stem.expect: $!";
		print $fh map { "$_\n" } @l;
		close($fh);
		$wrote++;
	}
}
print "label: wrote $wrote labels\n";
