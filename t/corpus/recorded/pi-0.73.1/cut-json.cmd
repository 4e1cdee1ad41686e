pi --no-session --mode json -p 'Work on the next task of the plan.'
# client: pi 0.73.1
# env: MOCK_URL=http://127.0.0.1:35867/s/cut HOME=/tmp/cbexec-rec-pi/home; . env/pi.sh
# cwd: /tmp/cbexec-rec-pi/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 4.1
# requests to the mock: 1
