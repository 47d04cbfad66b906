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
)

const (
	maxNameLen       = 63
	maxLabelKeyLen   = 253
	maxLabelValueLen = 63
)

// checkName returns a problem with a workload, group or task name, or "".
func checkName(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > maxNameLen:
		return fmt.Sprintf("name %q is longer than %d characters", s, maxNameLen)
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
		return fmt.Sprintf("label key %q is longer than %d characters", s, maxLabelKeyLen)
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
		return fmt.Sprintf("label value %q is longer than %d characters", s, maxLabelValueLen)
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
