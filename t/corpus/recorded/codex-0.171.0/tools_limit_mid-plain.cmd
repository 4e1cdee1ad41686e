codex exec --skip-git-repo-check 'Work on the next task of the plan.'
# client: codex 0.171.0
# env: MOCK_URL=http://127.0.0.1:46231/s/tools_limit_mid/v1 HOME=/tmp/cbexec-rec-codex/home; . env/codex.sh
# cwd: /tmp/cbexec-rec-codex/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 1.4
# requests to the mock: 4
# lingering: 1 processes of the client's session after it exited (ended)
