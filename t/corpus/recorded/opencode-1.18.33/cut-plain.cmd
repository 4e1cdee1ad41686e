opencode run 'Work on the next task of the plan.'
# client: opencode 1.18.33
# env: MOCK_URL=http://127.0.0.1:40773/s/cut HOME=/tmp/cbexec-rec-opencode/home; . env/opencode.sh
# cwd: /tmp/cbexec-rec-opencode/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 79.4
# requests to the mock: 9
