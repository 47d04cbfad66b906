package scheduler

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// versionedState is a fakeState that versions every node by its content:
// a hash of the node and of its allocations, so that a version moves
// exactly when something the engine reads of the node changed.
type versionedState struct {
	*fakeState
	source *int
}

var _ NodeVersioner = versionedState{}

func (v versionedState) NodeVersions() (any, []uint64) {
	out := make([]uint64, len(v.nodes))
	for i, n := range v.nodes {
		h := fnv.New64a()
		b, _ := json.Marshal(n)
		h.Write(b)
		for _, a := range v.AllocsByNode(n.ID) {
			b, _ := json.Marshal(a)
			h.Write(b)
		}
		out[i] = h.Sum64()
	}
	return v.source, out
}

// cacheScenario is a random story of one cell: workloads of every shape
// and policy (copies of one another under new names, so that classes are
// shared), scaled, updated and stopped, nodes failing and coming back,
// allocations failing. Every plan is scheduled with one Scratch over a
// versionedState when cached (the score cache at work), without either
// otherwise; it returns the plans as JSON.
func cacheScenario(t *rapid.T, cached bool) string {
	var nodes []*nodeBuilder
	for i := range rapid.IntRange(1, 14).Draw(t, "nodes") {
		b := genNode(t, i)
		if rapid.IntRange(0, 3).Draw(t, "zoneRoll") > 0 {
			b.label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 2).Draw(t, "zone")))
		}
		if rapid.Bool().Draw(t, "hardwareRoll") {
			genDevices(t, genNodeHardware(t, b))
		}
		nodes = append(nodes, b)
	}
	f := newFake(nodes...)
	var st State = f
	var scratch *Scratch
	if cached {
		st, scratch = versionedState{fakeState: f, source: new(int)}, &Scratch{}
	}
	genBackground(t, f, 2)
	var out []byte
	names := []string{"a", "b", "c", "d"}
	for step := range rapid.IntRange(1, 16).Draw(t, "steps") {
		name := rapid.SampledFrom(names).Draw(t, "workload")
		switch rapid.IntRange(0, 7).Draw(t, "action") {
		case 0, 1: // submit or update
			w := workload(name)
			for gi := range rapid.IntRange(1, 2).Draw(t, "groups") {
				g := genDeviceRequests(t, genHardware(t, genPorts(t, genGroup(t, fmt.Sprint("g", gi)))))
				if rapid.Bool().Draw(t, "relationRoll") {
					genRelations(t, g)
				}
				switch rapid.IntRange(0, 4).Draw(t, "extra") {
				case 1:
					g.prefer(rapid.IntRange(1, 100).Draw(t, "preferWeight"), "zone", "=", "z1")
				case 2:
					g.avoid(rapid.IntRange(1, 100).Draw(t, "avoidWeight"), "rack", "in", "r0", "r1")
				case 3:
					g.gang(rapid.IntRange(0, 2).Draw(t, "minMember"), rapid.SampledFrom([]string{"", "rack", "zone"}).Draw(t, "topology"))
				}
				w.Groups = append(w.Groups, g.g)
			}
			if old := f.Workload("", name); old != nil {
				w.Version = old.Version + 1
			}
			w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
			w.SchedulingPolicy.Type = rapid.SampledFrom([]string{api.PolicyBinpack, api.PolicySpread, api.PolicyDotProduct, api.PolicyRandom}).Draw(t, "policy")
			f.putWorkload(w)
		case 2: // another workload of the same shapes: the same classes
			w := copyOf(t, f, names, name, "copyOf")
			if w == nil {
				break
			}
			if rapid.Bool().Draw(t, "copyPolicyRoll") {
				w.SchedulingPolicy.Type = rapid.SampledFrom([]string{api.PolicyBinpack, api.PolicyRandom}).Draw(t, "copyPolicy")
			}
			f.putWorkload(w)
		case 7: // another workload alike but for one field of one task:
			// a class key that leaves the field out shares verdicts wrongly
			w := copyOf(t, f, names, name, "tweakOf")
			if w == nil {
				break
			}
			w.Groups = slices.Clone(w.Groups)
			g := *w.Groups[0]
			task := *g.Tasks[0]
			tweak(t, &task)
			g.Tasks = append([]*api.Task{&task}, g.Tasks[1:]...)
			w.Groups[0] = &g
			f.putWorkload(w)
		case 3: // scale
			if w := f.Workload("", name); w != nil {
				cp := *w
				cp.Groups = nil
				for _, g := range w.Groups {
					g2 := *g
					g2.Replicas += rapid.IntRange(-2, 4).Draw(t, "more")
					g2.Replicas = max(g2.Replicas, 0)
					cp.Groups = append(cp.Groups, &g2)
				}
				f.putWorkload(&cp)
			}
		case 4: // a node goes down or comes back, or is drained
			n := f.nodes[rapid.IntRange(0, len(f.nodes)-1).Draw(t, "node")]
			n.Status = rapid.SampledFrom([]string{api.NodeReady, api.NodeDown, api.NodeDraining}).Draw(t, "status")
		case 5: // an allocation fails
			if len(f.allocs) > 0 {
				a := f.allocs[rapid.IntRange(0, len(f.allocs)-1).Draw(t, "alloc")]
				if !a.Terminal() {
					f.setClient(a.ID, api.AllocFailed)
				}
			}
		case 6: // stop
			if w := f.Workload("", name); w != nil {
				cp := *w
				cp.Stopped = true
				f.putWorkload(&cp)
			}
		}
		if f.Workload("", name) == nil {
			continue
		}
		sample := rapid.SampledFrom([]int{0, 1, 3, -1}).Draw(t, "sample")
		plan := Schedule(st, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: name},
			Options{Seed: int64(step), FeasibleSample: sample, Scratch: scratch})
		b, err := json.Marshal(plan)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		out = append(append(out, b...), '\n')
		f.apply(plan, rapid.Bool().Draw(t, "finish"))
	}
	return string(out)
}

// copyOf is a copy, named name, of a workload drawn from names (the next
// version of name when it exists); nil when the draw is name itself or
// none.
func copyOf(t *rapid.T, f *fakeState, names []string, name, label string) *api.Workload {
	from := f.Workload("", rapid.SampledFrom(names).Draw(t, label))
	if from == nil || from.Name == name {
		return nil
	}
	w := *from
	w.Name, w.Version = name, 1
	if old := f.Workload("", name); old != nil {
		w.Version = old.Version + 1
	}
	return &w
}

// tweak changes one thing a task asks for.
func tweak(t *rapid.T, task *api.Task) {
	r := &task.Resources
	switch rapid.IntRange(0, 8).Draw(t, "tweak") {
	case 0:
		r.CPUMilli += 100
	case 1:
		r.MemoryBytes += 64 << 20
	case 2:
		r.GPUs++
	case 3:
		r.GPUMilli = (r.GPUMilli + 100) % 1000
	case 4:
		task.GPUModels = rapid.SampledFrom([][]string{nil, {"A100"}, {"V100"}, {"A100", "V100"}}).Draw(t, "tweakModels")
	case 5:
		r.DiskBytes += 1 << 30
	case 6:
		r.HugePages2Mi += 64 << 20
	case 7:
		task.Devices = append(append([]api.DeviceRequest(nil), task.Devices...), api.DeviceRequest{Class: "fpga", Count: 1})
	case 8:
		task.ExclusiveCores = !task.ExclusiveCores
	}
}

// TestScoreCacheKeepsPlans replays random stories with the score cache and
// without it: every plan, ids, failures and explanations included, must
// be the same.
func TestScoreCacheKeepsPlans(t *testing.T) {
	withCache := rapid.Custom(func(t *rapid.T) string { return cacheScenario(t, true) })
	without := rapid.Custom(func(t *rapid.T) string { return cacheScenario(t, false) })
	for seed := range 1500 {
		if got, want := withCache.Example(seed), without.Example(seed); got != want {
			t.Fatalf("scenario %d: plans with the score cache differ from those without:\n%s", seed, firstDifference(got, want))
		}
	}
}

// firstDifference shows where two texts part.
func firstDifference(got, want string) string {
	k := 0
	for k < len(got) && k < len(want) && got[k] == want[k] {
		k++
	}
	from := max(0, k-200)
	return fmt.Sprintf("with:    …%s\nwithout: …%s", got[from:min(len(got), k+200)], want[from:min(len(want), k+200)])
}

// TestScoreCacheIsUsed checks that the cache answers: a second evaluation
// of the same shape on an unchanged cell judges no node again.
func TestScoreCacheIsUsed(t *testing.T) {
	var nodes []*nodeBuilder
	for i := range 50 {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i)).cpu(8000).mem("16Gi"))
	}
	f := newFake(nodes...)
	st := versionedState{fakeState: f, source: new(int)}
	scratch := &Scratch{}
	for k, name := range []string{"a", "b"} {
		f.putWorkload(workload(name, taskGroup("g").replicas(1).cpu(500).mem("1Gi")))
		Schedule(st, &api.Evaluation{ID: name, Workload: name}, Options{Seed: int64(k), FeasibleSample: -1, Scratch: scratch})
	}
	if len(scratch.cache.classes) != 1 {
		t.Fatalf("classes = %d, want 1 (the two groups ask alike)", len(scratch.cache.classes))
	}
	for _, vs := range scratch.cache.classes {
		judged := 0
		for _, v := range vs.nodes {
			if v.version != 0 {
				judged++
			}
		}
		if judged != len(nodes) {
			t.Fatalf("%d nodes judged, want %d", judged, len(nodes))
		}
	}
}

// TestSeededOrderIsShuffle holds seededOrder to the permutation
// math/rand/v2's Shuffle draws from the same seed, which plans were made
// with before it.
func TestSeededOrderIsShuffle(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 100, 1000, 12580} {
		for seed := range int64(20) {
			want := make([]int32, n)
			for i := range want {
				want[i] = int32(i)
			}
			rng := rand.New(rand.NewPCG(uint64(seed), orderStream))
			rng.Shuffle(n, func(i, j int) { want[i], want[j] = want[j], want[i] })
			got := make([]int32, n)
			seededOrder(got, seed)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d seed=%d: position %d is %d, Shuffle has %d", n, seed, i, got[i], want[i])
				}
			}
		}
	}
}

// TestScoreKeysNameWhatScorersRead holds every built-in scorer to the
// ScoreKeyer contract: two requests with equal keys score a node alike.
// The requests differ at random in every field a scorer could read.
func TestScoreKeysNameWhatScorersRead(t *testing.T) {
	scorers := map[string]Scorer{"binpack": BinPack{}, "spread": Spread{}, "dot-product": DotProduct{}, "random": Random{}}
	rapid.Check(t, func(t *rapid.T) {
		genReq := func(label string) *Request {
			tg := &api.TaskGroup{Name: rapid.SampledFrom([]string{"g", "h"}).Draw(t, label+"group"),
				Tasks: []*api.Task{{Name: "t", GPUModels: rapid.SampledFrom([][]string{nil, {"A100"}}).Draw(t, label+"models")}}}
			w := &api.Workload{Name: rapid.SampledFrom([]string{"a", "b"}).Draw(t, label+"workload"),
				Version: uint64(rapid.IntRange(1, 2).Draw(t, label+"version")), Groups: []*api.TaskGroup{tg}}
			r := api.Resources{CPUMilli: int64(rapid.IntRange(1, 2).Draw(t, label+"cpu")) * 500,
				MemoryBytes: int64(rapid.IntRange(1, 2).Draw(t, label+"mem")) << 30,
				GPUs:        int64(rapid.IntRange(0, 1).Draw(t, label+"gpus")), GPUMilli: int64(rapid.IntRange(0, 1).Draw(t, label+"milli")) * 300,
				DiskBytes: int64(rapid.IntRange(0, 1).Draw(t, label+"disk")) << 30}
			return &Request{Workload: w, Group: tg, Resources: r}
		}
		a, b := genReq("a"), genReq("b")
		n := node("n1").cpu(int64(rapid.IntRange(2, 8).Draw(t, "cores"))*1000).mem("16Gi").gpu("0", "A100", 0).gpu("1", "V100", 0).n
		free := n.Capacity
		free.CPUMilli -= int64(rapid.IntRange(0, 1000).Draw(t, "usedCPU"))
		view := NodeView{Node: n, Free: free}
		for name, s := range scorers {
			ka, _ := s.(ScoreKeyer).ScoreKey(a)
			kb, _ := s.(ScoreKeyer).ScoreKey(b)
			if ka == kb && s.Score(a, view) != s.Score(b, view) {
				t.Fatalf("%s: equal keys %q, scores %v and %v", name, ka, s.Score(a, view), s.Score(b, view))
			}
		}
	})
}

// TestFailureCountedByTheWalkIsTheRecount: when nothing changed the cell
// since a window judged every node unfit, the failure built from the
// window's counts (placeGroup's shortcut) is the one a recount of every
// node makes.
func TestFailureCountedByTheWalkIsTheRecount(t *testing.T) {
	applied := 0
	defer func() {
		if applied == 0 {
			t.Fatal("no scenario met the shortcut's conditions")
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 12).Draw(t, "nodes") {
			nodes = append(nodes, genDevices(t, genNodeHardware(t, genNode(t, i))))
		}
		f := newFake(nodes...)
		genBackground(t, f, 3)
		gb := genDeviceRequests(t, genHardware(t, genPorts(t, genGroup(t, "g")))).replicas(1)
		if rapid.Bool().Draw(t, "relationRoll") {
			genRelations(t, gb)
		}
		w := workload("w", gb)
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		f.putWorkload(w)
		c := newCell(f, int64(rapid.IntRange(0, 9).Draw(t, "seed")))
		g := compileGroup(w, gb.g, Options{})
		g.relate(c, w)
		p := &placer{cell: c, w: w, ids: newIDGen(1, 2, 3), sample: Options{FeasibleSample: rapid.SampledFrom([]int{0, 1, -1}).Draw(t, "sample")}.sampleSize(c.size())}
		before := len(c.changes)
		k, set := p.placeWindow(g, intentsOf(placeIntent{index: 0}), c.order, true)
		if k == 1 || len(c.changes) != before || !set.rejectedAll() {
			t.Skip("the shortcut does not apply")
		}
		applied++
		got, want := c.failureOf(g, 1, set.stats.reasons()), c.failure(g, 1)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("failure from the walk %+v, recount %+v", got, want)
		}
	})
}
