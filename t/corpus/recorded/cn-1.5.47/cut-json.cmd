cn --config "$CN_CONFIG" -p 'Work on the next task of the plan.' --format json
# client: cn 1.5.47
# env: MOCK_URL=http://127.0.0.1:40801/s/cut HOME=/tmp/cbexec-rec-cn/home; . env/cn.sh
# cwd: /tmp/cbexec-rec-cn/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 108.3
# requests to the mock: 11
