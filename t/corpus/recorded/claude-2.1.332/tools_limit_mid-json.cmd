claude -p 'Work on the next task of the plan.' --output-format json
# client: claude 2.1.332
# env: MOCK_URL=http://127.0.0.1:38701/s/tools_limit_mid HOME=/tmp/cbexec-rec-claude/home  CLAUDE_AUTH=oauth; . env/claude.sh
# cwd: /tmp/cbexec-rec-claude/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 3.4
# requests to the mock: 4
