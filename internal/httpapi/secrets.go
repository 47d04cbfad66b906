package httpapi

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// Secrets (docs/security.md, "Secrets"): a workload's secret values are
// sealed with the server's keyring at the API edge, before the workload
// enters the raft log, so the log, the snapshots and the state hold only
// ciphertext. Users are answered with neither the value nor the ciphertext
// (views.go); an agent asking for its node's allocations gets the values
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
func (s *API) sealSecrets(wl, old *api.Workload) error {
	for _, g := range wl.Groups {
		for _, t := range g.Tasks {
			for _, sec := range t.Secrets {
				ctx := secretContext(wl.Name, g.Name, t.Name, sec.Name)
				if prev := findSecret(old, g.Name, t.Name, sec.Name); prev != nil && prev.Sealed != "" {
					if plain, err := s.cfg.Keyring.Open(prev.Sealed, ctx); err == nil && string(plain) == sec.Value {
						sec.Sealed, sec.Value = prev.Sealed, ""
						continue
					}
				}
				sealed, err := s.cfg.Keyring.Seal([]byte(sec.Value), ctx)
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
		if g.Name == group {
			return findSecretIn(g, task, name)
		}
	}
	return nil
}

// findSecretIn is secret name of task in group g, or nil.
func findSecretIn(g *api.TaskGroup, task, name string) *api.Secret {
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
	return nil
}
