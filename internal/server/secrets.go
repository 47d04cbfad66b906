package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/keyring"
)

// Secrets (docs/security.md, "Secrets"): a workload's secret values are
// sealed with the server's keyring at the API edge, before the workload
// enters the raft log, so the log, the snapshots and the state hold only
// ciphertext. Users are answered with neither the value nor the ciphertext
// (publicView); an agent asking for its node's allocations gets the values
// opened (agentAllocs). The FSM never sees a key: sealing happens before
// proposing, which keeps Apply deterministic.

// secretContext binds a sealed value to its place, so that a ciphertext
// copied to another workload's secret fails to open.
func secretContext(workload, group, task, name string) string {
	return "strata-secret\x00" + workload + "\x00" + group + "\x00" + task + "\x00" + name
}

// sealSecrets replaces every secret value of wl by its sealed form. A value
// equal to what old (the stored version) holds keeps its old sealed form:
// resubmitting an unchanged workload must not look like a new spec (which
// would replace its allocations).
func (s *Server) sealSecrets(wl, old *api.Workload) error {
	for _, g := range wl.Groups {
		for _, t := range g.Tasks {
			for _, sec := range t.Secrets {
				ctx := secretContext(wl.Name, g.Name, t.Name, sec.Name)
				if prev := findSecret(old, g.Name, t.Name, sec.Name); prev != nil && prev.Sealed != "" {
					if plain, err := s.keyring.Open(prev.Sealed, ctx); err == nil && string(plain) == sec.Value {
						sec.Sealed, sec.Value = prev.Sealed, ""
						continue
					}
				}
				sealed, err := s.keyring.Seal([]byte(sec.Value), ctx)
				if err != nil {
					return fmt.Errorf("seal secret %s of task %s: %w", sec.Name, t.Name, err)
				}
				sec.Sealed, sec.Value = sealed, ""
			}
		}
	}
	return nil
}

func findSecret(wl *api.Workload, group, task, name string) *api.Secret {
	if wl == nil {
		return nil
	}
	for _, g := range wl.Groups {
		if g.Name != group {
			continue
		}
		for _, t := range g.Tasks {
			if t.Name != task {
				continue
			}
			for _, sec := range t.Secrets {
				if sec.Name == name {
					return sec
				}
			}
		}
	}
	return nil
}

// agentAllocs is a node's allocations as its agent receives them: with
// secret values opened. serveBlocking sends no other type of answer with
// secret values.
type agentAllocs []*api.Allocation

// publicView returns what may be sent for v: for an agent's allocations,
// copies with their secrets opened; for anything holding a workload or an
// allocation, copies with every secret's value and ciphertext removed;
// anything else as it is. The stored objects are never modified.
func (s *Server) publicView(v any) (any, error) {
	switch v := v.(type) {
	case agentAllocs:
		out := make([]*api.Allocation, len(v))
		for i, a := range v {
			opened, err := s.openAlloc(a)
			if err != nil {
				return nil, err
			}
			out[i] = opened
		}
		return out, nil
	case *api.Allocation:
		return v.Redacted(), nil
	case []*api.Allocation:
		out := make([]*api.Allocation, len(v))
		for i, a := range v {
			out[i] = a.Redacted()
		}
		return out, nil
	case *api.Workload:
		return v.Redacted(), nil
	case []*api.Workload:
		out := make([]*api.Workload, len(v))
		for i, wl := range v {
			out[i] = wl.Redacted()
		}
		return out, nil
	case *api.WorkloadStatus:
		c := *v
		c.Workload = v.Workload.Redacted()
		return &c, nil
	}
	return v, nil
}

// openAlloc copies a with its secrets' values opened for its agent.
func (s *Server) openAlloc(a *api.Allocation) (*api.Allocation, error) {
	if a.TaskGroup == nil || !a.TaskGroup.HasSecrets() {
		return a, nil
	}
	g, err := a.TaskGroup.MapSecrets(func(t *api.Task, sec *api.Secret) error {
		plain, err := s.keyring.Open(sec.Sealed, secretContext(a.Workload, a.TaskGroup.Name, t.Name, sec.Name))
		if err != nil {
			return secretError(a, t, sec, err)
		}
		sec.Value, sec.Sealed = string(plain), ""
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := *a
	c.TaskGroup = g
	return &c, nil
}

func secretError(a *api.Allocation, t *api.Task, sec *api.Secret, err error) error {
	msg := fmt.Sprintf("allocation %s: secret %q of task %q of workload %q: %v", a.ID, sec.Name, t.Name, a.Workload, err)
	if errors.Is(err, keyring.ErrUnknownKey) {
		msg += " (every server of a cell needs the same keyring file; see docs/security.md)"
	}
	return &httpError{status: http.StatusInternalServerError, code: "secret-unavailable", msg: msg}
}
