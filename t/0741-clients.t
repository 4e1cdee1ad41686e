#!/bin/sh
# SPDX-License-Identifier: ISC
# The clients cbexec knows are one table, the adapters' (src/agent/
# agents.c), and cbexec names them itself when --agent names none of them.
# Every other list of them says the same: what bash and zsh complete after
# --agent, the man page's and README's, and the lists the corpus and the
# real-client checks run through (Makefile, t/corpus/score.pl,
# t/agents/install.sh and record.sh), which add the clients a config
# describes (t/agents/docs/CLIENT.md with a description in it).
. "$(dirname "$0")/lib.sh"
C=$TOP/contrib

# words: the words of stdin (split at blanks and commas), one a line,
# sorted.
words() { tr -s ' \t,' '\n\n\n' | sed '/^$/d' | sort; }

msg=$("$CBEXEC" --agent '?' -- true 2>&1)
known=$(printf '%s\n' "$msg" |
	sed -n "s/^cbexec: unknown agent '?' for --agent (\\(.*\\) or none)\$/\\1/p" | words)
ok "$([ "$(printf '%s\n' "$known" | wc -l)" -ge 9 ]; echo $?)" \
	"cbexec names its clients when --agent names none of them"
with_none=$(printf '%s\nnone\n' "$known" | sort)
# The clients a config describes, for the real-client checks: each
# t/agents/docs/CLIENT.md whose first ```json block is a config with
# "agents" (as t/corpus/score.pl reads them).
described=$(for f in "$TOP"/t/agents/docs/*.md; do
	awk '/^```json$/ { on = 1; next } on && /^```$/ { exit }
	    on && /"agents"/ { found = 1 } END { exit !found }' "$f" &&
	    basename "$f" .md
done | sort)
ok "$([ -n "$described" ]; echo $?)" "t/agents/docs describes clients"
everyone=$(printf '%s\n%s\n' "$known" "$described" | sort)

# What a user meets.
is "$(bash_comp "$C/cbexec.bash" --agent '')" "$with_none" \
	"bash: --agent completes the adapters' clients and none"
is "$(sed -n 's/.*:agent:(\([^)]*\)).*/\1/p' "$C/_cbexec" | words)" "$with_none" \
	"zsh: _cbexec's --agent list is the adapters' clients and none"
if command -v zsh >/dev/null 2>&1 && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
	is "$(timeout 30 zsh "$T_DIR/zsh-complete" "$C" cbexec --agent '' 2>&1)" \
		"$with_none" "zsh: --agent completes the adapters' clients and none"
else
	skip "no zsh with zsh/zpty"
fi
man=$(sed -n '/^\.It Fl \\-agent Ns = Ns Ar name$/,/^for none\.$/p' "$TOP/man/cbexec.1" |
	sed -n 's/^\.Cm \([a-z]*\).*/\1/p' | words)
is "$man" "$with_none" "man page: --agent lists the adapters' clients and none"
# its first paragraph: "... Claude Code (`claude`), Codex (`codex`), ..."
readme=$(awk '/^## AI coding agents$/ { on = 1; next }
	on && /^$/ { if (text != "") exit; next } on { text = text " " $0 }
	END { print text }' "$TOP/README.md" |
	grep -o '(`[a-z]*`)' | tr -d '()`' | words)
is "$readme" "$known" "README: \"AI coding agents\" names the adapters' clients"

# What the corpus and the real-client checks run through.
make_list=$(sed -n '/^CORPUS_CLIENTS ?=/,/[^\\]$/p' "$TOP/Makefile" |
	sed 's/^CORPUS_CLIENTS ?=//; s/\\$//' | words)
is "$make_list" "$everyone" "Makefile: CORPUS_CLIENTS is every client, described ones too"
score=$(sed -n '/^my %agents = /,/);$/p' "$TOP/t/corpus/score.pl" |
	sed 's/.*qw(//; s/);$//' | words)
is "$score" "$with_none" "t/corpus/score.pl: its clients are the adapters' and none"
pins=$(sed -n "/^PINS='/,/'\$/p" "$TOP/t/agents/install.sh" | sed "s/^PINS='//" |
	awk '{ print $1 }' | words)
is "$pins" "$everyone" "t/agents/install.sh: a pinned version of every client"
want=$(sed -n 's/^want=\${\*:-\(.*\)}$/\1/p' "$TOP/t/agents/install.sh" | words)
is "$want" "$known" "t/agents/install.sh: installs the adapters' clients by default"
rec=$(sed -n "s/.*unknown client '\$CLIENT' (\\(.*\\))\" >&2\$/\\1/p" "$TOP/t/agents/record.sh")
is "$(printf '%s\n' "${rec%%;*}" | words)" "$known" \
	"t/agents/record.sh: names the adapters' clients"
is "$(printf '%s\n' "${rec#*;}" | words)" "$described" \
	"t/agents/record.sh: and the described ones"
for c in $everyone; do
	ok "$(grep -Eq "^([a-z]+\|)*$c(\|[a-z]+)*\)" "$TOP/t/agents/record.sh"
		echo $?)" \
		"t/agents/record.sh: knows how to record $c"
done
done_testing
