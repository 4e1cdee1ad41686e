grok -p 'Work on the next task of the plan.'
# client: grok 1.0.1
# env: MOCK_URL=http://127.0.0.1:40985/s/tools_loop/v1 HOME=/tmp/cbexec-rec-grok/home; . env/grok.sh
# cwd: /tmp/cbexec-rec-grok/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 2.1
# requests to the mock: 7
