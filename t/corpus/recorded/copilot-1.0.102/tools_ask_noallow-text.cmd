copilot -p 'Work on the next task of the plan.'
# client: copilot 1.0.102
# env: MOCK_URL=http://127.0.0.1:43171/s/tools_ask/v1 HOME=/tmp/jw/recroot-copilot/home; . env/copilot.sh
# cwd: /tmp/jw/recroot-copilot/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 5.9
# requests to the mock: 2
