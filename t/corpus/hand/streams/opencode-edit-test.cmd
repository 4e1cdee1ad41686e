opencode run --format json 'Work on the next task.'
