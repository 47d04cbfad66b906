package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// healthDoc is a workload whose group gets the given ports, services and
// task checks (YAML fragments indented for their place).
func healthDoc(ports, services, checks string) string {
	doc := `apiVersion: strata.dev/v1
kind: Workload
metadata: {name: web}
spec:
  groups:
    - name: g
`
	if ports != "" {
		doc += "      ports:\n" + ports
	}
	if services != "" {
		doc += "      services:\n" + services
	}
	doc += `      tasks:
        - name: t
          command: ["/bin/true"]
`
	if checks != "" {
		doc += "          checks:\n" + checks
	}
	return doc
}

func TestHealthDefaults(t *testing.T) {
	w := mustParse(t, healthDoc(
		"        - {name: http}\n        - {name: admin-api, static: 9000}\n",
		"        - name: web\n          port: http\n          tags: [v1, blue]\n          labels: {team: web}\n          checks:\n            - {type: http, path: /ready}\n",
		"          - {type: http, port: http}\n          - {name: alive, type: tcp, port: admin-api, purpose: liveness}\n          - {type: exec, command: [/bin/true], interval: 1s, timeout: 500ms, initialDelay: 3s, successThreshold: 2, failureThreshold: 5}\n"))
	g := w.Groups[0]
	equal(t, "ports", g.Ports, []api.PortRequest{{Name: "http"}, {Name: "admin-api", Static: 9000}})
	def := api.Check{Purpose: api.CheckReadiness, Interval: 10 * time.Second, Timeout: 2 * time.Second, SuccessThreshold: 1, FailureThreshold: 3}
	httpCheck := def
	httpCheck.Name, httpCheck.Type, httpCheck.Port, httpCheck.Path = "http-0", api.CheckHTTP, "http", "/"
	tcpCheck := def
	tcpCheck.Name, tcpCheck.Type, tcpCheck.Port, tcpCheck.Purpose = "alive", api.CheckTCP, "admin-api", api.CheckLiveness
	execCheck := api.Check{Name: "exec-2", Type: api.CheckExec, Purpose: api.CheckReadiness, Command: []string{"/bin/true"},
		Interval: time.Second, Timeout: 500 * time.Millisecond, InitialDelay: 3 * time.Second, SuccessThreshold: 2, FailureThreshold: 5}
	equal(t, "task checks", g.Tasks[0].Checks, []api.Check{httpCheck, tcpCheck, execCheck})
	svcCheck := def
	svcCheck.Name, svcCheck.Type, svcCheck.Port, svcCheck.Path = "http-0", api.CheckHTTP, "http", "/ready"
	equal(t, "services", g.Services, []api.Service{{Name: "web", Port: "http", Tags: []string{"v1", "blue"},
		Labels: map[string]string{"team": "web"}, Checks: []api.Check{svcCheck}}})
	equal(t, "port env", PortEnv("admin-api"), "STRATA_PORT_ADMIN_API")
}

// TestHealthValidation: every bad check, port or service is refused with
// an error naming its field.
func TestHealthValidation(t *testing.T) {
	const port = "        - {name: http}\n"
	cases := []struct {
		name                   string
		ports, services, check string
		path, msg              string
	}{
		{"check without a type", port, "", "          - {port: http}\n", "checks[0].type", "required"},
		{"unknown type", port, "", "          - {type: grpc, port: http}\n", "checks[0].type", "unknown check type"},
		{"http check without a port", port, "", "          - {type: http}\n", "checks[0].port", "required for a http check"},
		{"tcp check on an unknown port", port, "", "          - {type: tcp, port: admin}\n", "checks[0].port", `unknown port "admin"`},
		{"check on a group without ports", "", "", "          - {type: tcp, port: admin}\n", "checks[0].port", "declares no ports"},
		{"exec check without a command", "", "", "          - {type: exec}\n", "checks[0].command", "required for an exec check"},
		{"exec check with a port", port, "", "          - {type: exec, command: [x], port: http}\n", "checks[0].port", "only for http and tcp"},
		{"path without a slash", port, "", "          - {type: http, port: http, path: ready}\n", "checks[0].path", "must start with /"},
		{"path on a tcp check", port, "", "          - {type: tcp, port: http, path: /x}\n", "checks[0].path", "only for http checks"},
		{"timeout longer than interval", port, "", "          - {type: tcp, port: http, interval: 1s, timeout: 2s}\n", "checks[0].timeout", "must not be longer than interval"},
		{"zero timeout", port, "", "          - {type: tcp, port: http, timeout: 0s}\n", "checks[0].timeout", "greater than zero"},
		{"interval too short", port, "", "          - {type: tcp, port: http, interval: 1ms, timeout: 1ms}\n", "checks[0].interval", "at least 100ms"},
		{"negative delay", port, "", "          - {type: tcp, port: http, initialDelay: -1s}\n", "checks[0].initialDelay", "negative duration"},
		{"zero threshold", port, "", "          - {type: tcp, port: http, failureThreshold: 0}\n", "checks[0].failureThreshold", "between 1 and 100"},
		{"unknown purpose", port, "", "          - {type: tcp, port: http, purpose: startup}\n", "checks[0].purpose", "unknown purpose"},
		{"duplicate check names", port, "", "          - {name: a, type: tcp, port: http}\n          - {name: a, type: tcp, port: http}\n", "checks[1].name", "duplicate check name"},
		{"unknown check field", port, "", "          - {type: tcp, port: http, host: x}\n", "checks[0].host", "unknown field"},
		{"port without a name", "        - {static: 80}\n", "", "", "ports[0].name", "required"},
		{"port out of range", "        - {name: http, static: 70000}\n", "", "", "ports[0].static", "between 1 and 65535"},
		{"port zero", "        - {name: http, static: 0}\n", "", "", "ports[0].static", "between 1 and 65535"},
		{"static port twice", "        - {name: a, static: 80}\n        - {name: b, static: 80}\n", "", "", "ports[1].static", "already asked for"},
		{"duplicate port names", "        - {name: a}\n        - {name: a}\n", "", "", "ports[1].name", "duplicate port name"},
		{"bad port name", "        - {name: HTTP}\n", "", "", "ports[0].name", "invalid name"},
		{"service without a port", port, "        - {name: web}\n", "", "services[0].port", "required"},
		{"service on an unknown port", port, "        - {name: web, port: grpc}\n", "", "services[0].port", `unknown port "grpc"`},
		{"service without a name", port, "        - {port: http}\n", "", "services[0].name", "required"},
		{"liveness on a service", port, "        - name: web\n          port: http\n          checks: [{type: tcp, purpose: liveness}]\n", "", "services[0].checks[0].purpose", "readiness checks"},
		{"bad tag", port, "        - {name: web, port: http, tags: [\"a b\"]}\n", "", "services[0].tags[0]", "invalid label value"},
		{"http check on an isolated task", port, "", "          - {type: http, port: http}\n", "checks[0].type", "cannot reach a task with network isolated"},
		{"ports on an isolated group", port, "", "", "groups[0].ports", "no task can listen"},
		{"duplicate services", port, "        - {name: web, port: http}\n        - {name: web, port: http}\n", "", "services[1].name", "duplicate service name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := healthDoc(tc.ports, tc.services, tc.check)
			if strings.Contains(tc.name, "isolated") {
				doc = strings.Replace(doc, "          command: [\"/bin/true\"]\n", "          command: [\"/bin/true\"]\n          network: isolated\n", 1)
			}
			_, err := Parse([]byte(doc))
			var se *Errors
			if !errors.As(err, &se) {
				t.Fatalf("Parse accepted it (err %v)", err)
			}
			for _, fe := range se.List {
				if strings.HasSuffix(fe.Path, tc.path) && strings.Contains(fe.Message, tc.msg) {
					return
				}
			}
			t.Fatalf("no error at ...%s containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}
