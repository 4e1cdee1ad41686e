copilot -p 'Work on the next task of the plan.' --allow-all-tools --output-format json
# client: copilot 1.0.102
# env: MOCK_URL=http://127.0.0.1:40873/s/missing_key/v1 HOME=/tmp/cbexec-rec-copilot/home; . env/copilot.sh; unset COPILOT_PROVIDER_API_KEY
# cwd: /tmp/cbexec-rec-copilot/work (contains README.md); stdin: /dev/null
# elapsed_s: 3.3
# requests to the mock: 3
