// Package scaling replays a request trace (the GenAI trace's
// lora_request_trace.csv) against horizontal autoscalers and scores them:
// `strata sim horizontal`. Every request keeps one replica busy for its
// execution time; requests no replica can take wait in one FIFO queue; a
// replica the autoscaler adds is ready after a start-up delay drawn (seeded)
// from a measured distribution (basemodel_update_latency_anon.csv). Each
// autoscaler is asked every sync period, with what it could have measured
// up to then and nothing later, how many replicas the group should have.
//
// Scores: under-provisioned minutes (minutes in which a request waited for
// a replica), replica-hours (starting replicas count: they hold a GPU), and
// the wait's percentiles. Autoscalers: Strata's (package
// autopilot/horizontal) and the baseline, the Kubernetes HPA rule.
//
// The engine is deterministic (virtual time, seeded draws) and does no I/O.
package scaling
