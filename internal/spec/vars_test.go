package spec

import (
	"strings"
	"testing"
)

func TestSubstitute(t *testing.T) {
	doc := "metadata: {name: web-${var.env}}\n" +
		"spec:\n  groups:\n    - replicas: ${var.replicas}\n" +
		"      command: [/bin/sh, -c, 'echo ${HOME} $PATH $${var.env}']\n"
	got, used, err := Substitute([]byte(doc), map[string]string{"env": "staging", "replicas": "3", "unused": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := "metadata: {name: web-staging}\n" +
		"spec:\n  groups:\n    - replicas: 3\n" +
		"      command: [/bin/sh, -c, 'echo ${HOME} $PATH ${var.env}']\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Join(used, ",") != "env,replicas" {
		t.Fatalf("used %q", used)
	}
	if out, _, err := Substitute([]byte("no variables here: ${HOME}\n"), nil); err != nil || string(out) != "no variables here: ${HOME}\n" {
		t.Fatalf("a file without variables: %q %v", out, err)
	}
}

func TestSubstituteUndefined(t *testing.T) {
	doc := "a: ${var.env}\nb: 1\nc: ${var.replcas} ${var.bad name}\n"
	_, _, err := Substitute([]byte(doc), map[string]string{"replicas": "3"})
	if err == nil {
		t.Fatal("undefined variables accepted")
	}
	for _, want := range []string{
		"line 1: ${var.env} is not defined: give --var env=VALUE or put env: in a --var-file",
		`line 3: ${var.replcas} is not defined: give --var replcas=VALUE or put replcas: in a --var-file (did you mean "replicas"?)`,
		`line 3: ${var.bad name}: invalid variable name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

func TestParseVarFile(t *testing.T) {
	vars, err := ParseVarFile([]byte("env: prod\nreplicas: 5\ndebug: false\n"))
	if err != nil || vars["env"] != "prod" || vars["replicas"] != "5" || vars["debug"] != "false" {
		t.Fatalf("%v %v", vars, err)
	}
	for _, bad := range []struct{ doc, want string }{
		{"- a\n", "expected a mapping"},
		{"env: [a]\n", "env: expected a single value"},
		{"env:\n", "env: no value"},
		{"bad name: x\n", "invalid variable name"},
	} {
		if _, err := ParseVarFile([]byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.doc, err, bad.want)
		}
	}
}
