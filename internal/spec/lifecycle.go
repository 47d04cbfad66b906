package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// The server's replacement policies of a group: reschedule (failed
// allocations), disconnect (allocations of a silent node) and atMostOnce.
// Defaults and rules are in docs/workload-spec.md.

// MaxRescheduleAttempts bounds reschedule.attempts.
const MaxRescheduleAttempts = 1_000_000

var delayFunctions = []string{api.DelayConstant, api.DelayExponential, api.DelayFibonacci}

// reschedule decodes a group's reschedule block. Writing one starts from
// the general defaults (3 in 1h), whatever the restart mode.
func (d *decoder) reschedule(path string, n *yaml.Node) *api.ReschedulePolicy {
	p := api.DefaultReschedulePolicy(api.RestartOnFailure)
	var attempts, interval, delay, maxDelay, unlimited *yaml.Node
	ok := d.fields(path, n, rescheduleKeys, func(key, fp string, v *yaml.Node) bool {
		switch key {
		case "attempts":
			attempts = v
			if a, ok := d.integer(fp, v); ok {
				if a < 0 || a > MaxRescheduleAttempts {
					d.fail(fp, v, "must be between 0 and %d, got %d", MaxRescheduleAttempts, a)
				} else {
					p.Attempts = int(a)
				}
			}
		case "interval":
			interval = v
			var ok bool
			if p.Interval, ok = d.duration(fp, v); !ok {
				interval = nil // reported; no second complaint
			}
		case "delay":
			delay = v
			p.Delay, _ = d.duration(fp, v)
		case "delayFunction":
			if s, ok := d.str(fp, v); ok {
				if !oneOfStrings(s, delayFunctions) {
					d.fail(fp, v, "unknown delay function %.64q (want constant, exponential or fibonacci)", s)
				} else {
					p.DelayFunction = s
				}
			}
		case "maxDelay":
			maxDelay = v
			var ok bool
			if p.MaxDelay, ok = d.duration(fp, v); !ok {
				maxDelay, p.MaxDelay = nil, api.DefaultRescheduleMaxDelay
			}
		case "unlimited":
			unlimited = v
			p.Unlimited, _ = d.boolean(fp, v)
		default:
			return false
		}
		return true
	})
	if !ok {
		return &p
	}
	if p.Unlimited {
		for _, f := range []struct {
			name string
			n    *yaml.Node
		}{{"attempts", attempts}, {"interval", interval}} {
			if present(f.n) {
				d.fail(join(path, f.name), f.n, "unlimited ignores %s: remove one of them", f.name)
			}
		}
		if p.Delay == 0 {
			d.fail(join(path, "delay"), orNode(delay, unlimited), "unlimited needs a delay greater than zero, or a failing replica would be replaced in a tight loop")
		}
	}
	if !p.Unlimited && p.Attempts > 0 && p.Interval == 0 && present(interval) {
		d.fail(join(path, "interval"), interval, "must be greater than zero when attempts is (attempts count within the interval)")
	}
	if !present(maxDelay) {
		p.MaxDelay = max(p.MaxDelay, p.Delay)
	} else if p.MaxDelay < p.Delay {
		d.fail(join(path, "maxDelay"), maxDelay, "must not be shorter than delay (%s)", FormatDuration(p.Delay))
	}
	return &p
}

var reconcileChoices = []string{api.KeepOriginal, api.KeepReplacement}

// disconnect decodes a group's disconnect block.
func (d *decoder) disconnect(path string, n *yaml.Node) (*api.DisconnectPolicy, *yaml.Node) {
	p := api.DefaultDisconnectPolicy()
	var replace *yaml.Node
	d.fields(path, n, disconnectKeys, func(key, fp string, v *yaml.Node) bool {
		switch key {
		case "lostAfter":
			p.LostAfter, _ = d.duration(fp, v)
		case "replace":
			replace = v
			p.Replace, _ = d.boolean(fp, v)
		case "reconcile":
			if s, ok := d.str(fp, v); ok {
				if !oneOfStrings(s, reconcileChoices) {
					d.fail(fp, v, "unknown choice %.64q (want keep-original or keep-replacement)", s)
				} else {
					p.Reconcile = s
				}
			}
		case "stopAfter":
			p.StopAfter, _ = d.duration(fp, v)
		default:
			return false
		}
		return true
	})
	if present(replace) && !p.Replace && p.LostAfter == 0 {
		d.fail(join(path, "replace"), replace, "replace: false needs lostAfter: a lost allocation is always replaced, and with lostAfter 0 it is lost at once")
	}
	return &p, replace
}

// checkAtMostOnce applies the at-most-once rules: never a replacement while
// a copy may still run, so replace is off.
func (d *decoder) checkAtMostOnce(path string, g *api.TaskGroup, replace *yaml.Node) {
	if !g.AtMostOnce {
		return
	}
	if g.Disconnect == nil {
		p := api.DefaultDisconnectPolicy()
		g.Disconnect = &p
	}
	if present(replace) && g.Disconnect.Replace {
		d.fail(join(join(path, "disconnect"), "replace"), replace,
			"an atMostOnce group is never replaced while its copy may still run: remove replace or set it to false")
	}
	g.Disconnect.Replace = false
	g.Disconnect.Reconcile = api.KeepOriginal
}

// defaultLifecycle fills the policies a group did not write, so that the
// stored workload says what applies.
func defaultLifecycle(g *api.TaskGroup) {
	if g.Reschedule == nil {
		p := api.DefaultReschedulePolicy(g.RestartPolicy.Mode)
		g.Reschedule = &p
	}
	if g.Disconnect == nil {
		p := api.DefaultDisconnectPolicy()
		g.Disconnect = &p
	}
}

func orNode(a, b *yaml.Node) *yaml.Node {
	if present(a) {
		return a
	}
	return b
}

func oneOfStrings(s string, choices []string) bool {
	for _, c := range choices {
		if s == c {
			return true
		}
	}
	return false
}
