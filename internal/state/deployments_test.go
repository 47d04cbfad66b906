package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func versioned(cmd string) *api.Workload {
	return &api.Workload{Name: "web", Groups: []*api.TaskGroup{{Name: "g", Replicas: 2, Tasks: []*api.Task{{Name: "t", Command: []string{cmd}}}}}}
}

func deploymentOf(id string) *api.Deployment {
	return &api.Deployment{ID: id, Workload: "web", Status: api.DeploymentRunning, Groups: []*api.DeploymentGroup{{Name: "g", Desired: 2, AutoRevert: true}}}
}

func TestHistoryAndDeployments(t *testing.T) {
	s := New()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v1"), nil, at) })
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v2"), deploymentOf("d2"), at) })
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v3"), deploymentOf("d3"), at) })
	snap := s.Snapshot()
	if d := snap.Deployment("d2"); d.Status != api.DeploymentCancelled || d.StatusDescription != "superseded by version 3" || d.Version != 2 || d.FromVersion != 1 {
		t.Fatalf("d2: %+v", d)
	}
	if d := snap.LatestDeployment("", "web"); d.ID != "d3" || d.Version != 3 {
		t.Fatalf("latest: %+v", d)
	}
	vs := snap.WorkloadVersions(nil, "", "web")
	if len(vs) != 3 || !vs[0].Stable || vs[1].Stable || vs[2].Stable || vs[2].DeploymentID != "d3" {
		t.Fatalf("history: %+v", vs)
	}
	if v := snap.LatestStableVersion("", "web", 3); v == nil || v.Version != 1 {
		t.Fatalf("latest stable before 3: %+v", v)
	}

	// Progress on a final deployment is ignored; success makes it stable.
	mustWrite(t, s, 4, func(w *WriteTxn) error {
		return w.ApplyDeploymentProgress(&api.DeploymentProgress{ID: "d2", Status: api.DeploymentSuccessful}, at)
	})
	mustWrite(t, s, 5, func(w *WriteTxn) error {
		return w.ApplyDeploymentProgress(&api.DeploymentProgress{ID: "d3", Status: api.DeploymentSuccessful,
			Groups: []*api.DeploymentGroup{{Name: "g", Desired: 2, Healthy: 2, AutoRevert: true}}}, at)
	})
	snap = s.Snapshot()
	if snap.Deployment("d2").Status != api.DeploymentCancelled {
		t.Fatal("a cancelled deployment took a plan's progress")
	}
	if d := snap.Deployment("d3"); d.Status != api.DeploymentSuccessful || d.Groups[0].Healthy != 2 {
		t.Fatalf("d3: %+v", d)
	}
	if !snap.WorkloadVersion("", "web", 3).Stable || snap.WorkloadVersion("", "web", 2).Stable {
		t.Fatal("stable flags after d3 succeeded")
	}

	// Snapshots carry both tables.
	var buf bytes.Buffer
	if err := snap.Dump().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	var d Dump
	if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(&d)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshot().WorkloadVersions(nil, "", "web"); len(got) != 3 || !got[2].Stable {
		t.Fatalf("restored history: %+v", got)
	}
	if got := r.Snapshot().Deployment("d3"); got == nil || got.Status != api.DeploymentSuccessful {
		t.Fatalf("restored deployment: %+v", got)
	}

	// A purge removes both.
	mustWrite(t, s, 6, func(w *WriteTxn) error { return w.DeleteWorkload("", "web") })
	if len(s.Snapshot().WorkloadVersions(nil, "", "web")) != 0 || s.Snapshot().LatestDeployment("", "web") != nil {
		t.Fatal("history or deployments outlived the purge")
	}
}

func TestHistoryIsBoundedAndKeepsTheNewestStable(t *testing.T) {
	s := New()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v1"), nil, at) })
	for i := 2; i <= 25; i++ { // every later version starts a deployment that never succeeds
		mustWrite(t, s, uint64(i), func(w *WriteTxn) error {
			return w.RegisterWorkload(versioned(fmt.Sprint("v", i)), deploymentOf(fmt.Sprint("d", i)), at)
		})
	}
	vs := s.Snapshot().WorkloadVersions(nil, "", "web")
	if len(vs) != MaxWorkloadVersions {
		t.Fatalf("%d versions kept, want %d", len(vs), MaxWorkloadVersions)
	}
	if vs[0].Version != 1 || !vs[0].Stable || vs[1].Version != 17 || vs[len(vs)-1].Version != 25 {
		t.Fatalf("kept versions %d, %d … %d", vs[0].Version, vs[1].Version, vs[len(vs)-1].Version)
	}
}

func TestCancelDeployment(t *testing.T) {
	s := New()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v1"), nil, at) })
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.RegisterWorkload(versioned("v2"), deploymentOf("d2"), at) })
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.CancelDeployment("", "web", "workload stopped", at) })
	if d := s.Snapshot().Deployment("d2"); d.Status != api.DeploymentCancelled || d.StatusDescription != "workload stopped" {
		t.Fatalf("d2: %+v", d)
	}
	mustWrite(t, s, 4, func(w *WriteTxn) error { return w.CancelDeployment("", "web", "again", at) })
	if d := s.Snapshot().Deployment("d2"); d.StatusDescription != "workload stopped" || d.ModifyIndex != 3 {
		t.Fatalf("a final deployment was cancelled again: %+v", d)
	}
}

// TestHistoriesAreNamespaced: two tenants' workloads of one name keep
// separate histories and deployments; purging one leaves the other's.
func TestHistoriesAreNamespaced(t *testing.T) {
	s := New()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	in := func(ns, cmd string) *api.Workload {
		w := versioned(cmd)
		w.Namespace = ns
		return w
	}
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNamespace(&api.Namespace{Name: "blue"}) })
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.RegisterWorkload(in("", "v1"), nil, at) })
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.RegisterWorkload(in("blue", "b1"), nil, at) })
	mustWrite(t, s, 4, func(w *WriteTxn) error { return w.RegisterWorkload(in("blue", "b2"), deploymentOf("db2"), at) })
	snap := s.Snapshot()
	if n, m := len(snap.WorkloadVersions(nil, "", "web")), len(snap.WorkloadVersions(nil, "blue", "web")); n != 1 || m != 2 {
		t.Fatalf("versions: default %d, blue %d; want 1 and 2", n, m)
	}
	if d := snap.LatestDeployment("", "web"); d != nil {
		t.Fatalf("default's web has blue's deployment %+v", d)
	}
	if d := snap.LatestDeployment("blue", "web"); d == nil || d.Namespace != "blue" || d.FromVersion != 1 {
		t.Fatalf("blue's deployment: %+v", d)
	}
	mustWrite(t, s, 5, func(w *WriteTxn) error { return w.DeleteWorkload("blue", "web") })
	if n := len(s.Snapshot().WorkloadVersions(nil, "", "web")); n != 1 {
		t.Fatalf("purging blue's web left default's with %d versions", n)
	}
}
