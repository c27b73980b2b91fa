# tests/report/compare/projection.jq: what test_compare.sh compares of compare.json:
# the decisions (ranking, exclusions, differences, choices) and the numbers they rest
# on (normalised criteria, days, costs), not the charts' data or paths.
{
	clusters: [.clusters[] | {name, profile, verdict}],
	criteria: [.criteria[] | {id, comparable, why, bounds,
		clusters: [.clusters[] | {verdict, element, value, normalized}]}],
	workload: [.workload.clusters[] | {name, made, reason, price_source,
		busbw_GBps: .inputs.busbw_GBps, price: .inputs.price_per_gpu_hour,
		step_s: .outputs.step_s, days: .outputs.days, cost: .outputs.cost}],
	inputs_differ: [.workload.inputs_differ[].input],
	ranking,
	differences,
	nodes: [.nodes[] | {cluster, choice, points: [.points[] | {nodes, extrapolated, days, cost}]}]
}
