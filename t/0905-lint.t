#!/bin/sh
# SPDX-License-Identifier: ISC
# The linters an operator or a packager runs find nothing: groff -man -ww
# and mandoc -Tlint on the man page, shellcheck on every shell file of
# contrib/.  Every example that writes --metrics names the directory
# Debian's prometheus-node-exporter reads, /var/lib/prometheus/node-exporter
# (upstream's textfile_collector only as the alternative beside it); when
# the package is installed, its unit and /etc/default file are read to
# check that this is the directory it reads, and the exporter itself is
# run on 127.0.0.1 against a textfile cbexec wrote.  A missing tool skips
# what needs it, saying so.
. "$(dirname "$0")/lib.sh"
MAN=$TOP/man/cbexec.1
CT=$TOP/contrib
DEB=/var/lib/prometheus/node-exporter
UPSTREAM=/var/lib/node_exporter/textfile_collector

# --- the man page ----------------------------------------------------------
if command -v groff >/dev/null 2>&1; then
	out=$(groff -man -ww -z "$MAN" 2>&1)
	is "$?:$out" "0:" "groff -man -ww -z man/cbexec.1: no warning (man -t loses no glyph)"
else
	skip "groff not installed (Debian package groff)"
fi
if command -v mandoc >/dev/null 2>&1; then
	# (an outdated system mandoc.db is the machine's, not the page's)
	out=$(mandoc -Tlint -W warning "$MAN" 2>&1 | grep -v 'outdated mandoc\.db')
	is "$out" "" "mandoc -Tlint -W warning man/cbexec.1: nothing"
	# plain -Tlint reports style too (as a packager's lintian does):
	# nothing either, whatever manuals the machine has installed
	out=$(mandoc -Tlint "$MAN" 2>&1 | grep -v 'outdated mandoc\.db')
	is "$out" "" "mandoc -Tlint man/cbexec.1: not even a style note"
else
	skip "mandoc not installed (Debian package mandoc)"
fi

# --- the shell files of contrib/ -------------------------------------------
# A shell file: a #! line naming sh or bash, a shellcheck shell directive,
# or a .sh or .bash name.  zsh's _cbexec is checked by zsh -n (0900).
files=
for f in "$CT"/*; do
	[ -f "$f" ] || continue
	case $f in *.sh|*.bash) files="$files $f"; continue ;; esac
	head -1 "$f" | grep -Eq '^#!.*/(env +)?(ba)?sh( |$)' && files="$files $f"
done
ok "$([ "$(echo $files | wc -w)" -ge 4 ]; echo $?)" "contrib's shell files found:$(for f in $files; do printf ' %s' "${f##*/}"; done)"
if command -v shellcheck >/dev/null 2>&1; then
	for f in $files; do
		out=$(shellcheck "$f" 2>&1)
		is "$?:$out" "0:" "shellcheck contrib/${f##*/}"
	done
else
	skip "shellcheck not installed (Debian package shellcheck)"
fi

# --- the textfile directory -------------------------------------------------
# Every --metrics path of an example (README, man page, contrib/) and every
# ReadWritePaths= of a unit that writes one: Debian's directory, or
# upstream's in a file that names Debian's too.
bad=$(perl -e '
	my ($deb, $up, @files) = @ARGV;
	for my $f (@files) {
		open my $h, "<", $f or next;
		my $text = do { local $/; <$h> };
		my $has_deb = index($text, $deb) >= 0;
		while ($text =~ m{--metrics[ =]+(/\S+)}g) {
			my $p = $1;
			next if index($p, "$deb/") == 0;
			next if index($p, "$up/") == 0 && $has_deb;
			print "$f: --metrics $p\n";
		}
		while ($text =~ m{^ReadWritePaths=(.*)$}mg) {
			for my $p (split " ", $1) {
				print "$f: ReadWritePaths $p\n"
				    if $p =~ m{node.exporter} && $p ne $deb;
			}
		}
	}
' "$DEB" "$UPSTREAM" "$TOP/README.md" "$MAN" "$CT"/*)
is "$bad" "" "every --metrics example writes to $DEB (upstream's only beside it)"
n=$(grep -l "$DEB" "$TOP/README.md" "$MAN" "$CT"/crontab.example "$CT"/*.service "$CT"/prometheus-alerts.yml | wc -l)
is "$n" 6 "README, the man page, the crontab, both units and the alert rules name it"

unit=/lib/systemd/system/prometheus-node-exporter.service
[ -f "$unit" ] || unit=/usr/lib/systemd/system/prometheus-node-exporter.service
if [ -f "$unit" ] && command -v prometheus-node-exporter >/dev/null 2>&1; then
	envf=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
	exe=$(sed -n 's/^ExecStart=//p' "$unit")
	like "$exe" 'prometheus-node-exporter \$ARGS$' "Debian's unit runs the exporter with \$ARGS of $envf"
	args=$(sed -n 's/^ARGS=//p' "$envf" 2>/dev/null)
	dir=$(printf '%s\n' "$args" | sed -n 's/.*--collector\.textfile\.directory[= ]"\{0,1\}\([^" ]*\).*/\1/p')
	if [ -z "$dir" ]; then
		dir=$(prometheus-node-exporter --help 2>&1 |
		    sed -n 's/.*--collector\.textfile\.directory="\([^"]*\)".*/\1/p' | head -1)
	fi
	is "$dir" "$DEB" "the directory Debian's prometheus-node-exporter reads (its default, $envf's ARGS not changing it)"

	# The exporter itself, on 127.0.0.1, reading a textfile cbexec wrote.
	mkdir tf
	"$CBEXEC" -q --no-prompt --progress exit --name lint --metrics tf/cbexec-lint.prom \
	    --no-progress-threshold 1 -- false 2>/dev/null
	port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
	    --collector.disable-defaults --collector.textfile \
	    --collector.textfile.directory="$SCRATCH/tf" >ne.log 2>&1 &
	ne=$!
	scrape() { curl -fsS -m 2 "http://127.0.0.1:$port/metrics" > scrape.txt 2>/dev/null; }
	if command -v curl >/dev/null 2>&1 && poll_until 20 scrape; then
		ok "$(grep -qx 'cbexec_state{circuit="lint"} 2' scrape.txt; echo $?)" \
		    "node_exporter serves the circuit's state from the textfile (2: OPEN)"
		ok "$(grep -qx 'node_textfile_scrape_error 0' scrape.txt; echo $?)" \
		    "... and reads the file without an error"
	else
		skip "prometheus-node-exporter did not answer on 127.0.0.1:$port (or no curl)"
		skip "prometheus-node-exporter did not answer"
	fi
	kill "$ne" 2>/dev/null
	wait "$ne" 2>/dev/null
else
	skip "prometheus-node-exporter not installed (Debian package prometheus-node-exporter): its directory and the exporter are not checked"
fi
done_testing
