pi --no-session -p 'Work on the next task of the plan.'
# client: pi 0.73.1
# env: MOCK_URL=http://127.0.0.1:43087/s/usage_limit HOME=/tmp/cbexec-rec-pi/home CBEXEC_PI_PROVIDER=openai-codex; . env/pi.sh
# cwd: /tmp/cbexec-rec-pi/work (contains README.md); stdin: /dev/null
# elapsed_s: 8.4
# requests to the mock: 4
