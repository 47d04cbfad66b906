package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

const secretWorkload = `apiVersion: strata.dev/v1
kind: Workload
metadata: {name: w}
spec:
  groups:
    - name: g
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 100m, memory: 64Mi}
          env:
            PLAIN: visible-value
            DB_PASSWORD: {secret: %s}
          secrets:
            - name: tls-key
              value: %s
`

func register(t *testing.T, s *Server, body string) {
	t.Helper()
	resp, err := http.Post(s.Addr()+"/v1/workloads", "application/yaml", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("register: %d %s", resp.StatusCode, b)
	}
}

func get(t *testing.T, s *Server, path string) string {
	t.Helper()
	return getAs(t, s, "", path)
}

// getAs is get as node (with its test secret); "" is a user.
func getAs(t *testing.T, s *Server, node, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Addr()+path, nil)
	if node != "" {
		req.Header.Set(api.HeaderNodeID, node)
		req.Header.Set(api.HeaderNodeSecret, testNodeSecret(node))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestSecretsReturnedByNoAPI reproduces issue 8's defect: a task's env was
// returned by GET /v1/workloads/{name} and GET /v1/allocations. Secret
// values and their ciphertext must appear in no user-facing answer, in no
// file of the data dir (raft log, snapshots) and in no snapshot download;
// only the agent of the allocation's node gets them.
func TestSecretsReturnedByNoAPI(t *testing.T) {
	dir := t.TempDir()
	s := quietServerIn(t, dir)
	addNode(t, s, "node-1")
	envSecret, fileSecret := "env-s3cret-4417", "file-s3cret-9982"
	register(t, s, fmt.Sprintf(secretWorkload, envSecret, fileSecret))
	var alloc *api.Allocation
	waitFor(t, 10*time.Second, "the allocation", func() error {
		if as := s.State().Snapshot().AllocsByWorkload("", "w"); len(as) == 1 {
			alloc = as[0]
			return nil
		}
		return fmt.Errorf("no allocation yet")
	})
	stored := s.State().Snapshot().Workload("", "w").Groups[0].Tasks[0]
	if len(stored.Secrets) != 2 || stored.Secrets[0].Value != "" || !strings.Contains(stored.Secrets[0].Sealed, ":") {
		t.Fatalf("stored secrets %+v: want sealed values only", stored.Secrets)
	}
	sealed := stored.Secrets[0].Sealed
	forbidden := []string{envSecret, fileSecret, sealed, `"sealed"`}

	for _, path := range []string{
		"/v1/workloads", "/v1/workloads/w", "/v1/workloads/w/allocations", "/v1/workloads/w/evaluations",
		"/v1/allocations", "/v1/allocations?workload=w", "/v1/allocations/" + alloc.ID, "/v1/allocations/" + alloc.ID[:8],
		"/v1/evaluations", "/v1/events", "/v1/nodes/node-1",
	} {
		body := get(t, s, path)
		for _, f := range forbidden {
			if strings.Contains(body, f) {
				t.Errorf("GET %s shows %q:\n%.400s", path, f, body)
			}
		}
	}
	if body := get(t, s, "/v1/workloads/w"); !strings.Contains(body, "DB_PASSWORD") || !strings.Contains(body, "visible-value") {
		t.Errorf("the workload no longer names its secrets or plain env: %.400s", body)
	}

	snapshot := get(t, s, "/v1/operator/snapshot")
	if strings.Contains(snapshot, envSecret) || strings.Contains(snapshot, fileSecret) {
		t.Error("a snapshot holds a secret in plaintext")
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, f := range []string{envSecret, fileSecret} {
			if bytes.Contains(data, []byte(f)) {
				t.Errorf("%s holds secret %q in plaintext", path, f)
			}
		}
		return nil
	})

	agentView := getAs(t, s, "node-1", "/v1/agent/nodes/node-1/allocations")
	if !strings.Contains(agentView, envSecret) || !strings.Contains(agentView, fileSecret) || strings.Contains(agentView, `"sealed"`) {
		t.Errorf("the agent does not get its task's secrets opened: %.600s", agentView)
	}
	if again := s.State().Snapshot().Workload("", "w").Groups[0].Tasks[0].Secrets[0]; again.Sealed != sealed || again.Value != "" {
		t.Error("answering a request changed the stored secret")
	}
}

// TestResubmitKeepsSealedValueUnlessChanged: the same secret sealed again
// would differ (a fresh nonce) and look like a new spec to the scheduler.
func TestResubmitKeepsSealedValueUnlessChanged(t *testing.T) {
	s := quietServer(t)
	sealed := func() []string {
		var out []string
		for _, sec := range s.State().Snapshot().Workload("", "w").Groups[0].Tasks[0].Secrets {
			out = append(out, sec.Sealed)
		}
		return out
	}
	register(t, s, fmt.Sprintf(secretWorkload, "a", "b"))
	first := sealed()
	register(t, s, fmt.Sprintf(secretWorkload, "a", "b"))
	second := sealed()
	register(t, s, fmt.Sprintf(secretWorkload, "a", "changed"))
	third := sealed()
	if first[0] != second[0] || first[1] != second[1] {
		t.Errorf("unchanged secrets sealed anew: %v then %v", first, second)
	}
	if third[0] != first[0] || third[1] == first[1] {
		t.Errorf("after changing one secret: %v, from %v", third, first)
	}
}

// TestPlanOfAnUnchangedWorkloadWithSecrets reproduces issue 18's defect
// 12: `strata plan` of the stored document reported the workload's
// secrets as a destructive update (the plan compared the submitted
// plaintext with the stored ciphertext), though running it changes
// nothing. A plan must see the spec a run would register; a changed
// secret is a destructive change that shows neither value nor ciphertext.
func TestPlanOfAnUnchangedWorkloadWithSecrets(t *testing.T) {
	s := quietServer(t)
	addNode(t, s, "node-1")
	doc := fmt.Sprintf(secretWorkload, "env-s3cret", "file-s3cret")
	register(t, s, doc)
	waitFor(t, 10*time.Second, "the allocation", func() error {
		if as := s.State().Snapshot().AllocsByWorkload("", "w"); len(as) != 1 {
			return fmt.Errorf("%d allocations", len(as))
		}
		return nil
	})
	cl := api.NewClient(s.Addr())
	plan := func(doc string) (*api.PlanResponse, string) {
		t.Helper()
		resp, err := http.Post(s.Addr()+"/v1/workloads/plan", "application/yaml", strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("plan: %d %s", resp.StatusCode, body)
		}
		p, err := cl.PlanWorkload(context.Background(), []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return p, string(body)
	}
	sealed := s.State().Snapshot().Workload("", "w").Groups[0].Tasks[0].Secrets[0].Sealed

	same, body := plan(doc)
	if len(same.Diff) != 0 || len(same.Stops) != 0 || same.Groups[0].Place != 0 || same.Groups[0].InPlace != 1 {
		t.Errorf("plan of the stored document: diff %+v, %d stops, groups %+v; want no change", same.Diff, len(same.Stops), same.Groups)
	}
	changed, body2 := plan(fmt.Sprintf(secretWorkload, "env-s3cret", "file-s3cret-new"))
	destructive := false
	for _, d := range changed.Diff {
		destructive = destructive || d.Destructive
	}
	if !destructive || changed.Groups[0].Place != 1 {
		t.Errorf("plan with a changed secret: diff %+v, groups %+v; want a destructive change that replaces the allocation", changed.Diff, changed.Groups)
	}
	for _, b := range []string{body, body2} {
		for _, f := range []string{"env-s3cret", "file-s3cret", sealed, `"sealed"`} {
			if strings.Contains(b, f) {
				t.Errorf("a plan's answer shows %q: %.600s", f, b)
			}
		}
	}
}
