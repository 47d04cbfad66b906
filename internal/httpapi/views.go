package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/keyring"
)

// What an answer may show. Stored objects are shared with the store and
// hold secrets sealed and migration tokens; an answer shows each as its
// reader may see it, on copies:
//
//   - users: no secret's value or ciphertext, no migration token;
//   - an agent, its node's allocations: secrets opened, tokens kept (it
//     is a migration's source or target).

// agentAllocs is a node's allocations as its agent receives them: with
// secret values opened. serveBlocking sends no other type of answer with
// secret values.
type agentAllocs []*api.Allocation

// publicView returns what may be sent for v: for an agent's allocations,
// copies with their secrets opened; for anything holding a workload or an
// allocation, copies with every secret's value and ciphertext removed;
// anything else as it is. The stored objects are never modified.
func (s *API) publicView(v any) (any, error) {
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
func (s *API) openAlloc(a *api.Allocation) (*api.Allocation, error) {
	if a.TaskGroup == nil || !a.TaskGroup.HasSecrets() {
		return a, nil
	}
	g, err := a.TaskGroup.MapSecrets(func(t *api.Task, sec *api.Secret) error {
		plain, err := s.cfg.Keyring.Open(sec.Sealed, secretContext(a.Workload, a.TaskGroup.Name, t.Name, sec.Name))
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
	return &route.Error{Status: http.StatusInternalServerError, Code: "secret-unavailable", Msg: msg}
}

// redactAllocs hides migration tokens from the public API: only the agents
// of a migration read them (agent endpoints). Allocations are shared with
// the store, so those with a token are copied.
func redactAllocs(allocs []*api.Allocation) []*api.Allocation {
	var out []*api.Allocation
	for i, a := range allocs {
		if a.Migration == nil || a.Migration.Token == "" {
			continue
		}
		if out == nil {
			out = append([]*api.Allocation(nil), allocs...)
		}
		out[i] = redactAlloc(a)
	}
	if out == nil {
		return allocs
	}
	return out
}

func redactAlloc(a *api.Allocation) *api.Allocation {
	if a == nil || a.Migration == nil || a.Migration.Token == "" {
		return a
	}
	c := a.Copy()
	c.Migration.Token = ""
	return c
}
