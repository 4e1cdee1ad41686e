# client: codex codex-cli 0.169.0
# scenario: 429 (mock scenario 429)   format: plain   elapsed: 1.3s   requests to mock: 1   recorded: 2026-11-22T21:40:19Z
# env: . env/codex.sh with MOCK_URL=http://127.0.0.1:36839/s/429/v1; HOME=$(mktemp -d); cwd $HOME/work; stdin </dev/null
codex exec --skip-git-repo-check Continue\ with\ the\ next\ task\ of\ the\ plan\,\ then\ end\ your\ reply\ with\ the\ RALPH_STATUS\ block. 
