package spec

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// Accepted document identity.
const (
	APIVersion = "strata.dev/v1"
	Kind       = "Workload"
	// SeedAPIVersion is the apiVersion of the example in the project's seed
	// document. It is accepted as an alias of APIVersion, with a notice.
	SeedAPIVersion = "internal.hyperscaler.com/v1alpha1"
)

// MaxDocumentBytes bounds the input of Parse; a server should also cap the
// request body before reading it.
const MaxDocumentBytes = 1 << 20

// NotEnforced is the message of a notice for a field that is stored but has
// no effect yet.
const NotEnforced = "accepted, not yet enforced"

// Parse decodes, defaults and validates one Workload document, YAML or JSON.
// On bad input the error is a *Errors listing every problem found; the
// returned Workload is then nil. Fields accepted but not acted on by this
// version are listed in the Workload's Unenforced notices.
func Parse(data []byte) (*api.Workload, error) {
	w, d, err := decode(data, (*decoder).workload)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(d.notices, func(a, b notice) int { return cmp.Compare(a.line, b.line) })
	for _, n := range d.notices {
		w.Unenforced = append(w.Unenforced, n.Notice)
	}
	return w, nil
}

// decode reads one document with build; on any problem the error is a
// *Errors sorted in document order and the result is the zero value.
func decode[T any](data []byte, build func(d *decoder, root *yaml.Node) T) (T, *decoder, error) {
	var zero T
	root, fe := parseYAML(data)
	if fe != nil {
		return zero, nil, &Errors{List: []FieldError{*fe}}
	}
	d := &decoder{}
	out := build(d, root)
	if len(d.errs.List) > 0 {
		d.errs.sortByLine()
		return zero, nil, &d.errs
	}
	return out, d, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseYAML reads exactly one YAML document and returns its root node.
func parseYAML(data []byte) (*yaml.Node, *FieldError) {
	if len(data) > MaxDocumentBytes {
		return nil, &FieldError{Message: "document larger than " + strconv.Itoa(MaxDocumentBytes) + " bytes"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{Message: "empty document: want a Workload"}
		}
		return nil, yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &FieldError{Message: "empty document: want a Workload"}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &FieldError{Message: "more than one YAML document: submit one Workload per file", Line: extra.Line}
	case !errors.Is(err, io.EOF):
		return nil, yamlError(err)
	}
	return doc.Content[0], nil
}

// yamlError keeps the parser's message, which already says "line N", and
// copies that line into the FieldError.
func yamlError(err error) *FieldError {
	fe := &FieldError{Message: err.Error()}
	if m := yamlLine.FindStringSubmatch(fe.Message); m != nil {
		fe.Line, _ = strconv.Atoi(m[1])
	}
	return fe
}

func (d *decoder) workload(root *yaml.Node) *api.Workload {
	w := &api.Workload{
		PriorityClass: DefaultPriorityClass,
		Priority:      PriorityFor(DefaultPriorityClass),
		// SchedulingPolicy stays empty unless given: the cell's default.
	}
	if root.Kind != yaml.MappingNode {
		d.fail("", root, "expected a mapping (a Workload document), got %s", describe(root))
		return w
	}
	var apiVersion, kind, metadata, spec *yaml.Node
	d.fields("", root, workloadKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "apiVersion":
			apiVersion = v
			if s, ok := d.str(p, v); ok {
				switch s {
				case APIVersion:
				case SeedAPIVersion:
					d.notice(p, v, s, "accepted as "+APIVersion)
				default:
					d.fail(p, v, "unsupported apiVersion %q (want %s)", s, APIVersion)
				}
			}
		case "kind":
			kind = v
			if s, ok := d.str(p, v); ok && s != Kind {
				d.fail(p, v, "unsupported kind %q (want %s)", s, Kind)
			}
		case "metadata":
			metadata = v
			d.metadata(p, v, w)
		case "spec":
			spec = v
		default:
			return false
		}
		return true
	})
	// A missing top-level field has no line of its own; line 1 keeps it at
	// the top of the sorted list, where the user will look for it.
	if !present(apiVersion) {
		d.report("apiVersion", 1, "required (want %s)", APIVersion)
	}
	if !present(kind) {
		d.report("kind", 1, "required (want %s)", Kind)
	}
	if !present(metadata) {
		d.report("metadata.name", 1, "required")
	}
	if !present(spec) {
		d.report("spec", 1, "required")
	} else {
		d.spec("spec", spec, w)
	}
	return w
}

func (d *decoder) metadata(path string, n *yaml.Node, w *api.Workload) {
	var name *yaml.Node
	ok := d.fields(path, n, metadataKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			name = v
			if s, ok := d.str(p, v); ok {
				w.Name = s
				if problem := checkName(s); problem != "" {
					d.fail(p, v, "%s", problem)
				}
			}
		case "namespace":
			// Left empty when absent: the server puts the workload in the
			// request's namespace (docs/tenants.md).
			if s, ok := d.str(p, v); ok {
				w.Namespace = s
				if problem := checkName(s); problem != "" {
					d.fail(p, v, "%s", problem)
				}
			}
		case "labels":
			w.Labels = d.labels(p, v)
		default:
			return false
		}
		return true
	})
	if ok && !present(name) {
		d.missing(join(path, "name"), n, "required")
	}
}

func (d *decoder) labels(path string, n *yaml.Node) map[string]string {
	labels := d.textMap(path, n, checkLabelKey)
	for k, v := range labels {
		if problem := checkLabelValue(v, true); problem != "" {
			d.fail(join(path, k), n, "%s", problem)
		}
	}
	return labels
}

func (d *decoder) spec(path string, n *yaml.Node, w *api.Workload) {
	var class, priority, groups, containers, constraints *yaml.Node
	ok := d.fields(path, n, specKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "priorityClass":
			class = v
		case "priority":
			priority = v
		case "schedulingPolicy":
			d.schedulingPolicy(p, v, w)
		case "groups":
			groups = v
		case "containers":
			containers = v
		case "placementConstraints":
			constraints = v
		default:
			return false
		}
		return true
	})
	if !ok {
		return
	}
	d.priority(path, class, priority, w)

	switch {
	case present(groups) && present(containers):
		d.fail(join(path, "containers"), containers, "groups and containers are mutually exclusive: containers is shorthand for a single group")
	case present(containers):
		if g := d.containers(join(path, "containers"), containers, w.Name); g != nil {
			w.Groups = []*api.TaskGroup{g}
		}
	case present(groups):
		w.Groups = d.groups(join(path, "groups"), groups)
		d.checkReplicaTotal(join(path, "groups"), groups, w.Groups)
	default:
		d.missing(join(path, "groups"), n, "required: at least one group (or the containers shorthand)")
	}
	if present(constraints) {
		d.placementConstraints(join(path, "placementConstraints"), constraints, w.Groups)
	}
}

// priority resolves the class and the optional integer refinement, which
// must stay inside the class's band.
func (d *decoder) priority(path string, classNode, priorityNode *yaml.Node, w *api.Workload) {
	if s, ok := d.str(join(path, "priorityClass"), classNode); ok {
		if _, _, known := PriorityRange(s); !known {
			d.fail(join(path, "priorityClass"), classNode, "unknown priority class %q (want %s, %s, %s or %s)",
				s, api.PrioritySystem, api.PriorityProduction, api.PriorityBatch, api.PriorityBestEffort)
			return
		}
		w.PriorityClass = s
		w.Priority = PriorityFor(s)
	}
	p := join(path, "priority")
	v, ok := d.integer(p, priorityNode)
	if !ok {
		return
	}
	lo, hi, _ := PriorityRange(w.PriorityClass)
	if v < int64(lo) || v > int64(hi) {
		d.fail(p, priorityNode, "priority %d is outside the %s band %d..%d; pick a priorityClass whose band holds it", v, w.PriorityClass, lo, hi)
		return
	}
	w.Priority = int(v)
}

// checkReplicaTotal bounds the replicas of all groups together by the
// bound of one group: a workload of a hundred groups of MaxReplicas is the
// same typo as one group of 10^8.
func (d *decoder) checkReplicaTotal(path string, n *yaml.Node, groups []*api.TaskGroup) {
	total := 0
	for _, g := range groups {
		total += g.Replicas // each at most MaxReplicas, and at most maxNodes groups: no overflow
	}
	if total > MaxReplicas {
		d.fail(path, n, "together the groups ask for %d replicas; a workload may have at most %d", total, MaxReplicas)
	}
}

func (d *decoder) groups(path string, n *yaml.Node) []*api.TaskGroup {
	var groups []*api.TaskGroup
	names := map[string]bool{}
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		g := d.group(p, v)
		if g == nil {
			return
		}
		if g.Name != "" && names[g.Name] {
			d.fail(join(p, "name"), v, "duplicate group name %q", g.Name)
		}
		names[g.Name] = true
		groups = append(groups, g)
	})
	if len(groups) == 0 && present(n) && deref(n).Kind == yaml.SequenceNode {
		d.missing(path, n, "at least one group is required")
	}
	return groups
}
