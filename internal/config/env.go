package config

import (
	"fmt"
	"strings"
)

// expandEnv replaces ${VAR} and ${VAR:-default} in a scalar value; "$$"
// yields one "$". A "$" followed by anything else is kept as is, so PHP-ish
// values such as "$foo" or a trailing "$" survive. As in the shell, ":-"
// uses the default when the variable is unset or empty. Defaults are
// literal text: they cannot contain "}" or another "${".
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated \"${\" in %q (write \"$$\" for a literal \"$\")", s)
		}
		expr := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("invalid variable reference \"${%s}\": expected ${NAME} or ${NAME:-default} with NAME of letters, digits and _", expr)
		}
		if hasDef && strings.Contains(def, "${") {
			return "", fmt.Errorf("nested \"${\" in the default of \"${%s}\" is not supported", expr)
		}
		v, ok := lookup(name)
		switch {
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("environment variable %s is not set (use ${%s:-default} to give a default)", name, name)
		}
		i += 2 + end + 1
	}
	return b.String(), nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
