package fsm

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// TestCommandEffects: what each command asks of the loops once applied —
// the evaluations to enqueue, whether capacity changed, whether a
// deployment failed, the join token to write — is decided by its table
// entry from its body.
func TestCommandEffects(t *testing.T) {
	e1, e2 := fsmEval("e1", "low"), fsmEval("e2", "low")
	tests := []struct {
		name string
		body any
		want Effects
	}{
		{"a registration's evaluation", &UpsertWorkload{Eval: e1}, Effects{Evals: []*api.Evaluation{e1}}},
		{"a stop's evaluation", &StopWorkload{Eval: e1}, Effects{Evals: []*api.Evaluation{e1}}},
		{"a node registers: capacity", &UpsertNode{Evals: []*api.Evaluation{e1}}, Effects{Evals: []*api.Evaluation{e1}, Unblock: true}},
		{"a node back ready: capacity", &NodeStatus{Status: api.NodeReady}, Effects{Unblock: true}},
		{"a node down: its evaluations", &NodeStatus{Status: api.NodeDown, Evals: []*api.Evaluation{e1}}, Effects{Evals: []*api.Evaluation{e1}}},
		{"evaluations", &UpsertEvals{Evals: []*api.Evaluation{e1, e2}}, Effects{Evals: []*api.Evaluation{e1, e2}}},
		{"a plan that stops frees capacity", &ApplyPlan{Stop: []api.StopRequest{{AllocID: "a1"}}, Evals: []*api.Evaluation{e1}},
			Effects{Evals: []*api.Evaluation{e1}, Unblock: true}},
		{"a plan that fails a deployment", &ApplyPlan{Deployment: &api.DeploymentProgress{Status: api.DeploymentFailed}},
			Effects{DeploymentFailed: true}},
		{"a report that an allocation finished", &AllocClientUpdate{Updates: []*api.AllocUpdate{{ClientStatus: api.AllocRunning}, {ClientStatus: api.AllocComplete}}},
			Effects{Unblock: true}},
		{"a report that allocations run", &AllocClientUpdate{Updates: []*api.AllocUpdate{{ClientStatus: api.AllocRunning}}}, Effects{}},
		{"uncordon", &NodeOp{Op: NodeOpEnable}, Effects{Unblock: true}},
		{"lift", &NodeOp{Op: NodeOpLift}, Effects{Unblock: true}},
		{"drain", &NodeOp{Op: NodeOpDrain, Evals: []*api.Evaluation{e1}}, Effects{Evals: []*api.Evaluation{e1}}},
		{"promote", &PromoteDeployment{Eval: e1}, Effects{Evals: []*api.Evaluation{e1}}},
		{"fail and revert", &FailDeployment{Eval: e1, Revert: &UpsertWorkload{Eval: e2}}, Effects{Evals: []*api.Evaluation{e1, e2}}},
		{"fail without an evaluation", &FailDeployment{}, Effects{}},
		{"a retry", &RetryEval{Eval: e1}, Effects{Evals: []*api.Evaluation{e1}}},
		{"the join token", &SetCellSecret{Name: state.CellSecretJoinToken, Value: "t"}, Effects{JoinToken: "t"}},
		{"another secret", &SetCellSecret{Name: "other", Value: "t"}, Effects{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := encodeEntry(t, tt.body)
			c, body, err := Commands.Decode(entry)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.effects(body); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("effects %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestFSMStaysDeterministic: the package reads no clock, draws no random
// number and imports neither raft nor net/http (doc.go).
func TestFSMStaysDeterministic(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]bool{"github.com/hashicorp/raft": true, "net/http": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if path := strings.Trim(imp.Path.Value, `"`); banned[path] {
				t.Errorf("%s imports %s", f, path)
			}
		}
		if strings.Contains(string(src), "time.Now") || strings.Contains(string(src), "time.Since") {
			t.Errorf("%s reads the clock", f)
		}
	}
}
