claude -p --output-format stream-json --verbose 'Work on the next task.'
