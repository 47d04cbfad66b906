package faults

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/history"
)

// TestClassify: what an error says about an operation's effect decides
// how it enters the history; a wrong class would hide lost writes (a
// failure recorded as "not applied") or flag none.
func TestClassify(t *testing.T) {
	apiErr := func(status int, code string) error { return &api.Error{StatusCode: status, Code: code} }
	tests := []struct {
		kind history.Kind
		err  error
		want Outcome
	}{
		{history.Put, nil, Acknowledged},
		{history.Put, apiErr(503, "not-leader"), NotApplied},
		{history.Put, apiErr(503, "no-quorum"), NotApplied},
		{history.Put, fmt.Errorf("gave up after 10s: %w", apiErr(503, "not-ready")), NotApplied},
		{history.Delete, apiErr(503, "not-leader"), NotApplied},
		// A stop is retried after a failure in flight: the last attempt's
		// guarantee says nothing of the earlier ones.
		{history.Stop, apiErr(503, "not-leader"), Indeterminate},
		{history.Put, apiErr(503, "outcome-unknown"), Indeterminate},
		{history.Put, apiErr(502, "forward-failed"), Indeterminate},
		{history.Put, apiErr(500, "internal"), Indeterminate},
		{history.Put, fmt.Errorf("POST: %w: EOF", api.ErrOutcomeUnknown), Indeterminate},
		{history.Delete, context.DeadlineExceeded, Indeterminate},
		{history.Put, apiErr(400, "invalid-workload"), Unexpected},
		{history.Get, apiErr(400, "bad-request"), Unexpected},
		{history.Put, apiErr(429, "too-many"), Indeterminate},
		{history.Get, errors.New("connection reset"), NotApplied},
		{history.Allocs, apiErr(503, "not-leader"), NotApplied},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.kind, tt.err), func(t *testing.T) {
			if got := classify(tt.kind, tt.err); got != tt.want {
				t.Fatalf("classify(%s, %v) = %d, want %d", tt.kind, tt.err, got, tt.want)
			}
		})
	}
}

// TestAllocValues: the values an allocation read reports are the distinct
// HIST values of the specs the allocations run, sorted.
func TestAllocValues(t *testing.T) {
	alloc := func(v string) *api.Allocation {
		return &api.Allocation{TaskGroup: &api.TaskGroup{Tasks: []*api.Task{{Env: map[string]string{"HIST": v}}}}}
	}
	got := allocValues([]*api.Allocation{alloc("w2-9"), alloc("w1-3"), alloc("w2-9"), {}})
	if fmt.Sprint(got) != "[w1-3 w2-9]" {
		t.Fatalf("allocValues = %v", got)
	}
}
