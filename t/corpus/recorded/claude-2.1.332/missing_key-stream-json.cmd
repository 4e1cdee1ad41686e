claude -p 'Work on the next task of the plan.' --output-format stream-json --verbose
# client: claude 2.1.332
# env: MOCK_URL=http://127.0.0.1:38701/s/missing_key HOME=/tmp/cbexec-rec-claude/home; . env/claude.sh; unset ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY
# cwd: /tmp/cbexec-rec-claude/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 1.7
# requests to the mock: 0
