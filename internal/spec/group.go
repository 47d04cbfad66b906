package spec

import (
	"math"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// Defaults, documented in docs/workload-spec.md.
const (
	DefaultReplicas     = 1
	DefaultDriver       = DriverExec
	DefaultKillTimeout  = 5 * time.Second
	DefaultPidsLimit    = 1024
	DefaultCPUMilli     = 100
	DefaultMemoryBytes  = 64 << 20
	DefaultRestartDelay = time.Second
	DefaultMaxDelay     = 30 * time.Second
	DefaultAttempts     = 3 // for on-failure; always defaults to 0, unlimited

	// MaxReplicas bounds one group, and the groups of one workload
	// together. It is far above any real workload and exists so that a
	// typo cannot ask the scheduler for 10^18 placements.
	MaxReplicas = 1_000_000
	// MaxKillTimeout bounds the grace between SIGTERM and SIGKILL: a stop
	// must end.
	MaxKillTimeout = time.Hour
	// MaxDuration bounds every other duration of a workload (restart
	// delays, gang timeouts): a week, so that clock arithmetic on them
	// never overflows and a typo does not park a group for centuries.
	MaxDuration = 7 * 24 * time.Hour
	// MaxPidsLimit is Linux's PID_MAX_LIMIT: no cgroup can hold more.
	MaxPidsLimit = 1 << 22
	// MaxShutdownDelay bounds a group's shutdownDelay: a stop should not
	// wait longer than clients take to follow the registry.
	MaxShutdownDelay = 10 * time.Minute
)

// Task drivers.
const (
	DriverExec = "exec"
	DriverMock = "mock"
	// DriverContainerd runs an OCI image; agents started with
	// --containerd-socket offer it, and the scheduler places such tasks
	// only on nodes that do (docs/drivers.md).
	DriverContainerd = "containerd"
)

func defaultRestartPolicy() api.RestartPolicy {
	return api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: DefaultAttempts, Delay: DefaultRestartDelay, MaxDelay: DefaultMaxDelay}
}

func (d *decoder) group(path string, n *yaml.Node) *api.TaskGroup {
	g := &api.TaskGroup{Replicas: DefaultReplicas, RestartPolicy: defaultRestartPolicy()}
	var name, tasks, minMember, replace, services, shutdownDelay *yaml.Node
	var updateFields map[string]*yaml.Node
	gangPath := join(path, "gang")
	ok := d.fields(path, n, groupKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			name = v
			g.Name = d.name(p, v)
		case "gang":
			if present(v) { // "gang:" with nothing after it is no gang
				g.Gang, minMember = d.gang(p, v)
			}
		case "replicas":
			if r, ok := d.integer(p, v); ok {
				switch {
				case r < 0:
					d.fail(p, v, "must be 0 or more, got %d", r)
				case r > MaxReplicas:
					d.fail(p, v, "must be at most %d, got %d", MaxReplicas, r)
				default:
					g.Replicas = int(r)
				}
			}
		case "restartPolicy":
			g.RestartPolicy = d.restartPolicy(p, v)
		case "placement":
			g.Placement = d.placement(p, v)
		case "reschedule":
			if present(v) {
				g.Reschedule = d.reschedule(p, v)
			}
		case "disconnect":
			if present(v) {
				g.Disconnect, replace = d.disconnect(p, v)
			}
		case "update":
			if present(v) {
				g.Update, updateFields = d.update(p, v)
			}
		case "atMostOnce":
			g.AtMostOnce, _ = d.boolean(p, v)
		case "disruption":
			if present(v) {
				g.Disruption = d.disruption(p, v)
			}
		case "tasks":
			tasks = v
		case "ports":
			g.Ports = d.ports(p, v)
		case "services":
			services = v
		case "shutdownDelay":
			shutdownDelay = v
			g.ShutdownDelay, _ = d.boundedDuration(p, v, MaxShutdownDelay)
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil
	}
	if !present(name) {
		d.missing(join(path, "name"), n, "required")
	}
	d.checkGang(gangPath, g, minMember)
	d.checkAtMostOnce(path, g, replace)
	defaultLifecycle(g)
	if g.Update == nil {
		p := api.DefaultUpdatePolicy()
		g.Update = &p
	}
	d.checkUpdate(join(path, "update"), g, updateFields)
	var refs []portRef
	d.refs = &refs
	g.Tasks = d.tasks(join(path, "tasks"), tasks, n)
	d.refs = nil
	g.Services = d.services(join(path, "services"), services, &refs)
	if !present(shutdownDelay) && len(g.Services) > 0 {
		g.ShutdownDelay = api.DefaultShutdownDelay
	}
	d.checkPortRefs(g.Ports, refs)
	d.checkIsolatedPorts(join(path, "ports"), n, g)
	d.checkGroupTotal(join(path, "tasks"), tasks, n, g)
	return g
}

// quantityKeys are the dimensions a task's resources write as a quantity
// of their unit, by key.
var quantityKeys = func() map[string]resources.Limit {
	out := map[string]resources.Limit{}
	for _, l := range resources.Limits {
		if l.Spec.Form == api.FormQuantity {
			out[l.Spec.Key] = l
		}
	}
	return out
}()

// checkGroupTotal refuses a group whose tasks together ask for more of a
// resource than one node may offer: every task is within bounds, but one
// allocation holds them all, and no node could ever take it.
func (d *decoder) checkGroupTotal(path string, tasks, parent *yaml.Node, g *api.TaskGroup) {
	if !present(tasks) {
		tasks = parent
	}
	total := g.Resources() // saturates; a saturated dimension is above every limit
	for _, v := range resources.OutOfRange(total) {
		got := v.Format(v.Of(total))
		if v.Of(total) == math.MaxInt64 {
			got = "more than int64 holds"
		}
		d.fail(path, tasks, "together the tasks ask for %s of %s, more than one node may offer (at most %s)",
			got, v.Name, v.Format(v.Max))
	}
}

// name decodes and checks a workload, group or task name.
func (d *decoder) name(path string, n *yaml.Node) string {
	s, ok := d.str(path, n)
	if !ok {
		return ""
	}
	if problem := checkName(s); problem != "" {
		d.fail(path, n, "%s", problem)
	}
	return s
}

// tasks decodes a group's task list (or the containers shorthand); parent
// is the node a "required" error points at when the list is missing.
func (d *decoder) tasks(path string, n, parent *yaml.Node) []*api.Task {
	var tasks []*api.Task
	names := map[string]bool{}
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		t := d.task(p, v)
		if t == nil {
			return
		}
		if t.Name != "" && names[t.Name] {
			d.fail(join(p, "name"), v, "duplicate task name %q", t.Name)
		}
		names[t.Name] = true
		tasks = append(tasks, t)
	})
	if len(tasks) == 0 && !d.exhausted {
		if present(n) {
			parent = n
		}
		d.missing(path, parent, "at least one task is required")
	}
	return tasks
}

func (d *decoder) task(path string, n *yaml.Node) *api.Task {
	t := &api.Task{
		Resources:   api.Resources{CPUMilli: DefaultCPUMilli, MemoryBytes: DefaultMemoryBytes},
		KillTimeout: DefaultKillTimeout,
		PidsLimit:   DefaultPidsLimit,
	}
	var name, driver, command, image, res *yaml.Node
	ok := d.fields(path, n, taskKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			name = v
			t.Name = d.name(p, v)
		case "driver":
			driver = v
			if s, ok := d.str(p, v); ok {
				switch s {
				case DriverExec, DriverMock, DriverContainerd, DriverMicroVM:
					t.Driver = s
				default:
					d.fail(p, v, "unknown driver %q (want %s, %s, %s or %s)", s, DriverExec, DriverMock, DriverContainerd, DriverMicroVM)
				}
			}
		case "command":
			command = v
			t.Command, _ = d.strings(p, v, false)
		case "env":
			d.env(p, v, t)
		case "user":
			if s, ok := d.str(p, v); ok {
				if problem := checkUser(s); problem != "" {
					d.fail(p, v, "%s", problem)
				}
				t.User = s
			}
		case "secrets":
			d.secrets(p, v, t)
		case "network":
			if s, ok := d.str(p, v); ok {
				switch s {
				case NetworkHost, NetworkIsolated:
					t.Network = s
				default:
					d.fail(p, v, "unknown network %q (want %s or %s)", s, NetworkHost, NetworkIsolated)
				}
			}
		case "workDir":
			t.WorkDir, _ = d.str(p, v)
		case "image":
			image = v
			t.Image, _ = d.str(p, v)
		case "resources":
			res = v
			d.resources(p, v, t)
		case "devices":
			t.Devices = d.devices(p, v)
		case "killTimeout":
			if v, ok := d.boundedDuration(p, v, MaxKillTimeout); ok {
				t.KillTimeout = v
			}
		case "checks":
			if d.refs != nil {
				t.Checks = d.checks(p, v, false, d.refs)
				break
			}
			var refs []portRef // a task outside a group (containers): no ports
			t.Checks = d.checks(p, v, false, &refs)
			d.checkPortRefs(nil, refs)
		case "pidsLimit":
			if l, ok := d.integer(p, v); ok {
				switch {
				case l < 1:
					d.fail(p, v, "must be at least 1, got %d", l)
				case l > MaxPidsLimit:
					d.fail(p, v, "must be at most %d (the kernel's PID_MAX_LIMIT), got %d", MaxPidsLimit, l)
				default:
					t.PidsLimit = l
				}
			}
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil
	}
	if !present(name) {
		d.missing(join(path, "name"), n, "required")
	}
	d.checkDriver(path, n, t, driver, command, image)
	d.checkIsolatedChecks(path, n, t)
	d.checkMicroVM(path, n, t, image, res)
	d.checkSecrets(path, n, t)
	d.checkResources(join(path, "resources"), res, n, t)
	d.checkDevices(path, n, t)
	return t
}

// checkDriver picks the default driver and checks what each driver needs.
// An image without a command means a container: it runs on the
// containerd driver, never as a host process.
func (d *decoder) checkDriver(path string, n *yaml.Node, t *api.Task, driver, command, image *yaml.Node) {
	if !present(driver) {
		t.Driver = DefaultDriver
		if t.Image != "" && len(t.Command) == 0 {
			t.Driver = DriverContainerd
		}
	}
	switch t.Driver {
	case DriverExec:
		switch {
		case !present(command):
			d.missing(join(path, "command"), n, `required for driver exec: the program and its arguments, e.g. ["/bin/sh", "-c", "echo hi"]`)
		case len(t.Command) == 0:
			// A wrong type was already reported; only an empty list is new.
			if c := deref(command); c.Kind == yaml.SequenceNode && len(c.Content) == 0 {
				d.fail(join(path, "command"), command, "must not be empty for driver exec")
			}
		case t.Command[0] == "":
			d.fail(index(join(path, "command"), 0), command, "the program must not be empty")
		}
		if t.Image != "" {
			d.notice(join(path, "image"), image, t.Image, "image is ignored by the exec driver, which runs command on the host; not yet enforced")
		}
	case DriverContainerd:
		if t.Image == "" {
			d.missing(join(path, "image"), n, "required for driver containerd")
		}
	}
}

func (d *decoder) resources(path string, n *yaml.Node, t *api.Task) {
	r := &t.Resources
	d.fields(path, n, resourceKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "cpu", "memory", "disk", "bandwidth":
			// A dimension written as a quantity of its unit (api.Dimensions).
			l := quantityKeys[key]
			if q, ok := d.quantity(p, v, l.Spec.Example); ok {
				if l.Spec.NonZero {
					d.positive(p, q, l.ParseRequest, l, l.Ptr(r))
				} else {
					d.parse(p, q, l.ParseRequest, l, l.Ptr(r))
				}
			}
		case "gpu":
			if q, ok := d.quantity(p, v, resources.GPULimit.Spec.Example); ok {
				whole, milli, err := resources.ParseGPU(q.Value)
				switch {
				case err != nil:
					d.fail(p, q, "%s", err)
				case resources.GPULimit.Check(whole) != "":
					d.fail(p, q, "%s", resources.GPULimit.Check(whole))
				default:
					r.GPUs, r.GPUMilli = whole, milli
				}
			}
		case "gpuModels":
			t.GPUModels, _ = d.strings(p, v, false)
			for i, m := range t.GPUModels {
				if m == "" {
					d.fail(index(p, i), v, "must not be empty")
				}
			}
		case "exclusiveCores":
			t.ExclusiveCores, _ = d.boolean(p, v)
		case "hugepages":
			d.hugePages(p, v, r)
		case "memoryTiers":
			t.MemoryTiers = d.memoryTiers(p, v)
		default:
			return false
		}
		return true
	})
}

// parse stores the parsed quantity q in dst or reports why it cannot: it
// does not parse, or it is beyond the dimension's limit.
func (d *decoder) parse(path string, q *yaml.Node, parse func(string) (int64, error), limit resources.Limit, dst *int64) bool {
	v, err := parse(q.Value)
	if err != nil {
		d.fail(path, q, "%s", err)
		return false
	}
	if problem := limit.Check(v); problem != "" {
		d.fail(path, q, "%s", problem)
		return false
	}
	*dst = v
	return true
}

// positive is parse for CPU and memory, where zero is refused: a zero
// memory limit kills the task at once and zero CPU starves it.
func (d *decoder) positive(path string, q *yaml.Node, parse func(string) (int64, error), limit resources.Limit, dst *int64) {
	var v int64
	if !d.parse(path, q, parse, limit, &v) {
		return
	}
	if v == 0 {
		d.fail(path, q, "must be greater than zero")
		return
	}
	*dst = v
}

// checkResources checks rules that span several resource fields.
func (d *decoder) checkResources(path string, res, task *yaml.Node, t *api.Task) {
	at := res
	if !present(at) {
		at = task
	}
	if t.ExclusiveCores && t.Resources.CPUMilli%1000 != 0 {
		d.fail(join(path, "cpu"), at, "exclusiveCores needs whole cores: cpu must be a multiple of 1000m, got %s",
			resources.FormatCPU(t.Resources.CPUMilli))
	}
	if len(t.GPUModels) > 0 && t.Resources.GPUs == 0 && t.Resources.GPUMilli == 0 {
		d.fail(join(path, "gpuModels"), at, "gpuModels needs a gpu request")
	}
}

func (d *decoder) restartPolicy(path string, n *yaml.Node) api.RestartPolicy {
	rp := defaultRestartPolicy()
	var attempts, delay, maxDelay *yaml.Node
	ok := d.fields(path, n, restartPolicyKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "mode":
			if s, ok := d.str(p, v); ok {
				switch s {
				case api.RestartNever, api.RestartOnFailure, api.RestartAlways:
					rp.Mode = s
				default:
					d.fail(p, v, "unknown restart mode %q (want %s, %s or %s)", s, api.RestartNever, api.RestartOnFailure, api.RestartAlways)
				}
			}
		case "attempts":
			attempts = v
			if a, ok := d.integer(p, v); ok {
				if a < 0 || a > 1_000_000 {
					d.fail(p, v, "must be between 0 and 1000000, got %d", a)
				} else {
					rp.Attempts = int(a)
				}
			}
		case "delay":
			delay = v
			var ok bool
			if rp.Delay, ok = d.duration(p, v); !ok {
				delay = nil // reported; do not also complain that it is zero
			}
		case "maxDelay":
			maxDelay = v
			rp.MaxDelay, _ = d.duration(p, v)
		default:
			return false
		}
		return true
	})
	if !ok {
		return rp
	}
	if !present(attempts) && rp.Mode != api.RestartOnFailure {
		rp.Attempts = 0 // never restarts; always restarts without limit
	}
	if rp.Mode == api.RestartNever && rp.Attempts > 0 {
		d.fail(join(path, "attempts"), attempts, "mode never does not restart: remove attempts or pick on-failure")
	}
	if rp.Mode != api.RestartNever && present(delay) && rp.Delay == 0 {
		// The backoff doubles the delay; from zero it would stay zero and a
		// crashing task would spin.
		d.fail(join(path, "delay"), delay, "must be greater than zero")
	}
	if !present(maxDelay) {
		rp.MaxDelay = max(rp.MaxDelay, rp.Delay)
	} else if rp.MaxDelay < rp.Delay {
		d.fail(join(path, "maxDelay"), maxDelay, "must not be shorter than delay (%s)", rp.Delay)
	}
	return rp
}
