claude -p 'Work on the next task of the plan.' --output-format stream-json --verbose --max-turns 1
# client: claude 2.1.332
# env: MOCK_URL=http://127.0.0.1:38701/s/tools HOME=/tmp/cbexec-rec-claude/home; . env/claude.sh
# cwd: /tmp/cbexec-rec-claude/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 1.1
# requests to the mock: 1
