package server

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentPurgesFindTheWorkloadOnce: of concurrent purges of one
// workload exactly one answers 200 and the others 404, and so for stops of
// a workload purged meanwhile. The handler used to check that the
// workload existed in its own state and then propose: every purge that
// checked before the first was applied answered 200, so two clients were
// each told they removed the same workload (found by the fault scenarios'
// linearizability check, test/faults), and a deposed leader answered 404
// from its old state.
func TestConcurrentPurgesFindTheWorkloadOnce(t *testing.T) {
	s := quietServer(t)
	const rounds, purgers = 4, 6
	for round := range rounds {
		name := fmt.Sprintf("p%d", round)
		resp, err := http.Post(s.Addr()+"/v1/workloads", "application/yaml", strings.NewReader(fmt.Sprintf(benchWorkload, name, 1)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("register %s: %s", name, resp.Status)
		}
		codes := make(chan int, purgers)
		var wg sync.WaitGroup
		for i := range purgers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := "/v1/workloads/" + name
				if i%2 == 1 {
					path += "?purge=true"
				}
				// Stops first, purges after: a stop that finds the
				// workload is ordered before the purge that removes it.
				req, _ := http.NewRequest(http.MethodDelete, s.Addr()+path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if i%2 == 1 {
					codes <- resp.StatusCode
				}
			}()
		}
		wg.Wait()
		close(codes)
		found := 0
		for c := range codes {
			switch c {
			case http.StatusOK:
				found++
			case http.StatusNotFound:
			default:
				t.Fatalf("round %d: purge answered %d", round, c)
			}
		}
		if found != 1 {
			t.Fatalf("round %d: %d of %d concurrent purges answered 200, want exactly 1", round, found, purgers/2)
		}
		waitEvalsSettled(t, s, name)
	}
}
