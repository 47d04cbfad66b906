package state

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestCellIDIsSetOnceAndSurvivesSnapshots: the first identity written
// stays (a second proposal from a racing leader changes nothing), and it
// survives a dump, its JSON encoding and a restore.
func TestCellIDIsSetOnceAndSurvivesSnapshots(t *testing.T) {
	s := New()
	if got := s.Snapshot().CellID(); got != "" {
		t.Fatalf("new store has cell id %q, want none", got)
	}
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.SetCellID("cell-a") })
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.SetCellID("cell-b") })
	if got := s.Snapshot().CellID(); got != "cell-a" {
		t.Fatalf("cell id %q after a second proposal, want the first, cell-a", got)
	}
	if err := s.Write(4, func(w *WriteTxn) error { return w.SetCellID("") }); err == nil {
		t.Fatalf("an empty cell id was accepted")
	}

	var buf bytes.Buffer
	if err := s.Snapshot().Dump().Encode(&buf); err != nil {
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
	if got := r.Snapshot().CellID(); got != "cell-a" {
		t.Fatalf("restored cell id %q, want cell-a", got)
	}
	if got := r.Snapshot().CellConfig(); got.ModifyIndex != 0 {
		t.Fatalf("the identity row shows as a cell config: %+v", got)
	}
}
