package api

// Secret values never leave the control plane toward a user: these copies
// are what every API answer and CLI output shows (docs/security.md).

// HasSecrets reports whether any task of the group has secrets.
func (g *TaskGroup) HasSecrets() bool {
	for _, t := range g.Tasks {
		if len(t.Secrets) > 0 {
			return true
		}
	}
	return false
}

// MapSecrets returns a copy of g in which each task with secrets holds
// copies of them passed through f; g itself is never modified. A group
// without secrets is returned as it is.
func (g *TaskGroup) MapSecrets(f func(t *Task, s *Secret) error) (*TaskGroup, error) {
	if g == nil || !g.HasSecrets() {
		return g, nil
	}
	c := *g
	c.Tasks = make([]*Task, len(g.Tasks))
	for i, t := range g.Tasks {
		tc := *t
		if len(t.Secrets) > 0 {
			tc.Secrets = make([]*Secret, len(t.Secrets))
			for j, s := range t.Secrets {
				sc := *s
				if err := f(&tc, &sc); err != nil {
					return nil, err
				}
				tc.Secrets[j] = &sc
			}
		}
		c.Tasks[i] = &tc
	}
	return &c, nil
}

func redactSecret(_ *Task, s *Secret) error {
	s.Value, s.Sealed = "", ""
	return nil
}

// Redacted returns wl, or a copy of it whose secrets keep their names and
// environment variables but lose their values and sealed forms.
func (wl *Workload) Redacted() *Workload {
	if wl == nil {
		return nil
	}
	var c *Workload
	for i, g := range wl.Groups {
		if !g.HasSecrets() {
			continue
		}
		if c == nil {
			cp := *wl
			cp.Groups = append([]*TaskGroup(nil), wl.Groups...)
			c = &cp
		}
		c.Groups[i], _ = g.MapSecrets(redactSecret)
	}
	if c == nil {
		return wl
	}
	return c
}

// Redacted returns a, or a copy of it whose group's secrets lose their
// values and sealed forms.
func (a *Allocation) Redacted() *Allocation {
	if a == nil || a.TaskGroup == nil || !a.TaskGroup.HasSecrets() {
		return a
	}
	c := *a
	c.TaskGroup, _ = a.TaskGroup.MapSecrets(redactSecret)
	return &c
}
