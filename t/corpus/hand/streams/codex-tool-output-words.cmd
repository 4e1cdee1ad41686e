codex exec --json 'Work on the next task.'
