package spec

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// Check, port and service defaults and bounds, documented in
// docs/workload-spec.md and docs/health.md.
const (
	DefaultCheckInterval         = 10 * time.Second
	DefaultCheckTimeout          = 2 * time.Second
	DefaultCheckSuccessThreshold = 1
	DefaultCheckFailureThreshold = 3
	DefaultCheckPurpose          = api.CheckReadiness
	DefaultHTTPCheckPath         = "/"

	// MinCheckInterval keeps a check from turning into a busy loop.
	MinCheckInterval = 100 * time.Millisecond
	// MaxCheckThreshold bounds success and failure thresholds.
	MaxCheckThreshold = 100
	// MaxChecks bounds the checks of one task or service.
	MaxChecks = 16
	// MaxPorts bounds the ports of one group; MaxServices its services.
	MaxPorts    = 32
	MaxServices = 16
	// MaxPort is the largest TCP port.
	MaxPort = 65535
	maxTags = 32
)

// PortEnv is the environment variable a task finds its port name in:
// STRATA_PORT_HTTP for "http", STRATA_PORT_ADMIN_API for "admin-api".
func PortEnv(name string) string {
	return "STRATA_PORT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// portRef is a check's or service's reference to a port name, checked once
// the group's ports are known.
type portRef struct {
	path string
	node *yaml.Node
	name string
}

// ports decodes a group's port list.
func (d *decoder) ports(path string, n *yaml.Node) []api.PortRequest {
	var out []api.PortRequest
	names := map[string]bool{}
	statics := map[int]string{}
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		if i == MaxPorts {
			d.fail(path, v, "at most %d ports per group", MaxPorts)
		}
		if i >= MaxPorts {
			return
		}
		var pr api.PortRequest
		var name *yaml.Node
		ok := d.fields(p, v, portKeys, func(key, fp string, fv *yaml.Node) bool {
			switch key {
			case "name":
				name = fv
				pr.Name = d.name(fp, fv)
			case "static":
				if s, ok := d.integer(fp, fv); ok {
					switch {
					case s < 1 || s > MaxPort:
						d.fail(fp, fv, "must be a port between 1 and %d, got %d", MaxPort, s)
					default:
						pr.Static = int(s)
						if other, dup := statics[pr.Static]; dup {
							d.fail(fp, fv, "port %d is already asked for by port %q", s, other)
						}
						statics[pr.Static] = pr.Name
					}
				}
			default:
				return false
			}
			return true
		})
		if !ok {
			return
		}
		if !present(name) {
			d.missing(join(p, "name"), v, "required")
		} else if pr.Name != "" && names[pr.Name] {
			d.fail(join(p, "name"), name, "duplicate port name %q", pr.Name)
		}
		names[pr.Name] = true
		out = append(out, pr)
	})
	return out
}

// checks decodes a task's or service's check list. forService refuses
// liveness checks, which have no task to restart, and defaults a
// check's port to the service's (defaultPort).
func (d *decoder) checks(path string, n *yaml.Node, forService bool, refs *[]portRef) []api.Check {
	var out []api.Check
	names := map[string]bool{}
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		if i == MaxChecks {
			d.fail(path, v, "at most %d checks", MaxChecks)
		}
		if i >= MaxChecks {
			return
		}
		c, ok := d.check(p, v, i, forService, refs)
		if !ok {
			return
		}
		if names[c.Name] {
			d.fail(join(p, "name"), v, "duplicate check name %q", c.Name)
		}
		names[c.Name] = true
		out = append(out, c)
	})
	return out
}

func (d *decoder) check(path string, n *yaml.Node, i int, forService bool, refs *[]portRef) (api.Check, bool) {
	c := api.Check{
		Purpose: DefaultCheckPurpose, Interval: DefaultCheckInterval, Timeout: DefaultCheckTimeout,
		SuccessThreshold: DefaultCheckSuccessThreshold, FailureThreshold: DefaultCheckFailureThreshold,
	}
	var typ, port, pathNode, command, interval, timeout *yaml.Node
	threshold := func(p string, v *yaml.Node, dst *int) {
		if t, ok := d.integer(p, v); ok {
			if t < 1 || t > MaxCheckThreshold {
				d.fail(p, v, "must be between 1 and %d, got %d", MaxCheckThreshold, t)
			} else {
				*dst = int(t)
			}
		}
	}
	ok := d.fields(path, n, checkKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			c.Name = d.name(p, v)
		case "type":
			typ = v
			if s, ok := d.str(p, v); ok {
				switch s {
				case api.CheckHTTP, api.CheckTCP, api.CheckExec:
					c.Type = s
				default:
					d.fail(p, v, "unknown check type %q (want %s, %s or %s)", s, api.CheckHTTP, api.CheckTCP, api.CheckExec)
				}
			}
		case "purpose":
			if s, ok := d.str(p, v); ok {
				switch {
				case s == api.CheckLiveness && forService:
					d.fail(p, v, "a service's checks are readiness checks; put a liveness check on a task")
				case s == api.CheckReadiness || s == api.CheckLiveness:
					c.Purpose = s
				default:
					d.fail(p, v, "unknown purpose %q (want %s or %s)", s, api.CheckReadiness, api.CheckLiveness)
				}
			}
		case "port":
			port = v
			c.Port, _ = d.str(p, v)
		case "path":
			pathNode = v
			c.Path, _ = d.str(p, v)
		case "command":
			command = v
			c.Command, _ = d.strings(p, v, false)
		case "interval":
			interval = v
			c.Interval, _ = d.duration(p, v)
		case "timeout":
			timeout = v
			c.Timeout, _ = d.duration(p, v)
		case "initialDelay":
			c.InitialDelay, _ = d.duration(p, v)
		case "successThreshold":
			threshold(p, v, &c.SuccessThreshold)
		case "failureThreshold":
			threshold(p, v, &c.FailureThreshold)
		default:
			return false
		}
		return true
	})
	if !ok {
		return c, false
	}
	if !present(typ) {
		d.missing(join(path, "type"), n, "required: %s, %s or %s", api.CheckHTTP, api.CheckTCP, api.CheckExec)
		return c, false
	}
	if c.Name == "" {
		c.Name = fmt.Sprintf("%s-%d", c.Type, i)
	}
	switch c.Type {
	case api.CheckHTTP, api.CheckTCP:
		switch {
		case present(port) && c.Port != "":
			*refs = append(*refs, portRef{join(path, "port"), port, c.Port})
		case present(port):
			d.fail(join(path, "port"), port, "must not be empty")
		case !forService:
			d.missing(join(path, "port"), n, "required for a %s check: the name of one of the group's ports", c.Type)
		}
		if present(command) {
			d.fail(join(path, "command"), command, "only for exec checks")
		}
		if c.Type == api.CheckHTTP {
			switch {
			case !present(pathNode):
				c.Path = DefaultHTTPCheckPath
			case !strings.HasPrefix(c.Path, "/"):
				d.fail(join(path, "path"), pathNode, "must start with /, got %.64q", c.Path)
			}
		} else if present(pathNode) {
			d.fail(join(path, "path"), pathNode, "only for http checks")
		}
	case api.CheckExec:
		switch {
		case !present(command):
			d.missing(join(path, "command"), n, `required for an exec check: the program and its arguments, e.g. ["/bin/test", "-f", "/tmp/ready"]`)
		case len(c.Command) == 0 || c.Command[0] == "":
			d.fail(join(path, "command"), command, "the program must not be empty")
		}
		if present(port) {
			d.fail(join(path, "port"), port, "only for http and tcp checks")
		}
		if present(pathNode) {
			d.fail(join(path, "path"), pathNode, "only for http checks")
		}
	}
	if present(interval) && c.Interval < MinCheckInterval {
		d.fail(join(path, "interval"), interval, "must be at least %s", MinCheckInterval)
	}
	switch {
	case present(timeout) && c.Timeout == 0:
		d.fail(join(path, "timeout"), timeout, "must be greater than zero")
	case c.Timeout > c.Interval && c.Interval >= MinCheckInterval:
		at := timeout
		if !present(at) {
			at = interval
		}
		d.fail(join(path, "timeout"), at, "must not be longer than interval (%s), got %s", c.Interval, c.Timeout)
	}
	return c, true
}

// services decodes a group's service list.
func (d *decoder) services(path string, n *yaml.Node, refs *[]portRef) []api.Service {
	var out []api.Service
	names := map[string]bool{}
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		if i == MaxServices {
			d.fail(path, v, "at most %d services per group", MaxServices)
		}
		if i >= MaxServices {
			return
		}
		var s api.Service
		var name, port, checks *yaml.Node
		ok := d.fields(p, v, serviceKeys, func(key, fp string, fv *yaml.Node) bool {
			switch key {
			case "name":
				name = fv
				s.Name = d.name(fp, fv)
			case "port":
				port = fv
				s.Port, _ = d.str(fp, fv)
			case "tags":
				s.Tags, _ = d.strings(fp, fv, true)
				if len(s.Tags) > maxTags {
					d.fail(fp, fv, "at most %d tags", maxTags)
				}
				for j, t := range s.Tags {
					if problem := checkLabelValue(t, false); problem != "" {
						d.fail(index(fp, j), fv, "%s", problem)
					}
				}
			case "labels":
				s.Labels = d.labels(fp, fv)
			case "checks":
				checks = fv
			default:
				return false
			}
			return true
		})
		if !ok {
			return
		}
		if !present(name) {
			d.missing(join(p, "name"), v, "required")
		} else if s.Name != "" && names[s.Name] {
			d.fail(join(p, "name"), name, "duplicate service name %q in the group", s.Name)
		}
		names[s.Name] = true
		switch {
		case !present(port):
			d.missing(join(p, "port"), v, "required: the name of one of the group's ports")
		case s.Port == "":
			d.fail(join(p, "port"), port, "must not be empty")
		default:
			*refs = append(*refs, portRef{join(p, "port"), port, s.Port})
		}
		s.Checks = d.checks(join(p, "checks"), checks, true, refs)
		for j := range s.Checks {
			c := &s.Checks[j]
			if c.Port == "" && c.Type != api.CheckExec {
				c.Port = s.Port // a service's http or tcp check probes its port
			}
		}
		out = append(out, s)
	})
	return out
}

// checkPortRefs reports references to ports the group does not declare.
func (d *decoder) checkPortRefs(ports []api.PortRequest, refs []portRef) {
	for _, r := range refs {
		found := false
		for _, p := range ports {
			found = found || p.Name == r.name
		}
		if !found {
			var names []string
			for _, p := range ports {
				names = append(names, p.Name)
			}
			want := "the group declares no ports: add one under ports"
			if len(names) > 0 {
				want = "want one of the group's ports: " + strings.Join(names, ", ")
			}
			d.fail(r.path, r.node, "unknown port %.64q; %s", r.name, want)
		}
	}
}

// checkIsolatedChecks refuses http and tcp checks on a task with its own
// network namespace: the agent probes the node's loopback, which is not
// the task's. An exec check still works.
func (d *decoder) checkIsolatedChecks(path string, n *yaml.Node, t *api.Task) {
	if t.Network != NetworkIsolated {
		return
	}
	for i, c := range t.Checks {
		if c.Type == api.CheckHTTP || c.Type == api.CheckTCP {
			d.missing(join(index(join(path, "checks"), i), "type"), n,
				"a %s check cannot reach a task with network %s (the agent probes the node's loopback); use an exec check", c.Type, NetworkIsolated)
		}
	}
}

// checkIsolatedPorts refuses ports on a group whose tasks all have their
// own network namespace: nothing could listen on the node's port.
func (d *decoder) checkIsolatedPorts(path string, n *yaml.Node, g *api.TaskGroup) {
	if len(g.Ports) == 0 || len(g.Tasks) == 0 {
		return
	}
	for _, t := range g.Tasks {
		if t.Network != NetworkIsolated {
			return
		}
	}
	d.missing(path, n, "every task of the group has network %s: no task can listen on a node port", NetworkIsolated)
}
