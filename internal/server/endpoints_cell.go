package server

import (
	"net/http"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleGetCellConfig returns the cell configuration (blocking queries
// supported); the empty configuration when none was set.
func (s *Server) handleGetCellConfig(w http.ResponseWriter, r *http.Request) {
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		return snap.CellConfig(), snap.TableIndex(ws, state.TableConfig), nil
	})
}

// handleSetCellConfig replaces the cell configuration with a CellConfig
// document (YAML or JSON), validated like a workload: a bad one writes
// nothing and gets a 400 naming every field.
func (s *Server) handleSetCellConfig(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	cfg, err := spec.ParseCellConfig(body)
	if err != nil {
		he := specError(err).(*httpError)
		he.code = "invalid-cell-config"
		s.fail(w, he)
		return
	}
	idx, err := s.propose(&fsm.SetCellConfig{Config: cfg, Time: s.cfg.Now()})
	if err != nil {
		s.fail(w, err)
		return
	}
	cfg.ModifyIndex = idx
	writeJSON(w, http.StatusOK, cfg)
}

// windowNotices lists the time windows a workload's rules name that the
// cell does not define: such rules apply at all times, and the user should
// know.
func windowNotices(wl *api.Workload, cfg *api.CellConfig) []api.Notice {
	var out []api.Notice
	seen := map[string]bool{}
	for gi, g := range wl.Groups {
		for _, list := range []struct {
			name  string
			rules []api.LabelRule
		}{{"prefer", g.Placement.Prefer}, {"avoid", g.Placement.Avoid}} {
			for ri, r := range list.rules {
				if r.Window == "" || cfg.Window(r.Window) != nil || seen[r.Window] {
					continue
				}
				seen[r.Window] = true
				n := api.Notice{
					Field:   "spec.groups[" + itoa(gi) + "].placement." + list.name + "[" + itoa(ri) + "].window",
					Value:   r.Window,
					Message: spec.UndefinedWindowNotice(r.Window),
				}
				if r.Source != "" { // mapped from the seed's placementConstraints
					n.Field = "spec.placementConstraints." + r.Key
					n.Value = strings.TrimPrefix(r.Source, r.Key+": ")
				}
				out = append(out, n)
			}
		}
	}
	return out
}
