package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/strata-dev/strata/api"
)

const (
	gib = int64(1) << 30
	tib = int64(1) << 40
)

// Topology of the generated cell: racks of nodesPerRack machines, rows of
// racksPerRow racks, datacenters of rowsPerDC rows, datacenters dealt over
// three zones of one region; a power zone feeds half a row.
const (
	region       = "us-east1"
	zones        = 3
	nodesPerRack = 40
	racksPerRow  = 10
	rowsPerDC    = 4
)

// shape is one machine type. Racks are homogeneous, as in real fleets.
type shape struct {
	name     string
	weight   int // share of racks, out of the sum of weights
	cores    int
	memGiB   int64
	diskTiB  int64
	netMbps  int64
	gpus     int
	gpuModel string
	gpuMemGi int64
}

var shapes = []shape{
	{name: "cpu-small", weight: 30, cores: 32, memGiB: 128, diskTiB: 2, netMbps: 25000},
	{name: "cpu-std", weight: 35, cores: 64, memGiB: 256, diskTiB: 4, netMbps: 25000},
	{name: "cpu-large", weight: 15, cores: 96, memGiB: 768, diskTiB: 8, netMbps: 50000},
	{name: "gpu-t4", weight: 7, cores: 32, memGiB: 256, diskTiB: 2, netMbps: 25000, gpus: 4, gpuModel: "T4", gpuMemGi: 16},
	{name: "gpu-a100", weight: 8, cores: 64, memGiB: 1024, diskTiB: 8, netMbps: 100000, gpus: 8, gpuModel: "A100", gpuMemGi: 80},
	{name: "gpu-h100", weight: 5, cores: 96, memGiB: 2048, diskTiB: 8, netMbps: 200000, gpus: 8, gpuModel: "H100", gpuMemGi: 80},
}

func pickShape(r *rand.Rand) shape {
	total := 0
	for _, s := range shapes {
		total += s.weight
	}
	x := r.IntN(total)
	for _, s := range shapes {
		if x < s.weight {
			return s
		}
		x -= s.weight
	}
	return shapes[len(shapes)-1]
}

// NodeID is the id of the i-th generated node; ids sort in index order.
func NodeID(i int) string { return fmt.Sprintf("node-%07d", i) }

func zoneName(z int) string { return fmt.Sprintf("%s-%c", region, 'a'+z) }

// GenerateNodes returns n nodes, sorted by ID, derived only from seed. About
// 0.5% are draining and 0.2% down, as in a live cell.
func GenerateNodes(n int, seed int64) []*api.Node {
	r := rand.New(rand.NewPCG(uint64(seed), 0xce11))
	nodes := make([]*api.Node, n)
	var sh shape
	for i := range n {
		rack := i / nodesPerRack
		if i%nodesPerRack == 0 {
			sh = pickShape(r)
		}
		row := rack / racksPerRow
		dc := row / rowsPerDC
		rowInDC := row % rowsPerDC
		rackInRow := rack % racksPerRow
		name := fmt.Sprintf("dc%02d-r%02d-k%02d-n%02d", dc, rowInDC, rackInRow, i%nodesPerRack)
		labels := map[string]string{
			api.LabelRegion:     region,
			api.LabelZone:       zoneName(dc % zones),
			api.LabelDatacenter: fmt.Sprintf("dc%02d", dc),
			api.LabelRow:        fmt.Sprintf("dc%02d-r%02d", dc, rowInDC),
			api.LabelRack:       fmt.Sprintf("dc%02d-r%02d-k%02d", dc, rowInDC, rackInRow),
			api.LabelPowerZone:  fmt.Sprintf("dc%02d-pz%02d", dc, rowInDC*2+rackInRow*2/racksPerRow),
			api.LabelSwitch:     fmt.Sprintf("dc%02d-r%02d-k%02d-tor", dc, rowInDC, rackInRow),
			api.LabelNode:       name,
			"machine":           sh.name,
		}
		if sh.gpus > 0 {
			labels["gpu"] = sh.gpuModel
		}
		node := &api.Node{
			ID:     NodeID(i),
			Name:   name,
			Labels: labels,
			Capacity: api.Resources{
				CPUMilli:    int64(sh.cores) * 1000,
				MemoryBytes: sh.memGiB * gib,
				DiskBytes:   sh.diskTiB * tib,
				GPUs:        int64(sh.gpus),
				NetMbps:     sh.netMbps,
			},
			Status: api.NodeReady,
		}
		// Two sockets: half the cores and memory on each, GPUs split evenly.
		half := sh.cores / 2
		for s := range 2 {
			cpus := make([]int, half)
			for c := range cpus {
				cpus[c] = s*half + c
			}
			node.NUMA = append(node.NUMA, api.NUMANode{ID: s, CPUs: cpus, MemoryBytes: sh.memGiB * gib / 2})
		}
		for g := range sh.gpus {
			node.GPUs = append(node.GPUs, api.GPU{ID: fmt.Sprint(g), Model: sh.gpuModel, MemoryBytes: sh.gpuMemGi * gib, NUMA: g * 2 / sh.gpus})
		}
		switch x := r.IntN(1000); {
		case x < 2:
			node.Status, node.StatusReason = api.NodeDown, "missed heartbeats"
		case x < 7:
			node.Status, node.StatusReason = api.NodeDraining, "kernel upgrade"
		}
		nodes[i] = node
	}
	return nodes
}

// datasets are the training data sets of the mix; GPU racks cache shards
// of them (LabelDatasets) and training jobs prefer nodes that hold theirs.
var datasets = []string{"imagenet", "laion", "c4"}

// LabelDatasets marks the GPU nodes that cache training data, as agents
// would with --label data.strata.dev/<dataset>=<shards>: three racks of
// four with GPUs hold one dataset each, every node of such a rack 1 to 8
// shards of it. It draws from its own stream of seed, so the cell is
// otherwise the one GenerateNodes made.
func LabelDatasets(nodes []*api.Node, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 0xda7a))
	dataset := ""
	for i, n := range nodes {
		if i%nodesPerRack == 0 {
			dataset = ""
			if len(n.GPUs) > 0 && r.IntN(4) < 3 {
				dataset = datasets[r.IntN(len(datasets))]
			}
		}
		if dataset != "" {
			n.Labels[api.DatasetLabelPrefix+dataset] = fmt.Sprint(1 + r.IntN(8))
		}
	}
}
