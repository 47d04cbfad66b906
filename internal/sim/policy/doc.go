// Package policy holds the placement policies the FGD paper compares —
// Random, DotProd, GpuClustering, GpuPacking, BestFit and FGD — as small,
// pure scorers over the simulator's cluster model.
//
// A Scorer rates one feasible node for one pod (higher is better) and, for
// the node finally chosen, picks the GPUs. Selector turns any Scorer into a
// cluster.Placer: it filters nodes with Cluster.Fits, keeps the best score
// and breaks exact ties uniformly at random with its own seeded source, as
// the Kubernetes framework the paper ran on does. Scorers never modify the
// cluster; they may cache results keyed by node Version. The shape is meant
// to be wrapped later as scoring plugins of internal/scheduler.
package policy
