claude -p 'Work on the next task of the plan.'
# client: claude 2.1.332
# env: MOCK_URL=http://127.0.0.1:38701/s/401 HOME=/tmp/cbexec-rec-claude/home; . env/claude.sh
# cwd: /tmp/cbexec-rec-claude/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 2.8
# requests to the mock: 1
