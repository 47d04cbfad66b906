package spec

import (
	"fmt"
	"regexp"
)

var (
	// dnsLabel is RFC 1123: names end up in hostnames, cgroup paths and
	// URLs, so they are kept to the character set that is safe in all three.
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// labelKey allows camelCase (powerZone) and prefixes (strata.dev/team).
	labelKey   = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// identifier is the alphabet of node ids and names (hostnames) and of
	// allocation and evaluation ids: nothing that a path, a shell or a log
	// line could misread — no '/', no spaces, no control bytes.
	identifier = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

const (
	// MaxIDLen bounds an identifier: the longest DNS name.
	MaxIDLen         = 253
	maxNameLen       = 63
	maxLabelKeyLen   = 253
	maxLabelValueLen = 63
)

// CheckName returns the problem with a workload, group or task name (an
// RFC 1123 label), or "".
func CheckName(s string) string { return checkName(s) }

// CheckID returns the problem with an identifier — a node id or name, an
// allocation or evaluation id or id prefix — or "": 1 to 253 letters,
// digits, '.', '_' or '-', starting with a letter or digit. Every id that
// reaches a URL path, a data dir or a cgroup name passes it, so "../",
// NUL bytes and megabyte-long ids never do.
func CheckID(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > MaxIDLen:
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), MaxIDLen)
	case !identifier.MatchString(s):
		return fmt.Sprintf("invalid identifier %.64q: use letters, digits, '.', '_' and '-', starting with a letter or digit", s)
	}
	return ""
}

// CheckLabelKey returns the problem with a label key, or "".
func CheckLabelKey(s string) string { return checkLabelKey(s) }

// CheckLabelValue returns the problem with a label value (which may be
// empty), or "".
func CheckLabelValue(s string) string { return checkLabelValue(s, true) }

func checkName(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > maxNameLen:
		return fmt.Sprintf("name %.64q is longer than %d characters", s, maxNameLen)
	case !dnsLabel.MatchString(s):
		return fmt.Sprintf("invalid name %q: use lowercase letters, digits and '-', starting and ending with a letter or digit", s)
	}
	return ""
}

func checkLabelKey(s string) string {
	switch {
	case s == "":
		return "label key must not be empty"
	case len(s) > maxLabelKeyLen:
		return fmt.Sprintf("label key %.64q is longer than %d characters", s, maxLabelKeyLen)
	case !labelKey.MatchString(s):
		return fmt.Sprintf("invalid label key %q: use letters, digits, '-', '_', '.' and '/'", s)
	}
	return ""
}

// checkLabelValue allows the empty value only where allowEmpty says so:
// a workload label may be empty, a value a rule must match may not.
func checkLabelValue(s string, allowEmpty bool) string {
	switch {
	case s == "" && allowEmpty:
		return ""
	case s == "":
		return "value must not be empty"
	case len(s) > maxLabelValueLen:
		return fmt.Sprintf("label value %.64q is longer than %d characters", s, maxLabelValueLen)
	case !labelValue.MatchString(s):
		return fmt.Sprintf("invalid label value %q: use letters, digits, '-', '_' and '.'", s)
	}
	return ""
}

func checkEnvName(s string) string {
	if !envName.MatchString(s) {
		return fmt.Sprintf("invalid environment variable name %q", s)
	}
	return ""
}
