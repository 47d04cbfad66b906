package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// serviceClient is what a client of a service does in production: it
// watches the service registry (GET /v1/services/NAME, blocking queries)
// and sends its requests to the endpoints the latest list names, round
// robin, each on a new connection. It counts what failed and samples how
// many endpoints the registry listed.
type serviceClient struct {
	t       *testing.T
	api     *api.Client
	service string
	// lag is how long a new list takes to reach the requesters: a load
	// balancer that reloads its configuration, a cache, a DNS TTL. A
	// stopping replica must keep serving at least this long after it left
	// the registry (the group's shutdownDelay).
	lag    time.Duration
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu  sync.Mutex
	eps []api.ServiceEndpoint
	// measuring turns on the counts below (set once the service is whole).
	measuring bool
	minListed int
	lists     int      // registry answers that changed the list
	failures  []string // the first few failed requests, with their endpoint
	answers   map[string]int

	sent, failed atomic.Int64
}

// watchService starts a client of service with requesters goroutines
// each sending a request every pace, to lists that reach them lag after
// the registry answered them.
func (c *cell) watchService(service string, requesters int, pace, lag time.Duration) *serviceClient {
	ctx, cancel := context.WithCancel(context.Background())
	sc := &serviceClient{t: c.t, api: c.newClient(c.addr), service: service, cancel: cancel, lag: lag,
		minListed: -1, answers: map[string]int{}}
	sc.done.Add(1 + requesters)
	go sc.watch(ctx)
	for i := 0; i < requesters; i++ {
		go sc.request(ctx, i, pace)
	}
	c.t.Cleanup(sc.stop)
	return sc
}

func (sc *serviceClient) watch(ctx context.Context) {
	defer sc.done.Done()
	var index uint64
	for ctx.Err() == nil {
		eps, meta, err := sc.api.Service(ctx, sc.service, &api.Query{Index: index, Wait: 5 * time.Second})
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond) // back off a failing server, as a client would
			}
			continue
		}
		index = meta.Index
		if sc.lag > 0 {
			select {
			case <-time.After(sc.lag): // the list travels to the requesters
			case <-ctx.Done():
				return
			}
		}
		sc.mu.Lock()
		if !sameEndpoints(sc.eps, eps) {
			sc.eps = eps
			if sc.measuring {
				sc.lists++
				sc.minListed = min(sc.minListed, len(eps))
			}
		}
		sc.mu.Unlock()
	}
}

func sameEndpoints(a, b []api.ServiceEndpoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].AllocID != b[i].AllocID || a[i].Port != b[i].Port || a[i].Address != b[i].Address {
			return false
		}
	}
	return true
}

func (sc *serviceClient) request(ctx context.Context, worker int, pace time.Duration) {
	defer sc.done.Done()
	// A new connection per request: a listed endpoint that no longer
	// listens fails at once instead of hiding behind a pooled connection.
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for n := worker; ctx.Err() == nil; n++ {
		sc.mu.Lock()
		eps, measuring := sc.eps, sc.measuring
		sc.mu.Unlock()
		if len(eps) == 0 || !measuring {
			time.Sleep(pace)
			continue
		}
		ep := eps[n%len(eps)]
		body, err := get(ctx, httpc, fmt.Sprintf("http://%s:%d/", ep.Address, ep.Port))
		if ctx.Err() != nil {
			return
		}
		sc.sent.Add(1)
		sc.mu.Lock()
		if err != nil {
			sc.failed.Add(1)
			if len(sc.failures) < 10 {
				sc.failures = append(sc.failures, fmt.Sprintf("%s alloc %s on %s:%d: %v", time.Now().Format("15:04:05.000"), ep.AllocID, ep.Address, ep.Port, err))
			}
		} else {
			sc.answers[body]++
		}
		sc.mu.Unlock()
		time.Sleep(pace)
	}
}

func get(ctx context.Context, httpc *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return strings.TrimSpace(string(b)), nil
}

// listed is how many endpoints the latest list names.
func (sc *serviceClient) listed() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.eps)
}

// measure starts counting requests and sampling the list.
func (sc *serviceClient) measure() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.measuring, sc.minListed = true, len(sc.eps)
}

// answered returns how many requests each answer (the version) got.
func (sc *serviceClient) answered() map[string]int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := map[string]int{}
	for k, v := range sc.answers {
		out[k] = v
	}
	return out
}

// resetAnswers forgets the answers counted so far.
func (sc *serviceClient) resetAnswers() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.answers = map[string]int{}
}

// stop ends the client; it is idempotent.
func (sc *serviceClient) stop() {
	sc.cancel()
	sc.done.Wait()
}

// report is the client's counts: requests sent and failed, the fewest
// endpoints listed, and the first failures.
func (sc *serviceClient) report() (sent, failed int64, minListed, lists int, failures []string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.sent.Load(), sc.failed.Load(), sc.minListed, sc.lists, append([]string(nil), sc.failures...)
}
