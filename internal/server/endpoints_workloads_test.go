package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// TestRegisterAnswersItsOwnVersion: concurrent submissions of one workload
// each get the version their own command was given in the log, so the
// versions answered are distinct, 1..n. (The handler used to read the stored workload after
// proposing, which may already hold a later submission's version.)
func TestRegisterAnswersItsOwnVersion(t *testing.T) {
	s := quietServer(t)
	const n = 24
	answers := make(chan uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.Addr()+"/v1/workloads", "application/yaml", strings.NewReader(fmt.Sprintf(benchWorkload, "w", i+1)))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out api.RegisterResponse
			if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
				t.Errorf("register: %d", resp.StatusCode)
				return
			}
			answers <- out.Version
		}()
	}
	wg.Wait()
	close(answers)
	var versions []uint64
	for v := range answers {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != uint64(i+1) {
			t.Fatalf("versions answered %v, want 1..%d each once", versions, n)
		}
	}
	// Let the evaluations settle: a worker proposing while the server
	// closes can wait on raft forever (a raft future enqueued as raft
	// shuts down is never answered).
	waitEvalsSettled(t, s, "w")
}

// waitEvalsSettled waits until no evaluation of workload is pending, woken
// by the store.
func waitEvalsSettled(tb testing.TB, s *Server, workload string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen uint64
	for {
		pending := 0
		idx, err := s.State().Query(ctx, seen, time.Second, func(snap *state.Snapshot, ws memdb.WatchSet) (uint64, error) {
			for _, e := range snap.EvalsByWorkload(ws, "", workload) {
				if e.Status == api.EvalPending {
					pending++
				}
			}
			return snap.TableIndex(ws, state.TableEvals), nil
		})
		if pending == 0 {
			return
		}
		if err != nil {
			tb.Fatalf("%d evaluations of %s still pending: %v", pending, workload, err)
		}
		seen = idx
	}
}
