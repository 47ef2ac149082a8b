"""The run lifecycle against a cluster: submit, status phase tree, watch, list, logs, get,
cancel, retry, resume, history.

`submit.prepare/submit` (connected submission), `snapshot.collect` + `phases.build` +
`status.document` (what `tau run status` shows), `classify.classify` and `retry.run_retries`
(automatic retry), `resume.resume`, `runs.list_runs/cancel`, `logs.streams`, `artifacts.fetch`,
`history.history`. See docs/lifecycle.md.
"""
