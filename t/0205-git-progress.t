#!/bin/sh
# SPDX-License-Identifier: ISC
# What the git progress source counts (SPEC §3.1): HEAD moved, or the
# tracked changes or the untracked non-ignored files differ after the run
# from before it.  Each case is one run of cbexec and the state's
# no_progress_count after it (0: the run made progress).
. "$(dirname "$0")/lib.sh"
if ! command -v git >/dev/null 2>&1; then
	echo "1..0 # SKIP git not installed"
	exit 0
fi
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	GIT_CEILING_DIRECTORIES="$SCRATCH" GIT_CONFIG_GLOBAL=/dev/null \
	GIT_CONFIG_NOSYSTEM=1
S=$SCRATCH/p.json
DIR=repo
ERR=$SCRATCH/err
# judged CMD...: one run in $DIR, then "progress" or "none"; its stderr
# (warnings included) in $ERR.
judged() {
	"$CBEXEC" --no-prompt -C "$DIR" --state "$S" --progress git \
	    --no-progress-threshold 100000 --same-error-threshold 100000 \
	    --max-consecutive-errors 100000 -- "$@" 2>"$ERR" >/dev/null
	if [ "$(jget "$S" no_progress_count)" = 0 ]; then echo progress
	else echo none; fi
}
# case WANT DESC CMD...
case_() {
	_want=$1 _desc=$2
	shift 2
	is "$(judged "$@")" "$_want" "$_desc"
}

mkdir repo && cd repo || exit 1
git init -q . && echo 'ignored*' > .gitignore && echo 'build/' >> .gitignore
echo base > a && echo other > b && printf 'b\000i\001n' > bin
mkdir sub && echo s > sub/s && ln -s a link
git add . && git commit -qm init && cd "$SCRATCH" || exit 1
# A file older than the two seconds in which a snapshot reads it again
# whatever its stat data say: used near the end, when they have passed.
printf 'aaaa\n' > repo/old && touch -r repo/a repo/old && cp -p repo/old stamp
T_OLD=$(date +%s)

case_ none "nothing changed: no progress" true
is "$(grep -c warning "$ERR")" 0 "... and no warning"
case_ progress "a tracked file edited" sh -c 'echo more >> a'
case_ progress "the already-modified file edited again (its status letter stays M)" \
    sh -c 'echo again >> a'
printf 'x1\n' > repo/a
case_ progress "the same size, the same second, other bytes" sh -c 'printf "x2\n" > a'
case_ none "rewritten with the bytes it had" sh -c 'printf "x2\n" > a'
case_ none "touched without a change" touch a
echo 'between runs' >> repo/a
case_ none "an edit made between runs (by a person) is not the run's" true
case_ none "staging a modified file only (git add): its content is the same" \
    git add a
case_ progress "a modified file reverted to HEAD" git checkout -q HEAD -- a
case_ progress "a mode change" chmod +x a
case_ progress "... and back" chmod -x a
case_ progress "a tracked file deleted" rm b
case_ progress "... and restored" git checkout -q -- b
case_ progress "a commit (HEAD moved, the tree as it was)" \
    git commit -q --allow-empty -m empty
echo pending >> repo/a
case_ none "(an edit between runs)" true
case_ progress "a commit of the pending changes" git commit -qam pending
case_ progress "a new untracked file" sh -c 'echo new > new'
case_ progress "... its content changed" sh -c 'echo more >> new'
case_ progress "... removed" rm new
case_ progress "an untracked file in a new directory" \
    sh -c 'mkdir -p d/e && echo x > d/e/f'
case_ none "a file made and removed in the run" sh -c 'echo t > tmp; rm tmp'
case_ none "an ignored file" sh -c 'echo i > ignored-one'
case_ none "a file in an ignored directory" \
    sh -c 'mkdir -p build && echo o > build/out.o'
case_ progress "a rename (git mv)" git mv b c
case_ progress "a rename (mv of a tracked file)" mv c b
git -C repo reset -q
case_ progress "a binary file changed" sh -c 'printf "b\000i\002n" > bin'
case_ none "... rewritten with the same bytes" sh -c 'printf "b\000i\002n" > bin'
case_ progress "a new untracked binary file" sh -c 'printf "\000\377" > new.bin'
case_ progress "a tracked symlink pointed elsewhere" ln -sfn b link
case_ progress "a file of a subdirectory edited" sh -c 'echo t >> sub/s'

# Run from a subdirectory: the whole work tree is looked at.
DIR=repo/sub
case_ none "from a subdirectory: nothing changed" true
case_ progress "from a subdirectory: an untracked file at the top" \
    sh -c 'echo top > ../top'
case_ progress "from a subdirectory: a tracked file at the top" \
    sh -c 'echo more >> ../a'
DIR=repo

# A large file: its content is as good as a small one's.
head -c 5000000 /dev/zero > repo/big && git -C repo add big &&
    git -C repo commit -qm big
case_ none "(a large tracked file, unchanged)" true
case_ progress "a large tracked file: one byte changed in its middle" \
    sh -c 'printf x | dd of=big bs=1 seek=2500000 conv=notrunc 2>/dev/null'
case_ progress "a large untracked file" sh -c 'head -c 5000000 /dev/zero > big2'
case_ progress "past 4 MiB a file counts by its size and mtime: touched is progress" \
    touch big

# A FIFO: never read, never a hang.
t0=$(date +%s)
case_ none "a new FIFO (not a file git lists)" mkfifo pipe
ok "$([ $(( $(date +%s) - t0 )) -lt 20 ]; echo $?)" "... at once"
t0=$(date +%s)
case_ progress "a tracked file replaced by a FIFO" sh -c 'rm -f b && mkfifo b'
ok "$([ $(( $(date +%s) - t0 )) -lt 20 ]; echo $?)" "... at once"
is "$(grep -c warning "$ERR")" 0 "... and the fingerprint taken (no warning)"
case_ none "... and left as it is" true
rm -f repo/b repo/pipe && git -C repo checkout -q -- b

# Content, not times: an untracked file is as good as a tracked one.
case_ progress "an untracked file" sh -c 'echo one > u1'
case_ none "... rewritten with the bytes it had" sh -c 'echo one > u1'
case_ progress "a name with a space and a newline" sh -c 'echo x > "s p
n"'
case_ progress "... its content changed" sh -c 'echo y > "s p
n"'

# A repository without commits.
mkdir fresh && git -C fresh init -q . && DIR=fresh
case_ none "no commits yet: nothing changed" true
case_ progress "no commits yet: an untracked file" sh -c 'echo x > x'
case_ progress "no commits yet: the file staged" git add x
case_ progress "no commits yet: the staged file edited" sh -c 'echo y >> x'
case_ progress "the first commit" git commit -qam first
DIR=repo

# A submodule whose checked-out commit moves.
mkdir inner && (cd inner && git init -q . && echo 1 > f && git add f &&
    git commit -qm 1) &&
    git -C repo -c protocol.file.allow=always submodule add -q \
    "$SCRATCH/inner" inner >/dev/null 2>&1 && git -C repo commit -qm sub
if [ -d repo/inner/.git ] || [ -f repo/inner/.git ]; then
	case_ none "(a submodule, unchanged)" true
	case_ progress "a commit in the submodule" \
	    sh -c 'cd inner && echo 2 > f && git commit -qam 2'
	case_ progress "... and another (the recorded commit is older still)" \
	    sh -c 'cd inner && echo 3 > f && git commit -qam 3'
	case_ none "... then nothing" true
	case_ none "an edit inside the submodule (its own work tree)" \
	    sh -c 'echo 4 > inner/f'
	# diff.relative would leave out what is above the directory.
	git -C repo config diff.relative true && DIR=repo/sub
	case_ progress "a commit in the submodule, seen from a subdirectory" \
	    sh -c 'cd ../inner && git commit -qam 4'
	DIR=repo && git -C repo config --unset diff.relative
else
	for i in 1 2 3 4 5 6; do skip "cannot add a submodule here"; done
fi

# Other bytes of the same size, the mtime put back: the snapshot that
# remembered the file's content by its stat data reads it again.
if [ $(( $(date +%s) - T_OLD )) -ge 3 ]; then
	case_ progress "same size, mtime put back, other bytes" \
	    sh -c "printf 'bbbb\n' > old && touch -r '$SCRATCH/stamp' old"
else
	skip "the file is not old enough yet"
fi
done_testing
