cline --json -P anthropic 'Work on the next task of the plan.'
# client: cline 3.0.65
# env: MOCK_URL=http://127.0.0.1:37217/s/missing_key HOME=/tmp/cbexec-rec-cline/home; . env/cline.sh; unset CLINE_KEY; cline_settings
# cwd: /tmp/cbexec-rec-cline/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 3.9
# requests to the mock: 0
