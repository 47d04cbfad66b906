// Package policy holds the placement policies the FGD paper compares —
// Random, DotProd, GpuClustering, GpuPacking, BestFit and FGD — as small,
// pure scorers over the simulator's cluster model, scored the way the
// paper's simulator scores them, and Strata's own FGD+.
//
// A Scorer rates one feasible node for one pod (higher is better) and, for
// the node finally chosen, picks the GPUs. Selector turns any Scorer into a
// cluster.Placer: it filters nodes with Cluster.Fits, lets a Normalizer
// rescale the scores of the feasible nodes, keeps the best score and breaks
// exact ties by a seeded random node rank fixed for the run (TieRank, what
// the paper's simulator does), or optionally by a fresh draw per pod or by
// node index. The paper's policies score in whole numbers 0..100 like the
// Kubernetes framework it ran on, so near-equal nodes tie and the tie rule
// matters. Scorers never modify the cluster; they may cache results keyed by
// node Version. FGD and FGD+ take their mathematics from internal/frag
// (Distribution.Step, CPUKey), which the server's fgd plugin
// (internal/scheduler/fgd) shares: they add only the simulator's caches
// and the paper's whole-number scoring.
package policy
