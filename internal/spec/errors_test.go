package spec

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// doc builds a document with the given spec body (indented two spaces).
func doc(spec string) string {
	return "apiVersion: strata.dev/v1\nkind: Workload\nmetadata:\n  name: w\nspec:\n" + spec
}

// oneTask builds a document with one group "g" holding one task whose extra
// fields (indented for a task) are appended.
func oneTask(taskFields string) string {
	return doc(`  groups:
    - name: g
      tasks:
        - name: t
` + taskFields)
}

const cmd = "          command: [/bin/true]\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name         string
		yaml         string
		wantErrPaths []string
		wantMessage  string // a substring of the first error, when it matters
	}{
		{name: "malformed yaml", yaml: "apiVersion: strata.dev/v1\nkind: [Workload\n", wantErrPaths: []string{""}, wantMessage: "line"},
		{name: "empty document", yaml: "", wantErrPaths: []string{""}, wantMessage: "empty document"},
		{name: "two documents", yaml: oneTask(cmd) + "---\nkind: Workload\n", wantErrPaths: []string{""}, wantMessage: "more than one YAML document"},
		{name: "not a mapping", yaml: "- a\n- b\n", wantErrPaths: []string{""}, wantMessage: "expected a mapping"},
		{name: "missing everything", yaml: "{}", wantErrPaths: []string{"apiVersion", "kind", "metadata.name", "spec"}},
		{name: "wrong apiVersion and kind", yaml: strings.Replace(strings.Replace(oneTask(cmd), "strata.dev/v1", "apps/v1", 1), "kind: Workload", "kind: Deployment", 1),
			wantErrPaths: []string{"apiVersion", "kind"}, wantMessage: `unsupported apiVersion "apps/v1"`},
		{name: "metadata name missing", yaml: strings.Replace(oneTask(cmd), "  name: w\n", "  labels: {team: x}\n", 1), wantErrPaths: []string{"metadata.name"}},
		{name: "bad workload name", yaml: strings.Replace(oneTask(cmd), "name: w\n", "name: Hello_World\n", 1), wantErrPaths: []string{"metadata.name"}, wantMessage: "invalid name"},
		{name: "name too long", yaml: strings.Replace(oneTask(cmd), "name: w\n", "name: "+strings.Repeat("a", 64)+"\n", 1), wantErrPaths: []string{"metadata.name"}, wantMessage: "longer than 63"},
		{name: "bad label key", yaml: strings.Replace(oneTask(cmd), "  name: w\n", "  name: w\n  labels: {\"-x\": y}\n", 1), wantErrPaths: []string{`metadata.labels["-x"]`}},
		{name: "unknown top-level field", yaml: oneTask(cmd) + "status: running\n", wantErrPaths: []string{"status"}, wantMessage: "unknown field"},
		{name: "unknown task field", yaml: oneTask("          comand: [/bin/true]\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].comand", "spec.groups[0].tasks[0].command"}, wantMessage: "unknown field"},
		{name: "unknown resources field", yaml: oneTask(cmd + "          resources: {cpus: 1}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.cpus"}},
		{name: "a misspelt field names the one meant", yaml: oneTask("          comand: [/bin/true]\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].comand", "spec.groups[0].tasks[0].command"}, wantMessage: `unknown field (did you mean "command"?)`},
		{name: "Nomad's count names replicas", yaml: strings.Replace(oneTask(cmd), "    - name: g\n", "    - name: g\n      count: 2\n", 1), wantErrPaths: []string{"spec.groups[0].count"}, wantMessage: `did you mean "replicas"?`},
		{name: "memory without a unit asks which was meant", yaml: oneTask(cmd + "          resources: {memory: 32}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.memory"}, wantMessage: "32 has no unit: write 32Mi for 32 MiB (how Nomad reads a bare number), or 32B for 32 bytes"},
		{name: "disk without a unit", yaml: oneTask(cmd + "          resources: {disk: 100}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.disk"}, wantMessage: "100 has no unit"},
		{name: "hundreds of bare cores ask for millicores", yaml: oneTask(cmd + "          resources: {cpu: 500}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.cpu"}, wantMessage: "500 would be 500 cores: write 500m"},
		{name: "duplicate field", yaml: oneTask(cmd + "          pidsLimit: 5\n          pidsLimit: 6\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].pidsLimit"}, wantMessage: "duplicate field"},
		{name: "exec task without command", yaml: oneTask(""), wantErrPaths: []string{"spec.groups[0].tasks[0].command"}, wantMessage: "required for driver exec"},
		{name: "empty command", yaml: oneTask("          command: []\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].command"}, wantMessage: "must not be empty"},
		{name: "command is a string", yaml: oneTask("          command: echo hi\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].command"}, wantMessage: "expected a list, got a string"},
		{name: "command element not a string", yaml: oneTask("          command: [sleep, 10]\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].command[1]"}},
		{name: "unknown driver", yaml: oneTask(cmd + "          driver: docker\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].driver"}},
		{name: "containerd without image", yaml: oneTask("          driver: containerd\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].image"}},
		{name: "wrong types", yaml: doc(`  priority: high
  groups:
    - name: g
      replicas: two
      tasks:
        - name: t
          command: [/bin/true]
          killTimeout: 5
          pidsLimit: "many"
          resources: {exclusiveCores: "yes", memory: [1]}
`), wantErrPaths: []string{"spec.priority", "spec.groups[0].replicas", "spec.groups[0].tasks[0].killTimeout", "spec.groups[0].tasks[0].pidsLimit",
			"spec.groups[0].tasks[0].resources.exclusiveCores", "spec.groups[0].tasks[0].resources.memory"}},
		{name: "negative and unparseable quantities", yaml: oneTask(cmd + "          resources: {cpu: -1, memory: lots, disk: -1Gi, bandwidth: 10GB, gpu: 1.5}\n"),
			wantErrPaths: []string{"spec.groups[0].tasks[0].resources.cpu", "spec.groups[0].tasks[0].resources.memory", "spec.groups[0].tasks[0].resources.disk",
				"spec.groups[0].tasks[0].resources.bandwidth", "spec.groups[0].tasks[0].resources.gpu"}, wantMessage: `negative quantity "-1"`},
		{name: "zero memory", yaml: oneTask(cmd + "          resources: {memory: 0}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.memory"}, wantMessage: "greater than zero"},
		{name: "exclusive cores need whole cores", yaml: oneTask(cmd + "          resources: {cpu: 1500m, exclusiveCores: true}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.cpu"}},
		{name: "gpu models without gpu", yaml: oneTask(cmd + "          resources: {gpuModels: [A100]}\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].resources.gpuModels"}},
		{name: "bad durations", yaml: oneTask(cmd+"          killTimeout: -1s\n") + "      restartPolicy: {delay: soon}\n",
			wantErrPaths: []string{"spec.groups[0].tasks[0].killTimeout", "spec.groups[0].restartPolicy.delay"}},
		{name: "pids limit zero", yaml: oneTask(cmd + "          pidsLimit: 0\n"), wantErrPaths: []string{"spec.groups[0].tasks[0].pidsLimit"}},
		{name: "bad env name", yaml: oneTask(cmd + "          env: {\"1X\": y}\n"), wantErrPaths: []string{`spec.groups[0].tasks[0].env["1X"]`}},
		{name: "duplicate task names", yaml: oneTask(cmd + "        - name: t\n" + cmd), wantErrPaths: []string{"spec.groups[0].tasks[1].name"}, wantMessage: `duplicate task name "t"`},
		{name: "duplicate group names", yaml: doc(`  groups:
    - name: g
      tasks: [{name: a, command: [x]}]
    - name: g
      tasks: [{name: a, command: [x]}]
`), wantErrPaths: []string{"spec.groups[1].name"}, wantMessage: `duplicate group name "g"`},
		{name: "bad group and task names", yaml: doc(`  groups:
    - name: Web
      tasks: [{name: "-t", command: [x]}]
`), wantErrPaths: []string{"spec.groups[0].name", "spec.groups[0].tasks[0].name"}},
		{name: "group and task names missing", yaml: doc(`  groups:
    - tasks: [{command: [x]}]
`), wantErrPaths: []string{"spec.groups[0].name", "spec.groups[0].tasks[0].name"}},
		{name: "no groups", yaml: doc("  priorityClass: batch\n"), wantErrPaths: []string{"spec.groups"}},
		{name: "empty groups", yaml: doc("  groups: []\n"), wantErrPaths: []string{"spec.groups"}},
		{name: "group without tasks", yaml: doc("  groups: [{name: g}]\n"), wantErrPaths: []string{"spec.groups[0].tasks"}},
		{name: "groups and containers", yaml: oneTask(cmd) + "  containers: [{name: c, image: i}]\n", wantErrPaths: []string{"spec.containers"}},
		{name: "negative replicas", yaml: strings.Replace(oneTask(cmd), "- name: g\n", "- name: g\n      replicas: -1\n", 1), wantErrPaths: []string{"spec.groups[0].replicas"}},
		{name: "unknown priority class", yaml: doc("  priorityClass: urgent\n  groups: [{name: g, tasks: [{name: t, command: [x]}]}]\n"), wantErrPaths: []string{"spec.priorityClass"}},
		{name: "priority outside band", yaml: doc("  priority: 1500\n  groups: [{name: g, tasks: [{name: t, command: [x]}]}]\n"), wantErrPaths: []string{"spec.priority"}, wantMessage: "outside the batch band 500..999"},
		{name: "unknown scheduling policy", yaml: doc("  schedulingPolicy: {type: roulette}\n  groups: [{name: g, tasks: [{name: t, command: [x]}]}]\n"), wantErrPaths: []string{"spec.schedulingPolicy.type"}},
		{name: "unknown restart mode", yaml: oneTask(cmd) + "      restartPolicy: {mode: sometimes}\n", wantErrPaths: []string{"spec.groups[0].restartPolicy.mode"}},
		{name: "restart policy contradictions", yaml: oneTask(cmd) + "      restartPolicy: {mode: never, attempts: 2}\n", wantErrPaths: []string{"spec.groups[0].restartPolicy.attempts"}},
		{name: "max delay below delay", yaml: oneTask(cmd) + "      restartPolicy: {delay: 10s, maxDelay: 1s, attempts: -1}\n",
			wantErrPaths: []string{"spec.groups[0].restartPolicy.attempts", "spec.groups[0].restartPolicy.maxDelay"}},
		{name: "bad placement rules", yaml: oneTask(cmd) + `      placement:
        require:
          - {key: rack, op: "==", values: [r1]}
          - {key: rack, op: "=", values: [r1, r2]}
          - {key: zone, weight: 10}
          - "rack="
          - {op: exists}
        prefer:
          - {key: zone, values: [z1], weight: 500}
          - {key: zone, op: exists, values: [z1]}
          - 42
        spread: [{key: rack, maxSkew: 0}]
`, wantErrPaths: []string{"spec.groups[0].placement.require[0].op", "spec.groups[0].placement.require[1].values", "spec.groups[0].placement.require[2].weight",
			"spec.groups[0].placement.require[3]", "spec.groups[0].placement.require[4].key", "spec.groups[0].placement.prefer[0].weight",
			"spec.groups[0].placement.prefer[1].values", "spec.groups[0].placement.prefer[2]", "spec.groups[0].placement.spread[0].maxSkew"}},
		{name: "bad seed constraints", yaml: doc(`  containers: [{name: c, command: [x]}]
  placementConstraints:
    rack: "prefer-"
    zone: [a, b]
    minBandwidthGbps: fast
`), wantErrPaths: []string{"spec.placementConstraints.rack", "spec.placementConstraints.zone", "spec.placementConstraints.minBandwidthGbps"}},
		{name: "bad gang", yaml: oneTask(cmd) + "      replicas: 4\n      gang: {minMember: 0, timeout: -5m, topology: building, size: 3}\n",
			wantErrPaths: []string{"spec.groups[0].gang.minMember", "spec.groups[0].gang.timeout", "spec.groups[0].gang.topology", "spec.groups[0].gang.size"}, wantMessage: "must be at least 1"},
		{name: "gang larger than its group", yaml: oneTask(cmd) + "      gang: {minMember: 5}\n      replicas: 4\n",
			wantErrPaths: []string{"spec.groups[0].gang.minMember"}, wantMessage: "must be at most replicas (4), got 5"},
		{name: "gang not a mapping", yaml: oneTask(cmd) + "      gang: true\n", wantErrPaths: []string{"spec.groups[0].gang"}},
		{name: "merge keys", yaml: oneTask(cmd + "          <<: {pidsLimit: 5}\n"), wantErrPaths: []string{`spec.groups[0].tasks[0]["<<"]`}},
		{name: "every problem at once", yaml: `apiVersion: strata.dev/v2
kind: Workload
metadata: {name: ok}
spec:
  groups:
    - name: a
      replicas: -3
      tasks:
        - name: t
          comand: [x]
          resources: {memory: -1Gi}
`, wantErrPaths: []string{"apiVersion", "spec.groups[0].replicas", "spec.groups[0].tasks[0].comand", "spec.groups[0].tasks[0].resources.memory", "spec.groups[0].tasks[0].command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want errors at %q; got %+v", tt.wantErrPaths, w)
			}
			if w != nil {
				t.Errorf("Parse returned a workload along with errors")
			}
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T, want *spec.Errors: %v", err, err)
			}
			if got := errs.Paths(); !slices.Equal(got, tt.wantErrPaths) {
				t.Fatalf("error paths = %q, want %q\n%v", got, tt.wantErrPaths, err)
			}
			if tt.wantMessage != "" && !strings.Contains(errs.List[0].Message, tt.wantMessage) {
				t.Errorf("first message = %q, want it to contain %q", errs.List[0].Message, tt.wantMessage)
			}
		})
	}
}

func TestErrorsFormat(t *testing.T) {
	_, err := Parse([]byte(oneTask("          comand: [x]\n          resources: {memory: -1Gi}\n")))
	want := "spec.groups[0].tasks[0].comand: unknown field (did you mean \"command\"?)\n" +
		"spec.groups[0].tasks[0].resources.memory: negative quantity \"-1Gi\"\n" +
		"spec.groups[0].tasks[0].command: required for driver exec: the program and its arguments, e.g. [\"/bin/sh\", \"-c\", \"echo hi\"]"
	if err == nil || err.Error() != want {
		t.Fatalf("Error() =\n%v\nwant\n%s", err, want)
	}
	var errs *Errors
	errors.As(err, &errs)
	if errs.List[0].Line != 10 || errs.List[1].Line != 11 {
		t.Errorf("lines = %d, %d; want 10, 11", errs.List[0].Line, errs.List[1].Line)
	}
	b, _ := json.Marshal(errs)
	if !strings.HasPrefix(string(b), `{"errors":[{"path":"spec.groups[0].tasks[0].comand","message":"unknown field (did you mean \"command\"?)","line":10}`) {
		t.Errorf("JSON = %s", b)
	}
}

func TestMalformedYAMLLine(t *testing.T) {
	_, err := Parse([]byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata:\n  name: x\n    bad: indent\n"))
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.List) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	if fe := errs.List[0]; fe.Line != 5 || !strings.Contains(fe.Message, "line 5") {
		t.Errorf("error = %+v, want line 5", fe)
	}
}

// A small document whose aliases expand to over 100k nodes must fail fast
// with one clear error instead of being walked.
func TestAliasBomb(t *testing.T) {
	command := "[" + strings.Repeat("a,", 20000) + "a]"
	yaml := doc("  groups:\n    - &g {name: g, tasks: [&t {name: t, command: " + command + "}, *t]}\n" +
		strings.Repeat("    - *g\n", 5))
	_, err := Parse([]byte(yaml))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("alias bomb: err = %v", err)
	}
	if !strings.Contains(err.Error(), "document too large") || len(errs.List) > 20 {
		t.Fatalf("alias bomb: got %d errors:\n%v", len(errs.List), err)
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("unknown" + strconv.Itoa(i) + ": 1\n")
	}
	_, err := Parse([]byte(b.String()))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("err = %v", err)
	}
	if n := len(errs.List); n != maxErrors+1 {
		t.Fatalf("got %d errors, want %d", n, maxErrors+1)
	}
	if last := errs.List[maxErrors]; !strings.Contains(last.Message, "too many problems") {
		t.Errorf("last error = %+v", last)
	}
}
