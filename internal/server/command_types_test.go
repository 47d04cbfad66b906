package server

import "testing"

// TestCommandTypesAreDistinct: each family of raft commands declares its
// type values in its own const block, so two families can claim one value
// without a compile error (the tenants' and the deployments' both took 96:
// creating a namespace was applied as promoting a deployment). Every value
// must decode in exactly one family, and every name be unique.
func TestCommandTypesAreDistinct(t *testing.T) {
	names := map[string]commandType{}
	for v := 1; v < 256; v++ {
		c := commandType(v)
		families := 0
		if c <= cmdNodeOp || c == cmdMigrate {
			families++
		}
		if newSecurityBody(c) != nil {
			families++
		}
		if newDeploymentBody(c) != nil {
			families++
		}
		if newGCBody(c) != nil {
			families++
		}
		if families > 1 {
			t.Errorf("command type %d (%s) is claimed by %d families", v, c, families)
		}
		if families == 0 {
			continue
		}
		if other, ok := names[c.String()]; ok {
			t.Errorf("command types %d and %d are both named %q", other, v, c)
		}
		names[c.String()] = c
	}
}
