# SPDX-License-Identifier: ISC
# bash completion for cbexec(1)
#
# Installed as $(PREFIX)/share/bash-completion/completions/cbexec, or
# sourced from ~/.bashrc:  . /path/to/contrib/cbexec.bash
#
# Completes cbexec's own options, phase names after --phase (the built-in
# ones and those of the config file, in any case) and --unskip, signal
# names with or without SIG after --signal, progress sources after
# --progress (each once), agents after --agent, account names (the
# *.account files of the state directory) after --account and
# --reset-account, circuit names (the *.json
# files of the state directory) after --name and as the CIRCUIT of
# --status, --reset-circuit, --history, --trip, --skip, --unskip and
# --record, a file after --allow-config, files and directories where an
# option wants them, and after `--` or the first non-option word the
# command and its arguments as usual.  Options may be abbreviated as
# getopt_long allows (--pha for --phase); after --help, its categories.
# Safe under `set -u`.

_cbexec_long_opts='--state --name --chdir --follow-symlinks --status
	--reset-circuit --history --trip --json --last --reason --help
	--version --phase --timeout --kill-after --signal --budget --iterations
	--loop --until-success --delay --task --backoff --config --no-prompt
	--quiet --verbose --log --metrics --wait-lock --on-state-change
	--on-run --ok-exit-codes --ignore-exit-codes --no-progress-threshold
	--same-error-threshold --half-open-after --max-consecutive-errors
	--max-retries --cooldown --half-open-trials --history-size --progress
	--progress-cmd --watch --exclude --capture-bytes --no-capture-stdout
	--keep-orphans --exit-codes --skip --unskip --record --exit --message
	--stderr-file --stdout-file --create --all --allow-config --agent
	--idle-timeout --max-cost --max-tokens --max-turns --max-repeat-calls
	--account --reset-account --store --store-lease --store-timeout
	--store-fallback --store-password-file --result-grace --store-ca
	--store-cert --store-key --store-replicas'

# Options that take a value in the next word (or after '=').
_cbexec_arg_opts='--state --name --chdir --last --reason --phase --timeout
	--kill-after --signal --budget --iterations --delay --task --backoff
	--config --log --metrics --on-state-change --on-run --ok-exit-codes
	--ignore-exit-codes --no-progress-threshold --same-error-threshold
	--half-open-after --max-consecutive-errors --max-retries --cooldown
	--half-open-trials --history-size --progress --progress-cmd --watch
	--exclude --capture-bytes --exit-codes --unskip --exit --message
	--stderr-file --stdout-file --agent --idle-timeout --max-cost
	--max-tokens --max-turns --max-repeat-calls --account --reset-account
	--store --store-lease --store-timeout --store-fallback
	--store-password-file --result-grace --store-ca --store-cert --store-key
	--store-replicas'
# Short options that take a value.
_cbexec_arg_shorts='sNCptkTnc'

_cbexec_phases='RED GREEN REFACTOR DOCUMENT'
_cbexec_signals='TERM INT HUP QUIT KILL USR1 USR2 ALRM ABRT PIPE CONT STOP
	TSTP TTIN TTOU WINCH XCPU XFSZ VTALRM PROF IO PWR SYS SEGV BUS FPE ILL
	TRAP URG CHLD 0'
_cbexec_sources='git files status cmd exit auto yes no'
_cbexec_agents='claude codex pi gemini copilot qwen opencode kilo cn none'
# What --help takes: all, or a category of options.
_cbexec_help_topics='all circuit running agents store thresholds operator
	record'

# The names of the state directory's files ending in $1: NAME.json are the
# circuits, NAME.account the accounts.  A relative XDG_STATE_HOME is
# ignored, as cbexec ignores it.
_cbexec_state_names()
{
	local xdg=${XDG_STATE_HOME:-}
	[[ $xdg == /* ]] || xdg=$HOME/.local/state
	local dir=${CBEXEC_STATE_DIR:-$xdg/cbexec}
	local f
	for f in "$dir"/*"$1"; do
		[[ -f $f ]] || continue
		f=${f##*/}
		printf '%s\n' "${f%"$1"}"
	done
}

_cbexec_circuits() { _cbexec_state_names .json; }
_cbexec_accounts() { _cbexec_state_names .account; }

# The long option $1 names, spelled out: itself, or the one option it is
# a unique prefix of, as getopt_long takes it (--pha: --phase).
_cbexec_expand()
{
	local o hit=
	for o in $_cbexec_long_opts; do
		[[ $o == "$1" ]] && { printf '%s\n' "$o"; return; }
		if [[ $o == "$1"* ]]; then
			[[ -n $hit ]] && { printf '%s\n' "$1"; return; }
			hit=$o
		fi
	done
	printf '%s\n' "${hit:-$1}"
}

# Does the long option $1 take a value?  Unique prefixes count, as with
# getopt_long.
_cbexec_takes_arg()
{
	local o full
	full=$(_cbexec_expand "$1")
	for o in $_cbexec_arg_opts; do
		[[ $o == "$full" ]] && return 0
	done
	return 1
}

# The phases the config file defines: that of -c/--config among the
# words, else the user's config and the work tree's .cbexec/config.json.
# Read with perl's JSON::PP when perl is there, else none.
_cbexec_config_phases()
{
	local i w cfg='' dir=. xdg=${XDG_CONFIG_HOME:-}
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--) break ;;
		-c) cfg=${COMP_WORDS[i + 1]:-} ;;
		-C) dir=${COMP_WORDS[i + 1]:-} ;;
		--*=*)
			[[ $(_cbexec_expand "${w%%=*}") == --config ]] &&
				cfg=${w#*=}
			;;
		--*)
			case $(_cbexec_expand "$w") in
			--config) cfg=${COMP_WORDS[i + 1]:-} ;;
			--chdir) dir=${COMP_WORDS[i + 1]:-} ;;
			esac
			;;
		esac
	done
	# A relative --config is relative to -C DIR, as cbexec reads it.
	[[ -n $cfg && $cfg != /* ]] && cfg=$dir/$cfg
	[[ $xdg == /* ]] || xdg=$HOME/.config
	local files=("$xdg/cbexec/config.json" "$dir/.cbexec/config.json")
	[[ -n $cfg ]] && files=("$cfg")
	command -v perl >/dev/null 2>&1 || return 0
	perl -MJSON::PP -e '
		for my $f (@ARGV) {
			open(my $h, "<", $f) or next;
			local $/;
			my $j = eval { decode_json(<$h>) } or next;
			print "$_\n" for keys %{ ref $j->{phases} eq "HASH" ?
			    $j->{phases} : {} };
		}' "${files[@]}" 2>/dev/null
}

_cbexec_files()	# _cbexec_files -f|-d CUR
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen "$1" -- "$2")
}

_cbexec_commands()	# _cbexec_commands CUR: command names, once each
{
	mapfile -t COMPREPLY < <(compgen -c -- "$1" | sort -u)
}

# Complete the value CUR of option OPT.  Sets COMPREPLY; returns 1 when OPT
# takes no value.
_cbexec_value()	# _cbexec_value OPT CUR
{
	local opt=$1 cur=$2 pre='' s left
	# --help's category (its value in the next word, or after '=').
	if [[ $opt == -h || ( $opt == --* && $(_cbexec_expand "$opt") == --help ) ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_cbexec_help_topics" -- "$cur")
		return 0
	fi
	# A cluster of short options (-lp): its last letter may want a value.
	if [[ $opt == -[!-]* ]]; then
		opt=${opt: -1}
		[[ $_cbexec_arg_shorts == *"$opt"* ]] || return 1
		opt=-$opt
	elif [[ $opt == --* ]]; then
		opt=$(_cbexec_expand "$opt")
	fi
	case $opt in
	-p|--phase|--unskip)
		# Phases are case-insensitive: the built-in ones and the config
		# file's whose names begin with what was typed, in any case.
		local p
		mapfile -t COMPREPLY < <(
			for p in $_cbexec_phases $(_cbexec_config_phases); do
				[[ ${p^^} == "${cur^^}"* ]] && printf '%s\n' "$p"
			done | sort -u)
		;;
	-s|--signal)
		# TERM or SIGTERM, as the user began to write it.
		if [[ ${cur^^} == SIG* ]]; then
			cur=${cur^^}
			mapfile -t COMPREPLY < <(compgen -P SIG \
				-W "${_cbexec_signals/ 0/}" -- "${cur:3}")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_cbexec_signals" -- "${cur^^}")
		fi
		;;
	--progress)
		# A comma-separated list: complete its last element, offering
		# each source once (--record's yes and no stand alone).
		if [[ $cur == *,* ]]; then
			pre=${cur%,*},
			cur=${cur##*,}
		fi
		left=
		for s in $_cbexec_sources; do
			[[ -n $pre && ($s == yes || $s == no) ]] && continue
			[[ ,$pre == *",$s,"* ]] || left+=" $s"
		done
		mapfile -t COMPREPLY < <(compgen -P "$pre" -W "$left" -- "$cur")
		compopt -o nospace 2>/dev/null
		;;
	-N|--name)
		mapfile -t COMPREPLY < <(compgen -W "$(_cbexec_circuits)" -- "$cur")
		;;
	--agent)
		mapfile -t COMPREPLY < <(compgen -W "$_cbexec_agents" -- "$cur")
		;;
	--account|--reset-account)
		mapfile -t COMPREPLY < <(compgen -W "$(_cbexec_accounts)" -- "$cur")
		;;
	--store-fallback)
		mapfile -t COMPREPLY < <(compgen -W "local none" -- "$cur")
		;;
	--store)
		mapfile -t COMPREPLY < <(compgen -W "redis:// rediss:// unix:// etcd:// etcds://" -- "$cur")
		compopt -o nospace 2>/dev/null
		;;
	--state|-c|--config|--log|--metrics|--stderr-file|--stdout-file|\
	--store-password-file|--store-ca|--store-cert|--store-key)
		_cbexec_files -f "$cur"
		;;
	-C|--chdir|--watch)
		_cbexec_files -d "$cur"
		;;
	-?|--*)
		_cbexec_takes_arg "$opt" || [[ $opt != --* ]] || return 1
		COMPREPLY=()	# a duration, a number, free text
		;;
	*)
		return 1
		;;
	esac
	return 0
}

_cbexec()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cword=$COMP_CWORD
	local i w rest op=0 cmd=0 skip=0

	# Walk the words before the cursor: find where COMMAND starts and
	# whether this is an operator command (--status, ...).
	for ((i = 1; i < cword; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then
			skip=0
			# "--opt = value": readline splits at '='.
			[[ $w == = ]] && skip=1
			continue
		fi
		case $w in
		--)
			cmd=$((i + 1))
			break
			;;
		=)
			skip=1
			;;
		--*)
			case $(_cbexec_expand "${w%%=*}") in
			--status|--reset-circuit|--history|--trip|--skip|--unskip|--record)
				op=1 ;;
			--allow-config)
				op=2 ;;
			esac
			[[ $w == *=* ]] || ! _cbexec_takes_arg "$w" || skip=1
			;;
		-?*)
			# A cluster of short options; one that takes a value
			# ends it, the value attached or in the next word.
			rest=${w#-}
			while [[ -n $rest ]]; do
				if [[ $_cbexec_arg_shorts == *"${rest:0:1}"* ]]; then
					[[ ${#rest} -eq 1 ]] && skip=1
					break
				fi
				rest=${rest:1}
			done
			;;
		*)
			# The first non-option word: COMMAND, or the CIRCUIT
			# of an operator command.
			if ((!op)); then
				cmd=$i
				break
			fi
			;;
		esac
	done

	COMPREPLY=()
	if ((cmd > 0 && cmd <= cword)); then
		if declare -F _command_offset >/dev/null; then
			_command_offset "$cmd"
		elif ((cword == cmd)); then
			_cbexec_commands "$cur"
		else
			_cbexec_files -f "$cur"
		fi
		return 0
	fi

	# The value of an option: "--opt value", "--opt=value" split by
	# readline into "--opt" "=" "value", or one word "--opt=value".
	local prev=${COMP_WORDS[cword - 1]}
	if [[ $cur == = ]]; then
		_cbexec_value "$prev" "" && return 0
	elif [[ $prev == = ]] && ((cword >= 2)); then
		_cbexec_value "${COMP_WORDS[cword - 2]}" "$cur" && return 0
	elif [[ $cur == --*=* ]]; then
		local opt=${cur%%=*}
		if _cbexec_value "$opt" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
			return 0
		fi
	elif ((cword > 1)) && [[ $prev == -?* && $prev != --*=* ]]; then
		_cbexec_value "$prev" "$cur" && return 0
	fi

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_cbexec_long_opts" -- "$cur")
		return 0
	fi
	if ((op)); then
		# CIRCUIT: a name, or a path with '/' or ending in .json;
		# --allow-config takes a FILE.
		if ((op == 2)) || [[ $cur == */* || $cur == .* ]]; then
			_cbexec_files -f "$cur"
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_cbexec_circuits)" -- "$cur")
		fi
		return 0
	fi
	# Nothing typed yet: COMMAND.
	_cbexec_commands "$cur"
	return 0
}

complete -F _cbexec cbexec
