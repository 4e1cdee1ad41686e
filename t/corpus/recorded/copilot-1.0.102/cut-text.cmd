copilot -p 'Work on the next task of the plan.' --allow-all-tools
# client: copilot 1.0.102
# env: MOCK_URL=http://127.0.0.1:44561/s/cut/v1 HOME=/tmp/cbexec-rec-copilot/home; . env/copilot.sh
# cwd: /tmp/cbexec-rec-copilot/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 14.7
# requests to the mock: 6
