package schedplacer

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/scheduler/predictive"
	"github.com/strata-dev/strata/internal/sim/cluster"
)

var _ scheduler.ForecastReader = (*Placer)(nil)

// WithForecasts gives the predictive policy each node's forecast, by the
// node's index in the cluster (ok=false: none), and returns p. f is asked
// during placements and must not block.
func (p *Placer) WithForecasts(f func(node int) (api.NodeForecast, bool)) *Placer {
	p.forecast = f
	return p
}

// NodeForecast implements scheduler.ForecastReader.
func (p *Placer) NodeForecast(id string) (api.NodeForecast, bool) {
	i, ok := p.ids[id]
	if !ok || p.forecast == nil {
		return api.NodeForecast{}, false
	}
	return p.forecast(i)
}

// policiesFor is the plug-in policies of the server, configured like the
// simulator's FGD+ (fgdConfig): fgd, and predictive on the same
// configuration with the forecasts WithForecasts gave (none without).
func (p *Placer) policiesFor(c *cluster.Cluster) map[string]scheduler.Policy {
	cfg := fgdConfig(c, p.target)
	pc := &predictive.Config{GPU: cfg}
	if p.forecast != nil {
		pc.Forecasts = p
	}
	return map[string]scheduler.Policy{fgd.Name: fgd.New(cfg), predictive.Name: predictive.New(pc)}
}
