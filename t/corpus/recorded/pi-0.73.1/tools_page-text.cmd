pi --no-session -p 'Work on the next task of the plan.'
# client: pi 0.73.1
# env: MOCK_URL=http://127.0.0.1:34703/s/tools_page HOME=/tmp/cbexec-rec-pi/home; . env/pi.sh
# cwd: /tmp/cbexec-rec-pi/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 0.7
# requests to the mock: 9
