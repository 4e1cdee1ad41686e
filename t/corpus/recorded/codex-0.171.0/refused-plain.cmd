codex exec --skip-git-repo-check 'Work on the next task of the plan.'
# client: codex 0.171.0
# env: MOCK_URL=http://127.0.0.1:37017/s/refused/v1 HOME=/tmp/cbexec-rec-codex/home; . env/codex.sh
# cwd: /tmp/cbexec-rec-codex/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 0.8
# requests to the mock: 0
# lingering: 1 processes of the client's session after it exited (ended)
