# tests/report/projection.jq: what a golden case compares of summary.json (see
# tests/report/README.md): the decisions, not every value. A field added to the
# summary changes no projection; a changed verdict, bound, failing element,
# problem line or diagnosis does.
{
	verdict,
	exit_code,
	criteria: [.criteria[] | {
		id,
		verdict,
		reason,
		worst: (if .worst then {element: .worst.element, value: .worst.value} else null end),
		failing: [.failures[]?.element]
	}],
	problems,
	diagnoses: [.diagnoses[]? | {subject, element, verdict}]
}
