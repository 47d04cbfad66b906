package agent

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-dev/strata/internal/agent/cgroup"
)

// The agent's Prometheus metrics, served at GET /metrics on its own API
// (docs/metrics.md): per-task CPU and memory read from the tasks' cgroups
// at scrape time, and the allocations the agent runs.

var (
	taskCPUDesc = prometheus.NewDesc("strata_task_cpu_seconds_total",
		"CPU time a task's processes used, from its cgroup (cpu.stat usage_usec on v2, cpuacct.usage on v1).",
		[]string{"alloc", "workload", "task"}, nil)
	taskMemoryDesc = prometheus.NewDesc("strata_task_memory_bytes",
		"Memory a task's processes use now, from its cgroup (memory.current on v2, memory.usage_in_bytes on v1).",
		[]string{"alloc", "workload", "task"}, nil)
	agentAllocsDesc = prometheus.NewDesc("strata_agent_allocations",
		"Allocations the agent holds a runner for.", nil, nil)
)

// taskUsageCollector reads every running task's cgroup when scraped.
type taskUsageCollector struct{ a *Agent }

func (c taskUsageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- taskCPUDesc
	ch <- taskMemoryDesc
	ch <- agentAllocsDesc
}

func (c taskUsageCollector) Collect(ch chan<- prometheus.Metric) {
	c.a.mu.Lock()
	runners := make([]*allocRunner, 0, len(c.a.allocs))
	for _, ar := range c.a.allocs {
		runners = append(runners, ar)
	}
	c.a.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(agentAllocsDesc, prometheus.GaugeValue, float64(len(runners)))
	for _, ar := range runners {
		ar.mu.Lock()
		workload := ar.alloc.Workload
		id := ar.alloc.ID
		ar.mu.Unlock()
		for _, tr := range ar.tasks {
			tr.mu.Lock()
			var dirs []string
			if tr.handle != nil {
				dirs = append(dirs, tr.handle.Cgroups...)
			}
			tr.mu.Unlock()
			if len(dirs) == 0 {
				continue // not started, or a driver without cgroups (mock)
			}
			u, err := cgroup.ReadUsage(dirs)
			if err != nil {
				ar.log.Warn("read task cgroup usage", "task", tr.cfg.Name, "err", err)
				continue
			}
			if u.HasCPU {
				ch <- prometheus.MustNewConstMetric(taskCPUDesc, prometheus.CounterValue, u.CPUSeconds, id, workload, tr.cfg.Name)
			}
			if u.HasMemory {
				ch <- prometheus.MustNewConstMetric(taskMemoryDesc, prometheus.GaugeValue, float64(u.MemoryBytes), id, workload, tr.cfg.Name)
			}
		}
	}
}

// metricsHandler serves the agent's registry.
func (a *Agent) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(taskUsageCollector{a}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
