package sim

import "github.com/strata-dev/strata/internal/sim/trace"

// inflation submits pods one by one, never deleting any, and records the
// allocation after each.
func (e *engine) inflation(pods []trace.Pod) error {
	capa := e.c.Capacity().GPUMilli
	e.res.Submitted = len(pods)
	if !e.cfg.NoSeries {
		e.res.Series = make([]Point, 0, len(pods)+1)
		e.res.Series = append(e.res.Series, snapshot(e.c, 0, 0, capa, 0))
	}
	nextFrag := int64(0) // sample fragmentation every 1% of arrived GPU workload
	for i := range pods {
		if err := e.stopped(); err != nil {
			return err
		}
		p := &pods[i]
		_, ok, err := e.place(p)
		if err != nil {
			return err
		}
		if ok {
			e.res.Placed++
		} else {
			e.res.Failed++
		}
		e.arrivedGPU += p.GPURequestMilli()
		if !e.cfg.NoSeries {
			e.res.Series = append(e.res.Series, snapshot(e.c, int64(i+1), e.arrivedGPU, capa, 0))
			if e.arrivedGPU*100 >= nextFrag*capa {
				e.sampleFrag(int64(i + 1))
				nextFrag = e.arrivedGPU*100/max(capa, 1) + 1
			}
		}
		e.progress(i+1, len(pods))
	}
	e.res.EndTime = int64(len(pods))
	return nil
}
