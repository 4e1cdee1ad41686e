kilo run 'Work on the next task of the plan.'
# client: kilo 7.7.7
# env: MOCK_URL=http://127.0.0.1:34515/s/429 HOME=/tmp/cbexec-rec-kilo/home; . env/kilo.sh
# cwd: /tmp/cbexec-rec-kilo/work (contains README.md); stdin: /dev/null
# elapsed_s: 10.7
# requests to the mock: 2
