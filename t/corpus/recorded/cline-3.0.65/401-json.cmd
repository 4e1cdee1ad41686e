cline --json -P anthropic 'Work on the next task of the plan.'
# client: cline 3.0.65
# env: MOCK_URL=http://127.0.0.1:37217/s/401 HOME=/tmp/cbexec-rec-cline/home; . env/cline.sh
# cwd: /tmp/cbexec-rec-cline/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 6.9
# requests to the mock: 1
