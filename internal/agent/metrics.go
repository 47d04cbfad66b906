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
// at scrape time beside what the task was allocated, the node's capacity,
// the allocations the agent runs, and the tasks the OOM killer ended.
//
// Label cardinality: alloc, workload and task name what runs on this node
// now (a node runs tens to hundreds of tasks; a finished allocation's
// series end with it); the OOM counter keeps workload and task only.

var (
	taskCPUDesc = prometheus.NewDesc("strata_task_cpu_seconds_total",
		"CPU time a task's processes used, from its cgroup (cpu.stat usage_usec on v2, cpuacct.usage on v1).",
		[]string{"alloc", "workload", "task"}, nil)
	taskMemoryDesc = prometheus.NewDesc("strata_task_memory_bytes",
		"Memory a task's processes use now, from its cgroup (memory.current on v2, memory.usage_in_bytes on v1).",
		[]string{"alloc", "workload", "task"}, nil)
	agentAllocsDesc = prometheus.NewDesc("strata_agent_allocations",
		"Allocations the agent holds a runner for.", nil, nil)
	taskCPUAllocDesc = prometheus.NewDesc("strata_task_cpu_allocated_cores",
		"CPU the scheduler allocated to a task, in cores (its request).",
		[]string{"alloc", "workload", "task"}, nil)
	taskMemoryAllocDesc = prometheus.NewDesc("strata_task_memory_allocated_bytes",
		"Memory the scheduler allocated to a task (its request and cgroup limit).",
		[]string{"alloc", "workload", "task"}, nil)
	nodeCPUDesc = prometheus.NewDesc("strata_node_cpu_capacity_cores",
		"CPU the node offers to tasks, in cores.", nil, nil)
	nodeMemoryDesc = prometheus.NewDesc("strata_node_memory_capacity_bytes",
		"Memory the node offers to tasks.", nil, nil)
)

// newOOMKills is the counter of tasks the kernel's OOM killer ended.
func newOOMKills() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_task_oom_kills_total",
		Help: "Task exits the kernel's OOM killer caused (the task hit its memory limit), by workload and task."},
		[]string{"workload", "task"})
}

// taskUsageCollector reads every running task's cgroup when scraped.
type taskUsageCollector struct{ a *Agent }

func (c taskUsageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- taskCPUDesc
	ch <- taskMemoryDesc
	ch <- agentAllocsDesc
	ch <- taskCPUAllocDesc
	ch <- taskMemoryAllocDesc
	ch <- nodeCPUDesc
	ch <- nodeMemoryDesc
}

func (c taskUsageCollector) Collect(ch chan<- prometheus.Metric) {
	c.a.mu.Lock()
	runners := make([]*allocRunner, 0, len(c.a.allocs))
	for _, ar := range c.a.allocs {
		runners = append(runners, ar)
	}
	c.a.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(agentAllocsDesc, prometheus.GaugeValue, float64(len(runners)))
	capacity := c.a.Node().Capacity
	ch <- prometheus.MustNewConstMetric(nodeCPUDesc, prometheus.GaugeValue, float64(capacity.CPUMilli)/1000)
	ch <- prometheus.MustNewConstMetric(nodeMemoryDesc, prometheus.GaugeValue, float64(capacity.MemoryBytes))
	for _, ar := range runners {
		ar.mu.Lock()
		workload := ar.alloc.Workload
		id := ar.alloc.ID
		ar.mu.Unlock()
		for _, tr := range ar.tasks {
			res := tr.allocated()
			ch <- prometheus.MustNewConstMetric(taskCPUAllocDesc, prometheus.GaugeValue, float64(res.CPUMilli)/1000, id, workload, tr.cfg.Name)
			ch <- prometheus.MustNewConstMetric(taskMemoryAllocDesc, prometheus.GaugeValue, float64(res.MemoryBytes), id, workload, tr.cfg.Name)
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
	reg.MustRegister(taskUsageCollector{a}, a.oomKills, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
