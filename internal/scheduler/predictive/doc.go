// Package predictive is the scheduler's `predictive` policy (the seed's
// PredictiveMLOptimized): placement that uses what the cell predicts about
// its nodes (api.NodeForecast) on top of the placement the cell would make
// anyway.
//
// It scores a feasible node with three terms, each one scheduler scorer
// (explanations show them by name):
//
//   - the base: fgd (FGD with Strata's CPU-aware tie-break) when the cell
//     runs GPU work, binpack otherwise;
//   - failure-risk: minus the node's predicted probability of failing
//     within the failure model's horizon, as a share of RiskRef (a node at
//     RiskRef or above costs the whole weight), weighted more for groups
//     whose loss hurts most — production and system priority, and
//     atMostOnce groups (a replacement waits out a lease) — than for
//     batch and best-effort ones;
//   - predicted-headroom, for best-effort groups only and weighted as much
//     as the whole base: the share of the node's CPU its predicted peak
//     use leaves once this replica's request is added, so for best-effort
//     work the predicted peak, not the requests, leads it to where the
//     resources it would run in are predicted to lie unused.
//
// A node without a forecast gets no risk or headroom term (absent is not
// zero risk, and no node is ranked on data it lacks); a cell without
// forecasts places exactly as the base policy does. Feasibility is not
// touched: a replica is still admitted by its request against the node's
// capacity (invariant 4); admitting best-effort work against predicted
// peaks instead of requests needs a cell oversubscription policy Strata
// does not have yet.
//
// Predictions come in as data through the snapshot (scheduler.
// ForecastReader), so the policy stays a pure function of its inputs; it
// reads no clock and keeps no state between plans.
package predictive
