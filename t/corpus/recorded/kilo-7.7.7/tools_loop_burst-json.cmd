kilo run --format json 'Work on the next task of the plan.'
# client: kilo 7.7.7
# env: MOCK_URL=http://127.0.0.1:34515/s/tools_loop_burst HOME=/tmp/cbexec-rec-kilo/home; . env/kilo.sh
# cwd: /tmp/cbexec-rec-kilo/work (contains README.md); stdin: /dev/null
# elapsed_s: 8.4
# requests to the mock: 1
