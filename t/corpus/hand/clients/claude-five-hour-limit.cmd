claude -p "go on"
# Claude Code 1.0.x, --output-format text
