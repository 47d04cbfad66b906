package scheduler

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
)

// DotProduct is the alignment score of Grandl et al. (Tetris) in the
// variant the FGD paper compares against: it prefers the node whose free
// resources, normalized by its capacity, have the smallest dot product with
// the request, so requests land where they use what others are unlikely to
// need.
type DotProduct struct{}

// Score is 1 minus the normalized dot product over cpu, memory and GPUs.
func (DotProduct) Score(req *Request, n NodeView) float64 {
	capacity, free, want := &n.Node.Capacity, &n.Free, &req.Resources
	sum, dims := 0.0, 0
	add := func(want, free, capacity int64) {
		if capacity <= 0 {
			return
		}
		sum += (float64(want) / float64(capacity)) * (float64(free) / float64(capacity))
		dims++
	}
	add(want.CPUMilli, free.CPUMilli, capacity.CPUMilli)
	add(want.MemoryBytes, free.MemoryBytes, capacity.MemoryBytes)
	if want.GPUs > 0 || want.GPUMilli > 0 {
		add(want.GPUs*1000+want.GPUMilli, free.GPUs*1000, capacity.GPUs*1000)
	}
	if dims == 0 {
		return 0
	}
	return 1 - sum/float64(dims)
}

// ScoreKey implements ScoreKeyer.
func (DotProduct) ScoreKey(req *Request) (string, bool) {
	r := &req.Resources
	return fmt.Sprint(r.CPUMilli, r.MemoryBytes, r.GPUs, r.GPUMilli), true
}

// Random scores each feasible node with a hash of the node, the group and
// the node's free resources: a uniform pick that is still a pure function of
// its inputs (the same plan for the same state), and that changes for a node
// once a replica lands there.
type Random struct{}

// Score is a hash in [0, 1).
func (Random) Score(req *Request, n NodeView) float64 {
	h := fnv.New64a()
	h.Write([]byte(n.Node.ID))
	if req.Workload != nil {
		h.Write([]byte(req.Workload.Name))
		h.Write([]byte(strconv.FormatUint(req.Workload.Version, 10)))
	}
	if req.Group != nil {
		h.Write([]byte(req.Group.Name))
	}
	h.Write([]byte(strconv.FormatInt(n.Free.CPUMilli, 10)))
	h.Write([]byte(strconv.FormatInt(n.Free.MemoryBytes, 10)))
	h.Write([]byte(strconv.FormatInt(n.Free.GPUs, 10)))
	return float64(h.Sum64()>>11) / float64(1<<53)
}

// ScoreKey implements ScoreKeyer: the hash reads the workload's name
// and version and the group's name.
func (Random) ScoreKey(req *Request) (string, bool) {
	var sb strings.Builder
	if req.Workload != nil {
		fmt.Fprintf(&sb, "%q %d", req.Workload.Name, req.Workload.Version)
	}
	if req.Group != nil {
		fmt.Fprintf(&sb, " %q", req.Group.Name)
	}
	return sb.String(), true
}

var (
	_ ScoreKeyer = DotProduct{}
	_ ScoreKeyer = Random{}
)

// builtinNames are the policy types builtinScorer knows.
var builtinNames = map[string]bool{api.PolicyBinpack: true, api.PolicySpread: true, api.PolicyDotProduct: true, api.PolicyRandom: true}

// builtinScorer is the scorer of a built-in policy type, BinPack otherwise.
func builtinScorer(typ string) Scorer {
	switch typ {
	case api.PolicySpread:
		return Spread{}
	case api.PolicyDotProduct:
		return DotProduct{}
	case api.PolicyRandom:
		return Random{}
	}
	return BinPack{}
}
