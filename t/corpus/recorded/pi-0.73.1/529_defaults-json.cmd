pi --no-session --mode json -p 'Work on the next task of the plan.'
# client: pi 0.73.1
# env: MOCK_URL=http://127.0.0.1:37237/s/529 HOME=/tmp/cbexec-rec-pi/home CBEXEC_PI_RETRY=defaults; . env/pi.sh
# cwd: /tmp/cbexec-rec-pi/work (contains README.md); stdin: /dev/null
# elapsed_s: 21.1
# requests to the mock: 12
