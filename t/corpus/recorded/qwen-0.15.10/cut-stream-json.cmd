qwen -p 'Work on the next task of the plan.' --approval-mode yolo --output-format stream-json
# client: qwen 0.15.10
# env: MOCK_URL=http://127.0.0.1:37241/s/cut/v1 HOME=/tmp/cbexec-rec-qwen/home; . env/qwen.sh
# cwd: /tmp/cbexec-rec-qwen/work (contains README.md, big.txt); stdin: /dev/null
# elapsed_s: 4.4
# requests to the mock: 1
