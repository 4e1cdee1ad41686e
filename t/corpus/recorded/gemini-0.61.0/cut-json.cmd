gemini -p 'Work on the next task of the plan.' --output-format json
# client: gemini 0.61.0
# env: MOCK_URL=http://127.0.0.1:35525/s/cut HOME=/tmp/cbexec-rec-gemini/home; . env/gemini.sh
# cwd: /tmp/cbexec-rec-gemini/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 5.4
# requests to the mock: 1
