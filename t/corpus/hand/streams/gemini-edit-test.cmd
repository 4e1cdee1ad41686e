gemini -p --output-format stream-json --yolo 'Work on the next task.'
