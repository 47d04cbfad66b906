package trace_test

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/sim/trace"
)

func TestGoogleTaskEventsFixture(t *testing.T) {
	for _, file := range []string{"testdata/task_events.csv", "testdata/task_events.csv.gz"} {
		t.Run(file, func(t *testing.T) {
			pods, err := trace.LoadGoogleTaskEvents(trace.DefaultGoogleScale, file)
			if err != nil {
				t.Fatal(err)
			}
			// Window start: the earliest event, 0 s. 300-0 is first seen
			// scheduled and 400-0 finishing: both carried over from before
			// the window, created at its start; 400-0 ran before it, so it
			// ends at its event. 100-0 and 200-0 finish or fail after a
			// SCHEDULE: they run as long as the trace ran them. 200-0 gets
			// its request from its UPDATE_PENDING; 500-0's UPDATE_RUNNING
			// is an update.
			want := []trace.Pod{
				{Name: "100-0", CPUMilli: 4000, MemoryMiB: 8192, Creation: 0, Scheduled: 5, Deletion: 65, Phase: "Succeeded", Priority: 2, Job: 100, RunsFor: true, Runtime: 60},
				{Name: "300-0", CPUMilli: 16000, MemoryMiB: 32768, Creation: 0, Scheduled: 20, Deletion: trace.Absent, Phase: "Running", Priority: 0, Job: 300, CarriedOver: true},
				{Name: "400-0", CPUMilli: 2000, MemoryMiB: 8192, Creation: 0, Scheduled: trace.Absent, Deletion: 40, Phase: "Succeeded", Priority: 0, Job: 400, CarriedOver: true},
				{Name: "100-1", CPUMilli: 8000, MemoryMiB: 16384, Creation: 1, Scheduled: 2, Deletion: 30, Phase: "Evicted", Priority: 2, Job: 100},
				{Name: "500-0", CPUMilli: 4000, MemoryMiB: 16384, Creation: 3, Scheduled: 4, Deletion: 70, Phase: "Lost", Priority: 1, Job: 500,
					Updates: []trace.Update{{Time: 20, CPUMilli: 8000, MemoryMiB: 16384, Priority: 4}}},
				{Name: "200-0", CPUMilli: 32000, MemoryMiB: 65536, Creation: 10, Scheduled: 12, Deletion: 50, Phase: "Failed", Priority: 9, Job: 200, DistinctNode: true, RunsFor: true, Runtime: 38},
				{Name: "100-1#2", CPUMilli: 8000, MemoryMiB: 16384, Creation: 31, Scheduled: 32, Deletion: 90, Phase: "Killed", Priority: 2, Job: 100},
			}
			if len(pods) != len(want) {
				t.Fatalf("got %d pods: %+v", len(pods), pods)
			}
			for i, w := range want {
				g := pods[i]
				g.QoS = ""
				if !reflect.DeepEqual(g, w) {
					t.Errorf("pods[%d] = %+v\nwant      %+v", i, g, w)
				}
			}
			if pods[5].QoS != "class3" {
				t.Errorf("QoS = %q", pods[5].QoS)
			}
		})
	}
}

func TestGoogleScaleIsConfigurable(t *testing.T) {
	data, err := os.ReadFile("testdata/task_events.csv")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := trace.ReadGoogleTaskEvents("te", bytes.NewReader(data), trace.GoogleScale{CPUMilli: 1000, MemoryMiB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if pods[0].CPUMilli != 63 || pods[0].MemoryMiB != 32 {
		t.Fatalf("scaled = %d milli, %d MiB", pods[0].CPUMilli, pods[0].MemoryMiB)
	}
}

func TestGoogleMachineEventsFixture(t *testing.T) {
	nodes, events, err := trace.LoadGoogleMachineEvents("testdata/machine_events.csv", trace.DefaultGoogleScale)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[0].Name != "7" || nodes[0].CPUMilli != 32000 || nodes[1].MemoryMiB != 65536 || nodes[2].CPUMilli != 64000 {
		t.Fatalf("nodes = %+v", nodes)
	}
	kinds := ""
	for _, e := range events {
		kinds += e.Kind.String()[:1]
	}
	if kinds != "aaarau" || events[3].Time != 40 || events[3].Node != 1 || events[5].CPUMilli != 32000 {
		t.Fatalf("events = %+v (%s)", events, kinds)
	}
	csvNodes, err := trace.LoadMachineCSV("testdata/machines.csv", trace.DefaultGoogleScale)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		if csvNodes[i].Name != nodes[i].Name || csvNodes[i].CPUMilli != nodes[i].CPUMilli || csvNodes[i].MemoryMiB != nodes[i].MemoryMiB {
			t.Fatalf("machines.csv node %d = %+v, machine_events gave %+v", i, csvNodes[i], nodes[i])
		}
	}
}

func TestGoogleErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bad type", "0,,1,0,,12,u,0,0,0.1,0.1,0,0\n", "te.csv:1:event_type: unknown event type 12"},
		{"short row", "0,,1,0,,0\n", "te.csv:1:user: row has 6 columns"},
		{"bad cpu", "5,,1,0,,0,u,0,0,x,0.1,0,0\n", "te.csv:1:cpu_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.ReadGoogleTaskEvents("te.csv", strings.NewReader(tc.in), trace.DefaultGoogleScale)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNativeScenario(t *testing.T) {
	tr, err := trace.LoadNative("testdata/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Nodes) != 2 || tr.Nodes[0].GPUs != 2 || tr.Nodes[1].Labels["rack"] != "r1" {
		t.Fatalf("nodes = %+v", tr.Nodes)
	}
	if len(tr.Pods) != 3 || !tr.Pods[0].IsShare() || tr.Pods[1].GPUMilli != 1000 || tr.Pods[1].Deletion != trace.Absent ||
		tr.Pods[2].Deletion != 30 || tr.Pods[0].GPUSpec[0] != "T4" {
		t.Fatalf("pods = %+v", tr.Pods)
	}
	if len(tr.NodeEvents) != 1 || tr.NodeEvents[0].Kind != trace.NodeRemove {
		t.Fatalf("events = %+v", tr.NodeEvents)
	}
	if _, err := trace.ParseNative("typo.yaml", []byte("nodes: [{name: a, cpuMili: 1}]")); err == nil {
		t.Fatal("unknown field accepted")
	}
	if _, err := trace.ParseNative("j.json", []byte(`{"nodes":[{"name":"a","cpuMilli":1}],"pods":[{"name":"p","cpuMilli":1,"numGPU":2,"gpuMilli":300}]}`)); err == nil ||
		!strings.Contains(err.Error(), "pods[0].gpuMilli") {
		t.Fatalf("bad share accepted: %v", err)
	}
}

func TestWindowAndClipNodeEvents(t *testing.T) {
	pods := []trace.Pod{
		{Creation: 100, Scheduled: trace.Absent, Deletion: 400},
		{Creation: 200, Scheduled: 210, Deletion: trace.Absent, Updates: []trace.Update{{Time: 450}}},
	}
	start, end, ok := trace.Window(pods)
	if !ok || start != 100 || end != 450 {
		t.Fatalf("window %d..%d %v", start, end, ok)
	}
	if _, _, ok := trace.Window(nil); ok {
		t.Fatal("window of no pods")
	}
	events := []trace.NodeEvent{{Time: 0, Node: 0}, {Time: 50, Node: 1, Kind: trace.NodeRemove}, {Time: 300, Node: 1},
		{Time: 450, Node: 2, Kind: trace.NodeRemove}, {Time: 451, Node: 0, Kind: trace.NodeRemove}}
	got := trace.ClipNodeEvents(events, start, end)
	want := []trace.NodeEvent{{Time: 100, Node: 0}, {Time: 100, Node: 1, Kind: trace.NodeRemove}, {Time: 300, Node: 1},
		{Time: 450, Node: 2, Kind: trace.NodeRemove}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("clipped %+v\nwant    %+v", got, want)
	}
}
