// Package sizing replays per-pod usage series (the GenAI trace's
// pod_memory_util_anon.csv format) against vertical sizing policies and
// scores them: `strata sim vertical`. Each pod's samples are shown to a
// policy in time order; the policy answers with the limit for the next
// sample, having seen only the past. The first quarter of a pod's samples
// (pods with at least MinSamples) is warm-up, observed but not scored; a
// scored sample above the limit in force is a breach (an OOM kill), and the
// policy is told so before the next sample.
//
// Policies: Strata's recommender (package autopilot/vertical) and the
// baseline, 1.15 × the peak seen so far (what the Kubernetes VPA does with
// under a day of history). The package is deterministic and does no I/O
// beyond the writer a caller hands it; it must never tune a policy to the
// file it scores.
package sizing
