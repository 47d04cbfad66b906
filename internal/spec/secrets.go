package spec

import (
	"fmt"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// Task network modes: the node's network namespace, or one of the task's
// own with loopback only.
const (
	NetworkHost     = "host"
	NetworkIsolated = "isolated"
)

// Bounds on a task's secrets: a secret is a credential or a key, not data.
const (
	MaxSecretBytes  = 64 << 10
	MaxTaskSecrets  = 64
	maxUserPartLen  = 32
	maxUserIDNumber = 1<<32 - 2 // (uid_t)-1 means "no change" to the kernel
)

var (
	// secretName is a file name under $STRATA_SECRETS_DIR.
	secretName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	// userPart is a POSIX-portable user or group name, or a number.
	userPart = regexp.MustCompile(`^([a-z_][a-z0-9_-]*[$]?|[0-9]+)$`)
)

// checkUser returns the problem with a task's user ("name", "uid",
// "name:group", "uid:gid"), or "".
func checkUser(s string) string {
	if s == "" {
		return "must not be empty (omit it for the node's default, nobody)"
	}
	name, group, hasGroup := cutColon(s)
	parts := []string{name}
	if hasGroup {
		parts = append(parts, group)
	}
	for _, p := range parts {
		if len(p) > maxUserPartLen || !userPart.MatchString(p) {
			return fmt.Sprintf("invalid user %.64q: want a user name or uid, optionally followed by :group or :gid (e.g. app, 1000, app:staff, 1000:1000)", s)
		}
		if p[0] >= '0' && p[0] <= '9' {
			if n, err := strconv.ParseUint(p, 10, 64); err != nil || n > maxUserIDNumber {
				return fmt.Sprintf("id %.32q in user %.64q is out of range (at most %d)", p, s, uint64(maxUserIDNumber))
			}
		}
	}
	return ""
}

func cutColon(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// env decodes a task's environment: a value is text, or {secret: text}
// for an entry whose value is a secret (sealed by the server, redacted in
// every output, delivered to the task like any other variable).
func (d *decoder) env(path string, n *yaml.Node, t *api.Task) {
	d.fields(path, n, nil, func(key, p string, v *yaml.Node) bool {
		if problem := checkEnvName(key); problem != "" {
			d.fail(p, v, "%s", problem)
			return true
		}
		if rv := d.resolve(v); rv != nil && rv.Kind == yaml.MappingNode {
			var value *yaml.Node
			d.fields(p, v, envSecretKeys, func(k, pp string, vv *yaml.Node) bool {
				if k != "secret" {
					return false
				}
				value = vv
				return true
			})
			if !present(value) {
				d.missing(join(p, "secret"), v, "required: the secret value, e.g. {secret: s3cret}")
				return true
			}
			if s, ok := d.text(join(p, "secret"), value); ok && d.secretValue(join(p, "secret"), value, s) {
				t.Secrets = append(t.Secrets, &api.Secret{Name: key, Env: key, Value: s})
			}
			return true
		}
		s, ok := d.text(p, v)
		if !ok && !present(v) {
			ok = true // "KEY:" with nothing after it is an empty value
		}
		if ok {
			if t.Env == nil {
				t.Env = make(map[string]string)
			}
			t.Env[key] = s
		}
		return true
	})
}

// secrets decodes a task's secrets block.
func (d *decoder) secrets(path string, n *yaml.Node, t *api.Task) {
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		sec := &api.Secret{}
		var name, value *yaml.Node
		d.fields(p, v, secretKeys, func(key, pp string, vv *yaml.Node) bool {
			switch key {
			case "name":
				name = vv
				if s, ok := d.str(pp, vv); ok {
					if !secretName.MatchString(s) {
						d.fail(pp, vv, "invalid secret name %.64q: a file name of 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", s)
					}
					sec.Name = s
				}
			case "value":
				value = vv
				if s, ok := d.text(pp, vv); ok && d.secretValue(pp, vv, s) {
					sec.Value = s
				}
			case "env":
				if s, ok := d.str(pp, vv); ok {
					if problem := checkEnvName(s); problem != "" {
						d.fail(pp, vv, "%s", problem)
					}
					sec.Env = s
				}
			default:
				return false
			}
			return true
		})
		if !present(name) {
			d.missing(join(p, "name"), v, "required")
		}
		if !present(value) {
			d.missing(join(p, "value"), v, "required: the secret itself")
		}
		t.Secrets = append(t.Secrets, sec)
	})
}

// secretValue checks a secret's size.
func (d *decoder) secretValue(path string, n *yaml.Node, s string) bool {
	if len(s) > MaxSecretBytes {
		d.fail(path, n, "secret is %d bytes, more than %d", len(s), MaxSecretBytes)
		return false
	}
	return true
}

// checkSecrets checks what involves more than one secret: their number,
// unique names, and environment variables named once.
func (d *decoder) checkSecrets(path string, n *yaml.Node, t *api.Task) {
	if len(t.Secrets) > MaxTaskSecrets {
		d.fail(join(path, "secrets"), n, "%d secrets, more than %d", len(t.Secrets), MaxTaskSecrets)
	}
	names := map[string]bool{}
	envs := map[string]bool{}
	for i, sec := range t.Secrets {
		p := index(join(path, "secrets"), i)
		if sec.Name != "" && names[sec.Name] {
			d.fail(p, n, "secret %q is declared twice", sec.Name)
		}
		names[sec.Name] = true
		if sec.Env == "" {
			continue
		}
		if _, clash := t.Env[sec.Env]; clash || envs[sec.Env] {
			d.fail(p, n, "environment variable %q is set twice (env and secrets)", sec.Env)
		}
		envs[sec.Env] = true
	}
}
