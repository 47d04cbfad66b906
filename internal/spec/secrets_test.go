package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestUserAndSecretsParsed(t *testing.T) {
	wl, err := Parse([]byte(oneTask(cmd + `          user: app:staff
          network: isolated
          env:
            LOG_LEVEL: info
            DB_PASSWORD: {secret: hunter2}
          secrets:
            - name: tls.key
              value: "-----BEGIN KEY-----"
            - name: api-token
              value: tok
              env: API_TOKEN
`)))
	if err != nil {
		t.Fatal(err)
	}
	task := wl.Groups[0].Tasks[0]
	if task.User != "app:staff" || task.Network != NetworkIsolated {
		t.Errorf("user = %q, network = %q", task.User, task.Network)
	}
	if len(task.Env) != 1 || task.Env["LOG_LEVEL"] != "info" {
		t.Errorf("env = %v, want only LOG_LEVEL: a secret entry leaves env", task.Env)
	}
	want := []api.Secret{
		{Name: "DB_PASSWORD", Env: "DB_PASSWORD", Value: "hunter2"},
		{Name: "tls.key", Value: "-----BEGIN KEY-----"},
		{Name: "api-token", Env: "API_TOKEN", Value: "tok"},
	}
	var got []api.Secret
	for _, s := range task.Secrets {
		got = append(got, *s)
	}
	if !slices.Equal(got, want) {
		t.Errorf("secrets = %+v, want %+v", got, want)
	}
}

func TestUserAndSecretsErrors(t *testing.T) {
	const task = "spec.groups[0].tasks[0]"
	tests := []struct {
		name, fields string
		wantPaths    []string
		wantMessage  string
	}{
		{"user with a space", "user: a b", []string{task + ".user"}, "invalid user"},
		{"user empty", `user: ""`, []string{task + ".user"}, "must not be empty"},
		{"user uid out of range", "user: \"4294967295\"", []string{task + ".user"}, "out of range"},
		{"user three parts", "user: a:b:c", []string{task + ".user"}, "invalid user"},
		{"user not a string", "user: [root]", []string{task + ".user"}, "expected a string"},
		{"unknown network", "network: bridge", []string{task + ".network"}, "unknown network"},
		{"secret without value", "secrets: [{name: a}]", []string{task + ".secrets[0].value"}, "required"},
		{"secret without name", "secrets: [{value: a}]", []string{task + ".secrets[0].name"}, "required"},
		{"secret name is a path", "secrets: [{name: ../etc/passwd, value: x}]", []string{task + ".secrets[0].name"}, "invalid secret name"},
		{"secret unknown field", "secrets: [{name: a, value: x, sealed: y}]", []string{task + ".secrets[0].sealed"}, "unknown field"},
		{"secret bad env", "secrets: [{name: a, value: x, env: 1X}]", []string{task + ".secrets[0].env"}, "invalid environment variable name"},
		{"secret too big", "secrets: [{name: a, value: " + strings.Repeat("x", MaxSecretBytes+1) + "}]", []string{task + ".secrets[0].value"}, "more than 65536"},
		{"secret declared twice", "secrets: [{name: a, value: x}, {name: a, value: y}]", []string{task + ".secrets[1]"}, "declared twice"},
		{"secret env clashes with env", "env: {A: x}\n          secrets: [{name: a, value: x, env: A}]", []string{task + ".secrets[0]"}, "set twice"},
		{"env secret without value", "env: {A: {secret: }}", []string{task + `.env.A.secret`}, "required"},
		{"env secret unknown key", "env: {A: {value: x}}", []string{task + `.env.A.value`, task + `.env.A.secret`}, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd + "          " + tt.fields + "\n")))
			var se *Errors
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want field errors", err)
			}
			if !slices.Equal(se.Paths(), tt.wantPaths) {
				t.Errorf("paths %q, want %q (%v)", se.Paths(), tt.wantPaths, err)
			}
			if !strings.Contains(se.List[0].Message, tt.wantMessage) {
				t.Errorf("message %q, want it to contain %q", se.List[0].Message, tt.wantMessage)
			}
		})
	}
}
