package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleGetCellConfig returns the cell configuration (blocking queries
// supported); the empty configuration when none was set.
func (s *API) handleGetCellConfig(w http.ResponseWriter, r *http.Request) error {
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		return snap.CellConfig(), snap.TableIndex(ws, state.TableConfig), nil
	})
}

// handleSetCellConfig replaces the cell configuration with a CellConfig
// document (YAML or JSON), validated like a workload: a bad one writes
// nothing and gets a 400 naming every field.
func (s *API) handleSetCellConfig(w http.ResponseWriter, r *http.Request) error {
	body, err := route.ReadBody(w, r)
	if err != nil {
		return err
	}
	cfg, err := spec.ParseCellConfig(body)
	if err != nil {
		he := specError(err).(*route.Error)
		he.Code = "invalid-cell-config"
		return he
	}
	idx, err := s.propose(&fsm.SetCellConfig{Config: cfg, Time: s.cfg.Now()})
	if err != nil {
		return err
	}
	cfg.ModifyIndex = idx
	route.WriteJSON(w, http.StatusOK, cfg)
	return nil
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
					Field:   "spec.groups[" + strconv.Itoa(gi) + "].placement." + list.name + "[" + strconv.Itoa(ri) + "].window",
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
