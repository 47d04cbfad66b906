package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// TestDevicesSurviveThePlanEntry: replicas of one group share a template
// in the raft entry; each keeps its own device (the template's would
// hand one FPGA to both), and a third replica waits with the reason.
const fpgaWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      replicas: %d
      tasks:
        - name: t
          driver: mock
          command: ["sleep", "3600"]
          resources: {cpu: 100m, memory: 16Mi}
          devices: [{class: fpga, count: 1}]
`

func TestDevicesSurviveThePlanEntry(t *testing.T) {
	s := quietServer(t)
	node := &api.Node{ID: "node-fpga", Name: "fpga", Status: api.NodeReady,
		Capacity: api.Resources{CPUMilli: 8000, MemoryBytes: 8 << 30},
		Devices: []api.Device{
			{ID: "0000:3b:00.0", Class: "fpga", NUMA: 0},
			{ID: "0000:af:00.0", Class: "fpga", NUMA: 1},
		}}
	key := &state.NodeKey{NodeID: node.ID, Verifier: nodeauth.Verifier(testNodeSecret(node.ID))}
	if _, err := s.propose(&fsm.UpsertNode{Node: node, Key: key}); err != nil {
		t.Fatal(err)
	}
	submit(t, s, fmt.Sprintf(fpgaWorkload, "w", 3))
	waitPlaced(t, s, "w", 2)
	var got []string
	for _, a := range s.State().Snapshot().AllocsByWorkload("", "w") {
		got = append(got, a.Assignment.Devices...)
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "0000:3b:00.0,0000:af:00.0" {
		t.Fatalf("devices held = %v, want each fpga once", got)
	}
	var last string
	cl := api.NewClient(s.Addr())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st, _, err := cl.WorkloadStatus(context.Background(), "w", nil)
		if err != nil {
			last = err.Error()
			continue
		}
		last = fmt.Sprintf("%+v", st)
		if g := st.Groups; len(g) == 1 && g[0].Failure != nil {
			if last = g[0].Failure.Summary; last == "1 node: no 1 free device of class fpga" {
				return
			}
		}
	}
	t.Fatalf("status has no device reason: %s", last)
}
